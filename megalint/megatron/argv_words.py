"""Words of an argv, cut and joined with their provenance kept: the flag and the value of a
`--flag=value` word, the span of a flag with its values."""

from __future__ import annotations

import re

from megalint.shell.values import Segment, Word, literal_word
from megalint.source import Span


def join_spans(a: Span, b: Span) -> Span:
    if a.path == b.path and a.start <= b.end:
        return Span(a.path, a.start_line, a.start_col, b.end_line, b.end_col, a.start, b.end)
    return a


def _slice_site(seg: Segment, lo: int, hi: int) -> Span | None:
    """The site of characters lo:hi of a known segment, exact when the segment's site holds
    exactly its text on one line (a literal), else the whole site."""
    site = seg.site
    if site is None or seg.text is None:
        return site
    if (
        site.start_line == site.end_line
        and site.end - site.start == len(seg.text)
        and site.end_col - site.start_col == len(seg.text)
    ):
        return Span(
            site.path,
            site.start_line,
            site.start_col + lo,
            site.end_line,
            site.start_col + hi,
            site.start + lo,
            site.start + hi,
        )
    return site


def cut_word(word: Word, lo: int, hi: int | None = None) -> Word:
    """Characters lo:hi of a word as a Word of its own, keeping provenance. Offsets count in
    the word's known leading text; hi=None keeps everything after lo, unknown parts included."""
    out: list[Segment] = []
    pos = 0
    past_unknown = False
    for seg in word.segments:
        if seg.text is None or past_unknown:
            # Offsets stop meaning anything after an unknown part; only an open end keeps it.
            past_unknown = True
            if hi is None:
                out.append(seg)
            continue
        start, end = pos, pos + len(seg.text)
        pos = end
        a = max(lo, start)
        b = end if hi is None else min(hi, end)
        if a >= b:
            continue
        part = seg.text[a - start : b - start]
        out.append(Segment(part, _slice_site(seg, a - start, b - start), seg.origin, None, seg.via))
    return Word(tuple(out))


def known_prefix(word: Word) -> str:
    parts = []
    for seg in word.segments:
        if seg.text is None:
            break
        parts.append(seg.text)
    return "".join(parts)


def literal_argv(text: str, path: str = "<argv>") -> list[Word]:
    """Words from a whitespace-separated string, each with its exact span; for tests and the
    `megalint bind` debugging command. No quoting rules: a shell parser does that."""
    words = []
    for m in re.finditer(r"\S+", text):
        span = Span(path, 1, m.start() + 1, 1, m.end() + 1, m.start(), m.end())
        words.append(literal_word(m.group(0), span))
    return words
