"""Word splitting: pieces (pieces.py) cut into the fields a command receives, each field a `Word`
whose segments still point at where their text was written.

Unquoted text from an expansion is cut at blanks. An expansion that gave exactly one field is
shown where it is written (`$TP`); one that gave several (`$ARGS`) keeps each field where its
text was written, and records the expansion in the segment's `via`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell.interp.pieces import Expansion, FieldBreak, Piece, SegmentPiece, Splat
from megalint.shell.interp.state import MAX_FIELDS, Frame, Node, oversized, too_long
from megalint.shell.values import Segment, Unknown, Word, written_at
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

IFS = lazy_re.compile(r"[ \t\n]+")


def split(ev: Evaluator, pieces: list[Piece], node: Node, frame: Frame) -> list[Word]:
    """The fields `pieces` (the expansion of `node`) make, within the size limits."""
    words = _split(ev, pieces)
    if len(words) > MAX_FIELDS or any(oversized(w.segments) for w in words):
        span = frame.ps.span(node)
        if len(words) > MAX_FIELDS:
            return [Word((), Unknown(f"more than {MAX_FIELDS} words from one expansion (too long to follow)", span))]
        return [Word((Segment(None, span, (), too_long(span)),)) if oversized(w.segments) else w for w in words]
    return words


def fields_of(ev: Evaluator, segments: Sequence[Segment], span: Span) -> list[Word]:
    """The words a variable's value makes expanded unquoted (`$ARGS`), each where it is written."""
    eid = Expansion(span, False)
    return _split(ev, [SegmentPiece(seg, True, eid) for seg in segments])


def _split(ev: Evaluator, pieces: list[Piece]) -> list[Word]:
    for p in pieces:
        if not isinstance(p, SegmentPiece) or p.split or p.expansion is not None:
            break
    else:
        # Literal text only (a plain word, a quoted string): one field, as written.
        return [Word(tuple(p.segment for p in pieces if isinstance(p, SegmentPiece)))] if pieces else []
    fields: list[list[tuple[Segment, Expansion | None]]] = []
    cur: list[tuple[Segment, Expansion | None]] = []
    have = False
    splats: dict[int, Unknown] = {}
    for p in pieces:
        if isinstance(p, SegmentPiece):
            seg, eid = p.segment, p.expansion
            if not p.split or seg.text is None:
                cur.append((seg, eid))
                have = True
                continue
            for sub in _segment_parts(ev, seg, seg.text):
                if sub is None:
                    if have:
                        fields.append(cur)
                    cur, have = [], False
                else:
                    cur.append((sub, eid))
                    have = True
        elif isinstance(p, FieldBreak):
            if have:
                fields.append(cur)
            cur, have = [], False
        elif isinstance(p, Splat):
            if have:
                fields.append(cur)
            cur, have = [], False
            splats[len(fields)] = p.unknown
            fields.append([])
        else:  # quoted-empty
            have = True
    if have:
        fields.append(cur)
    # An expansion that produced exactly one field is shown where it is written (`$TP`);
    # one that produced several keeps each field where its text was written.
    # (Expansions are compared by identity: the pieces of one expansion share one object, and
    # hashing the span inside it costs more than the rest of the split.)
    count: dict[int, int] = {}
    for f in fields:
        seen = None
        for _, e in f:
            if e is not None:
                k = id(e)
                if seen is None:
                    seen = {k}
                elif k in seen:
                    continue
                else:
                    seen.add(k)
                count[k] = count.get(k, 0) + 1
    words = []
    for fi, f in enumerate(fields):
        if fi in splats:
            words.append(Word((), splats[fi]))
            continue
        segs = []
        for seg, eid in f:
            if eid is not None:
                eid_span, is_array = eid.span, eid.array
                if count.get(id(eid)) == 1 and not is_array:
                    seg = shown_at(ev, seg, eid_span)
                elif eid_span not in seg.via:
                    seg = passed_through(ev, seg, eid_span)
            segs.append(seg)
        words.append(Word(tuple(segs)))
    return words


def shown_at(ev: Evaluator, seg: Segment, span: Span) -> Segment:
    """The segment shown where the expansion at `span` is written, remembering its own place.
    Made once per segment and place: paths that share a value then share what it becomes, and
    the caches by segment (`parts_of`, where a segment was written) serve them all."""
    key = (id(seg), span, True)
    held = ev.restated.get(key)
    if held is not None and held[0] is seg:
        return held[1]
    origin = ((seg.site,) if seg.site is not None and seg.site != span else ()) + seg.origin
    new = Segment(seg.text, span, origin, seg.unknown, seg.via, seg.assumed)
    ev.restated[key] = (seg, new)
    return new


def passed_through(ev: Evaluator, seg: Segment, span: Span) -> Segment:
    """The segment as it is after passing through the expansion at `span` (its `via`), made once."""
    key = (id(seg), span, False)
    held = ev.restated.get(key)
    if held is not None and held[0] is seg:
        return held[1]
    new = Segment(seg.text, seg.site, seg.origin, seg.unknown, seg.via + (span,), seg.assumed)
    ev.restated[key] = (seg, new)
    return new


def _segment_parts(ev: Evaluator, seg: Segment, text: str) -> list[Segment | None]:
    """A splittable segment (its text `text`) cut at blanks: sub-segments, None where a field
    ends. The same segment (a value shared by several paths, or read again) is cut once."""
    got = ev.parts_of.get(id(seg))
    if got is not None and got[0] is seg:
        return got[1]
    parts: list[Segment | None] = []
    pos = 0
    for m in IFS.finditer(text):
        if m.start() > pos:
            parts.append(_sub_segment(ev, seg, text, pos, m.start()))
        parts.append(None)
        pos = m.end()
    if pos < len(text):
        parts.append(_sub_segment(ev, seg, text, pos, len(text)))
    ev.parts_of[id(seg)] = (seg, parts)
    return parts


def _sub_segment(ev: Evaluator, seg: Segment, text: str, a: int, b: int) -> Segment:
    if a == 0 and b == len(text):
        return seg
    site, before, via = sub_place(ev, seg, text, a, b)
    return Segment(text[a:b], site, before, seg.unknown, via, seg.assumed)


def sub_place(
    ev: Evaluator, seg: Segment, text: str, a: int, b: int
) -> tuple[Span | None, tuple[Span, ...], tuple[Span, ...]]:
    """Where text[a:b] of a segment (its text `text`) is written, where it came from before, and
    the expansions it went through (the segment's `via`). Exact when the segment's text is written
    as it is at its site or at a place of its origin: a string read again through `$CMD` is cut
    where its characters were typed, and `$CMD` joins its `via`. Else the segment's own places."""
    if a == 0 and b == len(text):
        return seg.site, seg.origin, seg.via
    found = written_at(seg, text, ev.sources)
    if found is None:
        return seg.site, seg.origin, seg.via
    place, before, passed = found
    via = seg.via + tuple(p for p in passed if p not in seg.via)
    return ev.sources[place.path].span(place.start + a, place.start + b), before, via
