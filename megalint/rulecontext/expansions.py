"""The expansions on a launch line that explain a binding problem: the unquoted `${A[@]}` that
cut an array element into the stray words (`A=(--tokenizer-type "GPT2 BPETokenizer")`), or the
one variable expanded twice that repeats a flag (`$ARGS $ARGS`).

A problem's words remember the expansions they were shown at (`Segment.via`) and the
interpreter records the array elements an unquoted expansion cut (`ScriptFacts.split_elements`);
this module reads both. The problem's entry names them (`expansions`, `expanded`, and for a cut
element `split_element`, `split_fields`) and the rule places labels at them (`expansion(N)`).
"""

from __future__ import annotations

from dataclasses import dataclass

from megalint.megatron.bound import Problem, ProblemKind
from megalint.shell.facts import ScriptFacts, SplitElement
from megalint.shell.values import Word
from megalint.source import Span


@dataclass(frozen=True)
class Cause:
    """The expansions a problem's words came through, first written first, and what they did."""

    expansions: tuple[Span, ...]
    written: str  # the first expansion as written: `${ARR[@]}`, `$ARGS`
    split: SplitElement | None = None  # the element cut, when an unquoted array expansion cut it
    # A piece of a quoted phrase in a scalar's value (`'GPT2` of TOK="--x 'GPT2 BPE'" and `$TOK`):
    # bash does not read quotes in an expanded value again, it cuts the value at its blanks.
    quoted_piece: str | None = None


def _encloses(outer: Span, inner: Span) -> bool:
    return outer.path == inner.path and outer.start <= inner.start and inner.end <= outer.end


def _split_of(words: tuple[Word, ...], facts: ScriptFacts) -> SplitElement | None:
    if not facts.split_elements:
        return None
    for w in words:
        for seg in w.segments:
            if seg.site is None:
                continue
            for el in facts.split_elements:
                if el.expansion in seg.via and _encloses(el.element, seg.site):
                    return el
    return None


def _cut_quote(text: str) -> bool:
    """Whether `text` begins or ends with a quote character it does not close: one end of a
    quoted phrase that was cut at a blank inside it."""
    return any(text.count(q) % 2 == 1 and (text[0] == q or text[-1] == q) for q in "'\"")


def _quotes_split(words: tuple[Word, ...]) -> tuple[Span, str] | None:
    """The expansion that gave a word a quote character of a variable's value as a character,
    and the word: quotes written inside a value are not read again when it is expanded."""
    for w in words:
        for seg in w.segments:
            if seg.via and seg.text and _cut_quote(seg.text):
                return seg.via[0], seg.text
    return None


def _repeated_by(words: tuple[Word, ...]) -> tuple[Span, Span] | None:
    """The two expansions of one variable that gave the first and the last occurrence of a
    repeated flag given twice: the flag's text is written once, and only the expansion it came
    through differs."""
    if len(words) != 2:
        return None
    first, last = words
    if first.span is None or last.span is None:
        return None
    if first.span != last.span:
        # A variable holding the flag alone is shown where it is expanded (`$SW $SW`).
        return (first.span, last.span) if first.origins and first.origins == last.origins else None
    a = [v for v in first.via if v not in last.via]
    b = [v for v in last.via if v not in first.via]
    if not a or not b:
        return None
    return a[0], b[0]


def cause(problem: Problem, facts: ScriptFacts) -> Cause | None:
    """What a problem's words show about the expansions that made it, or None."""
    if problem.kind is ProblemKind.REPEATED_FLAG:
        pair = _repeated_by(problem.words)
        if pair is None:
            return None
        return Cause(pair, _written(pair[0], facts))
    split = _split_of(problem.words, facts)
    if split is None:
        quoted = _quotes_split(problem.words)
        if quoted is None:
            return None
        return Cause((quoted[0],), _written(quoted[0], facts), quoted_piece=quoted[1])
    return Cause((split.expansion,), _written(split.expansion, facts), split)


def _written(span: Span, facts: ScriptFacts) -> str:
    src = facts.sources.get(span.path)
    return src.text[span.start : span.end] if src is not None else "the expansion"


def cause_keys(c: Cause) -> dict[str, object]:
    """The keys a problem's entry gets from its cause (see problems.py)."""
    out: dict[str, object] = {
        "expansions": [f"{s.start_line}:{s.start_col}" for s in c.expansions],
        "expanded": c.written,
    }
    if c.split is not None:
        out["split_element"] = c.split.text
        out["split_fields"] = c.split.fields
    if c.quoted_piece is not None:
        out["quoted_piece"] = c.quoted_piece
        out["variable"] = c.written.strip("${}")
    return out
