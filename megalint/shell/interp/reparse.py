"""Re-reading a command string as shell (`eval "$CMD"`, `bash -c "…"`, a here-document script)
so that every word of it still points at where its characters were written.

A string written in one piece is parsed in place: a copy of its file with everything else
blanked, so nodes keep their real lines and columns. A string assembled from several places
(`eval "$LAUNCHER $ARGS"`) gets a `MappedSource`: offsets are those of the assembled text, spans
point back to each part's place.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell.interp.splitting import IFS
from megalint.shell.interp.state import UNKNOWN_PREFIX, Frame
from megalint.shell.parse import ParsedScript, parse_padded, parse_text
from megalint.shell.values import Segment, Unknown, Word, written_at
from megalint.source import SourceFile, Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

_BLANK = lazy_re.compile(rb"[^\n]")


class MappedSource(SourceFile):
    """The text of a command string assembled from several places (`eval "$LAUNCHER $CMD"`):
    offsets are those of the assembled text, spans point back to where each part was written."""

    def __init__(
        self,
        text: str,
        segs: Sequence[Segment],
        anchor: Span,
        sources: Mapping[str, SourceFile],
        placed: dict[int, tuple[Segment, int, Placement]] | None = None,
        words: dict[tuple[int, int, int], tuple[Segment, int, Word]] | None = None,
    ):
        super().__init__(anchor.path, text)
        self.anchor = anchor
        # The words read from one part (by its segment and where in it), kept by the run with
        # `placed`: the same words written on each path are then one object (see plain_word).
        self._words = words
        self._segs = segs
        # (start, end, where it was written, whether exactly there, where it came from before)
        pieces: list[tuple[int, int, Span | None, bool, tuple[Span, ...]]] = []
        starts: list[int] = []
        pos = 0
        for seg in segs:
            part = seg.text
            end = pos + len(part) if part else pos
            site, exact, rest = _kept_placement(seg, sources, placed)
            pieces.append((pos, end, site, exact, rest))
            starts.append(pos)
            pos = end
        self._pieces = pieces
        self._sources = sources
        self._piece_starts = starts

    def _index(self, offset: int, end: bool) -> int | None:
        i = bisect.bisect_right(self._piece_starts, offset - 1 if end else offset) - 1
        while 0 <= i < len(self._pieces):
            start, stop = self._pieces[i][0], self._pieces[i][1]
            if start <= offset < stop or (end and start < offset <= stop):
                return i
            if start > offset:
                return None
            i += 1
        return None

    def _at(self, offset: int, end: bool) -> tuple[int, Span | None, bool]:
        i = self._index(offset, end)
        if i is None:
            return 0, None, False
        start, _stop, site, exact, _ = self._pieces[i]
        return start, site, exact

    def cuts(self, a: int, b: int) -> list[tuple[int, int]]:
        """[a, b) cut where the characters come from different places."""
        out = []
        i = self._index(a, False)
        while i is not None and i < len(self._pieces):
            start, stop = self._pieces[i][0], self._pieces[i][1]
            if start >= b:
                break
            x, y = max(a, start), min(b, stop)
            if x < y:
                out.append((x, y))
            i += 1
        return out or [(a, b)]

    def placed_word(self, a: int, b: int, text: str) -> Word | None:
        """The word `text` at [a, b) as one segment where its characters were written, when they
        come from one place, else None. Made once for the run per part and place in it: its
        span and origin depend on the part alone."""
        i = self._index(a, False)
        if i is None or b > self._pieces[i][1]:
            return None
        start, _stop, site, exact, origin = self._pieces[i]
        return part_word(
            self._segs[i], (site, exact, origin), a - start, b - start, text, self.anchor, self._sources, self._words
        )

    def signature(self, start_byte: int, end_byte: int) -> tuple[object, ...] | None:
        """What the text at bytes [start_byte, end_byte) is made of: each part's segment and
        where in it, with what places them (the anchor, the sources then). Equal for the same
        text written alike in another string, wherever it stands there."""
        return self.signature_at(self.char_offset(start_byte), self.char_offset(end_byte))

    def signature_at(self, a: int, b: int) -> tuple[object, ...] | None:
        """`signature` of the characters [a, b)."""
        i = self._index(a, False)
        if i is None:
            return None
        parts = []
        pieces, segs = self._pieces, self._segs
        while i < len(pieces):
            start, stop = pieces[i][0], pieces[i][1]
            if start >= b:
                break
            if start < stop:
                parts.append((segs[i], max(a, start) - start, min(b, stop) - start))
            i += 1
        return (self.anchor, len(self._sources), tuple(parts))

    def origin(self, a: int, b: int) -> tuple[Span, ...]:
        """Where the characters [a, b) came from before they were written where `span` says."""
        i = self._index(a, False)
        if i is None:
            return ()
        start, stop, _site, _exact, rest = self._pieces[i]
        return rest if b <= stop else ()

    def span(self, a: int, b: int) -> Span:
        s0, site_a, exact_a = self._at(a, False)
        s1, site_b, exact_b = self._at(b, True)
        return joined_span((site_a, exact_a, a - s0), (site_b, exact_b, b - s1), self.anchor, self._sources)

    def span_bytes(self, start_byte: int, end_byte: int) -> Span:
        return self.span(self.char_offset(start_byte), self.char_offset(end_byte))


Placement = tuple["Span | None", bool, tuple[Span, ...]]  # where written, whether exactly there, from where before


def joined_span(
    first: tuple[Span | None, bool, int],
    last: tuple[Span | None, bool, int],
    anchor: Span,
    sources: Mapping[str, SourceFile],
) -> Span:
    """Where the characters of a command string from a place in one part to a place in another
    were written: each end given by its part's site, whether exactly there, and how far into the
    part it is (the first end's start, the last end's end)."""
    site_a, exact_a, into_a = first
    site_b, exact_b, into_b = last
    if site_a is None or site_b is None:
        return site_a or site_b or anchor
    src_a = sources.get(site_a.path)
    start = site_a.start + into_a if exact_a else site_a.start
    end = site_b.start + into_b if exact_b else site_b.end
    if site_a.path == site_b.path and src_a is not None and start <= end:
        return src_a.span(start, end)
    return site_a


def part_word(
    seg: Segment,
    placement: Placement,
    a: int,
    b: int,
    text: str,
    anchor: Span,
    sources: Mapping[str, SourceFile],
    words: dict[tuple[int, int, int], tuple[Segment, int, Word]] | None,
) -> Word:
    """The word `text`, the characters [a, b) of one part of a command string placed at
    `placement`, as one segment where they were written (MappedSource.placed_word). Kept in
    `words` by the part and the place in it: its span and origin depend on the part alone."""
    site, exact, origin = placement
    # A part placed nowhere is shown at the whole string (its anchor), which is that string's own.
    kept = words if site is not None else None
    if kept is not None:
        held = kept_part_word(seg, a, b, kept, len(sources))
        if held is not None:
            return held
    word = Word((Segment(text, joined_span((site, exact, a), (site, exact, b), anchor, sources), origin),))
    if kept is not None:
        kept[(id(seg), a, b)] = (seg, len(sources), word)
    return word


def kept_part_word(
    seg: Segment, a: int, b: int, words: dict[tuple[int, int, int], tuple[Segment, int, Word]], count: int
) -> Word | None:
    """The word `part_word` made of the characters [a, b) of `seg` while `count` files were read,
    when it kept one (only a part placed somewhere keeps its words)."""
    held = words.get((id(seg), a, b))
    return held[2] if held is not None and held[0] is seg and held[1] == count else None


def _placement(seg: Segment, sources: Mapping[str, SourceFile]) -> Placement:
    # A value expanded inside the string was re-sited to its `$X`. A run of several words
    # (`"$CMD --tp 3"` read again through `$CMD`) is placed where its characters were typed,
    # however many expansions it went through, so each word read from it points at its own
    # text; one word (`$GPUS_PER_NODE`) stays at the `$X` that gave it.
    text = seg.text or ""
    found = written_at(seg, text, sources, None if IFS.search(text) else 1)
    if found is not None:
        return found[0], True, tuple(found[1])
    return (seg.origin[0] if seg.origin else seg.site), False, tuple(seg.origin[1:])


def reparse(ev: Evaluator, word: Word, frame: Frame, source: MappedSource | None = None) -> ParsedScript | None:
    """Parse a command string as shell; positions map back when it is one literal run.
    The same string on another path (or in a loop) gets the same tree, and so shares the
    expansions remembered on it. `source`: its MappedSource, when made already."""
    if word.splat is not None:
        return None
    key = (frame.ps.source.path, word.partial_text)
    seen = ev.reparsed.setdefault(key, [])
    for segs, ps in seen:
        if segs == word.segments:
            return ps
    ev.check_reads(word.partial_text)
    parsed = _parse(ev, word, frame, source)
    seen.append((word.segments, parsed))
    return parsed


def _placeholder(ev: Evaluator, seg: Segment) -> Segment:
    """The text standing for an unknown part of a command string: a variable holding its Unknown."""
    unknown = seg.unknown or Unknown("unknown value", seg.site)
    name = ev.unknown_names.get(unknown)
    if name is None:
        name = ev.unknown_names[unknown] = f"{UNKNOWN_PREFIX}{len(ev.unknown_tokens)}"
        ev.unknown_tokens[name] = unknown
    return Segment("${" + name + "}", seg.site)


def with_placeholders(ev: Evaluator, word: Word) -> Word:
    """The command string with each unknown part a variable that holds its Unknown, so that it
    can still be read: `--rdzv_endpoint $MASTER_ADDR:6000` stays one unknown word."""
    if word.text is not None:
        return word
    return Word(tuple([seg if seg.text is not None else placeholder_of(ev, seg) for seg in word.segments]))


def placeholder_of(ev: Evaluator, seg: Segment) -> Segment:
    """The placeholder of an unknown segment of a command string (`with_placeholders`)."""
    # One placeholder object per unknown segment: the strings read on each path share most of
    # their unknown parts, and so where each was written.
    held = ev.placeholder_of.get(id(seg))
    if held is None or held[0] is not seg:
        held = ev.placeholder_of[id(seg)] = (seg, _placeholder(ev, seg))
    return held[1]


def placement_of(ev: Evaluator, seg: Segment) -> Placement:
    """Where a part of a command string was written, as MappedSource places it (and keeps it)."""
    return _kept_placement(seg, ev.sources, ev.placed)


def _kept_placement(
    seg: Segment,
    sources: Mapping[str, SourceFile],
    placed: dict[int, tuple[Segment, int, Placement]] | None,
) -> Placement:
    """`_placement`, kept by the run in `placed` (by the segment's id, while no file was added to
    `sources`): the strings an `eval` reads on each path share most of their segments."""
    count = len(sources)
    held = placed.get(id(seg)) if placed is not None else None
    if held is not None and held[0] is seg and held[1] == count:
        return held[2]
    found = _placement(seg, sources)
    if placed is not None:
        placed[id(seg)] = (seg, count, found)
    return found


def in_place(ev: Evaluator, word: Word) -> SourceFile | None:
    """The file of a command string (placeholders in) that is one part with the characters where
    it was written: it is then read in place, in a copy of that file. None for any other string."""
    segs = word.segments
    if len(segs) != 1 or segs[0].site is None:
        return None
    site, text = segs[0].site, word.text or ""
    if len(text) != site.end - site.start:
        return None
    src = ev.sources.get(site.path)
    return src if src is not None and src.text[site.start : site.end] == text else None


def mapped(ev: Evaluator, word: Word, anchor: Span) -> MappedSource:
    """The source of a command string (placeholders in) assembled from several places."""
    return MappedSource(word.text or "", word.segments, anchor, ev.sources, ev.placed, ev.placed_words)


def _parse(ev: Evaluator, word: Word, frame: Frame, source: MappedSource | None) -> ParsedScript:
    word = with_placeholders(ev, word)
    text = word.text or ""
    segs = word.segments
    src = in_place(ev, word)
    if src is not None:
        # Same characters in place: parse a copy of the file where everything else is blank,
        # so every node keeps its real line and column (and byte offset).
        origin_span = segs[0].site
        assert origin_span is not None
        prefix = (
            src.data[: len(src.text[: origin_span.start].encode("utf-8"))]
            if not src._ascii
            else src.data[: origin_span.start]
        )
        padded = _BLANK.sub(b" ", prefix) + text.encode("utf-8")
        return parse_padded(src, padded)
    # Built from several pieces: each character maps back to where it was written.
    anchor = word.span
    if anchor is not None:
        return parse_assembled(ev, word, anchor, source)
    return parse_text(frame.ps.source.path, text)


def parse_assembled(ev: Evaluator, word: Word, anchor: Span, source: MappedSource | None = None) -> ParsedScript:
    """A command string (placeholders in, not in place) parsed with its MappedSource: `source`,
    or one made for `anchor`."""
    ps = parse_text(anchor.path, word.text or "")
    ps.source = source if source is not None else mapped(ev, word, anchor)
    ps.spans.clear()  # spans are kept by the script: none may come from the text's first source
    return ps
