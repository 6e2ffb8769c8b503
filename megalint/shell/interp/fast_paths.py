"""Fast paths: what the general code gives for the common simple cases, without building pieces.

Launch scripts are mostly plain words, `$X`, `${X:-default}`, `"… $X …"` strings and `$((…))`
sums. Each function here gives exactly what expansion.py, splitting.py and assignments.py give
for those, or None to leave the case to them. tests/shell/test_fast_paths.py turns them off
(`ENABLED = False`) and compares everything the interpreter reports.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell.interp import arithmetic, splitting, variables
from megalint.shell.interp.pieces import SegmentPiece
from megalint.shell.interp.reparse import MappedSource
from megalint.shell.interp.state import (
    MAX_FIELDS,
    MAX_VALUE_CHARS,
    MAX_VALUE_SEGMENTS,
    UNKNOWN_PREFIX,
    UNSOURCED,
    Frame,
    Node,
    Scalar,
    State,
    Var,
    oversized,
    resite,
    scalar_text,
)
from megalint.shell.interp.syntax import NOT_PLAIN, effective_start, is_whole_expansion
from megalint.shell.parse import ParsedScript
from megalint.shell.values import Segment, Word, default_assumption, written_at
from megalint.source import SourceFile, Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

ENABLED = True
PLAIN_MAX = 4_096  # longer plain words take the general path (it checks the size limits)
# `$X`, `$1`, `${X}`: a reference whose value variables.var_scalar gives
_VALUE_REF = lazy_re.compile(rb"\$(?:([A-Za-z_][A-Za-z0-9_]*|[0-9])|\{([A-Za-z_][A-Za-z0-9_]*)\})\Z")
# `$` in arithmetic: a plain reference (groups 1, 2), or anything else (no group).
_ARITH_REF = lazy_re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\}|)")


# ---------------------------------------------------------------------- words


def plain_word(node: Node, ps: ParsedScript) -> list[Word] | None:
    """A word with nothing to expand, escape or split (`--num-layers`, `pretrain_gpt.py`):
    itself, where it is written. What the general path gives, without building pieces."""
    raw = node.text
    if raw is None or len(raw) > PLAIN_MAX or NOT_PLAIN.search(raw):
        return None
    source = ps.source
    a = source.char_offset(node.start_byte)
    if source.__class__ is SourceFile:
        return [Word((Segment(raw.decode(), source.span(a, a + len(raw))),))]
    if isinstance(source, MappedSource):
        # In a command string: one segment when the word comes from one place (as expansion._lits cuts it).
        word = source.placed_word(a, a + len(raw), raw.decode())
        if word is not None:
            return [word]
    return None


def scalar_word(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[Word] | None:
    """`$ARGS`, `$1` or `${TP}` unquoted: split into words as splitting.split splits the value
    var_scalar gives, without the general pieces. None for anything else."""
    raw = node.text
    m = _VALUE_REF.match(raw) if raw is not None else None
    if m is None:
        return None
    span = frame.ps.span_of(node.start_byte, node.end_byte)
    segs, unknown, _ = variables.var_scalar(ev, (m.group(1) or m.group(2)).decode(), st, frame, span)
    if unknown is not None:
        return [Word((Segment(None, span, (), unknown),))]
    if segs is None or len(segs) > MAX_VALUE_SEGMENTS:
        return None
    total = 0
    unknowns = False
    for seg in segs:
        if seg.text is None:
            unknowns = True
        else:
            total += len(seg.text)
    if total > MAX_VALUE_CHARS:
        return None
    # Cut at blanks as splitting cuts a segment; each piece is (segment, its text, start, end).
    # An unknown part is never cut (its text is None): it joins the field it is in.
    fields: list[list[tuple[Segment, str | None, int, int]]] = []
    cur: list[tuple[Segment, str | None, int, int]] = []
    for seg in segs:
        text = seg.text
        if text is None:
            cur.append((seg, None, 0, 0))
            continue
        for cut in _blank_cuts(text):
            if cut is None:
                if cur:
                    fields.append(cur)
                    cur = []
            else:
                cur.append((seg, text, cut[0], cut[1]))
    if cur:
        fields.append(cur)
    if len(fields) > MAX_FIELDS:
        return None
    if len(fields) == 1:
        if unknowns:
            return None
        # One word: shown where the expansion is written, tracing back to the value.
        out = []
        for seg, text, a, b in fields[0]:
            assert text is not None
            site, before, via = splitting.sub_place(ev, seg, text, a, b)
            origin = ((site,) if site is not None and site != span else ()) + before
            out.append(Segment(text[a:b], span, origin, seg.unknown, via, seg.assumed))
        return [Word(tuple(out))]
    # Several: each stays where its text is written, through this expansion. What a segment's
    # parts become is kept for the run (by the segment and the expansion's place): paths that
    # share a value share its words' segments, and so what is worked out from them later.
    words = []
    cut_of = ev.cut_of
    sources = len(ev.sources)
    # This expansion's entry of each segment, found once per segment (most hold many fields).
    entries: dict[int, tuple[Segment, int, Callable[[int, int], Segment], dict[tuple[int, int], Segment]]] = {}
    for f in fields:
        out = []
        for seg, text, a, b in f:
            if text is None:
                out.append(seg if span in seg.via else splitting.passed_through(ev, seg, span))
                continue
            held = entries.get(id(seg))
            if held is None:
                key = (id(seg), span)
                held = cut_of.get(key)
                if held is None or held[0] is not seg or held[1] != sources:
                    held = cut_of[key] = (seg, sources, _cutter(ev, seg, text, span), {})
                entries[id(seg)] = held
            made = held[3].get((a, b))
            if made is None:
                made = held[3][a, b] = held[2](a, b)
            out.append(made)
        words.append(Word(tuple(out)))
    return words


def _blank_cuts(text: str) -> tuple[tuple[int, int] | None, ...]:
    """Where `splitting.IFS` cuts a text: its runs between blanks, (start, end), and None for
    each stretch of blanks. The same texts are split on every path that expands them: those of
    a launch's size are remembered (a value may be 64 KiB: the longest are not kept)."""
    return _remembered_cuts(text) if len(text) <= _CUTS_KEPT_CHARS else _cuts(text)


_CUTS_KEPT_CHARS = 16_384


def _cuts(text: str) -> tuple[tuple[int, int] | None, ...]:
    cuts: list[tuple[int, int] | None] = []
    pos = 0
    for blank in splitting.IFS.finditer(text):
        a = blank.start()
        if a > pos:
            cuts.append((pos, a))
        cuts.append(None)
        pos = blank.end()
    if pos < len(text):
        cuts.append((pos, len(text)))
    return tuple(cuts)


_remembered_cuts = functools.lru_cache(maxsize=2_048)(_cuts)


def _cutter(ev: Evaluator, seg: Segment, text: str, span: Span) -> Callable[[int, int], Segment]:
    """What text[a:b] of a segment becomes as a field's part when an expansion at `span` cut it:
    where it is written, as it is, when a place holds the segment's text; else the segment's places."""
    found = written_at(seg, text, ev.sources)
    shown = seg.via
    via = shown if span in shown else (*shown, span)
    if found is None:
        return lambda a, b: Segment(text[a:b], seg.site, seg.origin, seg.unknown, via, seg.assumed)
    place, before, passed = found
    # Most segments were shown at no expansion before this one (an empty `via`).
    cut_via = (*passed, span) if not shown else shown + tuple(p for p in (*passed, span) if p not in shown)
    at, base = ev.sources[place.path].span, place.start

    def cut(a: int, b: int) -> Segment:
        if a == 0 and b == len(text):
            return Segment(text, seg.site, seg.origin, seg.unknown, via, seg.assumed)
        return Segment(text[a:b], at(base + a, base + b), before, seg.unknown, cut_via, seg.assumed)

    return cut


def string_segments(ev: Evaluator, value_node: Node, st: State, frame: Frame) -> Scalar | None:
    """`"--tp $TP \\<newline> --pp ${PP}"`: literal text, line continuations, plain `$X`,
    `${X}` and `${X:-word}`, valued as expansion._dq_string and expand_scalar value them. None
    for anything else (other escapes, a `\\` before blanks, other expansions)."""
    ps = frame.ps
    data = ps.parse_text
    source = ps.source
    parts: list[tuple[int, int] | tuple[Node, int]] = []  # (literal start, end) in bytes, or (expansion, start)
    pos = value_node.start_byte + 1
    for c in value_node.children:
        if not c.is_named:
            continue
        t = c.type
        if t == "string_content":
            continue
        if t != "simple_expansion" and t != "expansion":
            return None
        cstart = effective_start(c, data)
        if cstart > pos:
            parts.append((pos, cstart))
        parts.append((c, cstart))
        pos = c.end_byte
    end = value_node.end_byte - 1
    if end > pos:
        parts.append((pos, end))
    out: list[Segment] = []
    for a, b in parts:
        if isinstance(a, int):
            raw = data[a:b].decode("utf-8", "replace")
            start = source.char_offset(a)
            if "\\" not in raw:
                out.append(Segment(raw, source.span(start, start + len(raw))))
                continue
            # Only line continuations: `\\<newline>` joins the lines and is dropped.
            runs = raw.split("\\\n")
            if any("\\" in run for run in runs):
                return None
            at = start
            for run in runs:
                if run:
                    out.append(Segment(run, source.span(at, at + len(run))))
                at += len(run) + 2
            continue
        got = _ref_segments(ev, a, b, st, frame)
        if got is None:
            return None
        out.extend(got)
    if oversized(out):
        return None
    return tuple(out)


# ---------------------------------------------------------------------- assignments


def assignment(ev: Evaluator, node: Node, st: State, frame: Frame) -> str | None:
    """`NAME=value` where the value has a fast path (`${X:-1}`, `$((…))`, a plain "…"
    string): what the general path gives (assignments.assign, expand_scalar, resite), without
    its pieces. None for anything else."""
    if node.child_count != 3 or frame.ps.source.__class__ is not SourceFile:
        return None
    name_node, eq, value_node = node.children
    if eq.type != "=" or name_node.type != "variable_name":
        return None
    kind = value_node.type
    valuer: Callable[[Evaluator, Node, State, Frame], Scalar | None]
    if kind == "expansion" or kind == "simple_expansion":
        valuer = _ref_value
    elif kind == "arithmetic_expansion":
        valuer = _arith_value
    elif kind == "string":
        valuer = _string_value
    else:
        return None
    raw_name = name_node.text
    if raw_name is None:
        return None
    name = raw_name.decode()
    old = ev.get(st, name)
    if old is not None and old.array is not None:
        return None
    value = valuer(ev, value_node, st, frame)
    if value is None:
        return None
    st.vars[name] = ev.shared(Var(scalar=value, exported=bool(old and old.exported), site=frame.ps.span(node)))
    return name


def _ref_value(ev: Evaluator, node: Node, st: State, frame: Frame) -> Scalar | None:
    """`$X`, `${X}`, `$1` or `${X:-word}` as the whole value."""
    out = _ref_segments(ev, node, node.start_byte, st, frame)
    return None if out is None or oversized(out) else tuple(out)


def _arith_value(ev: Evaluator, node: Node, st: State, frame: Frame) -> Scalar:
    """`$((WORLD_SIZE / TP))`: the one segment arithmetic.arith_expansion gives, placed as
    resite places it."""
    piece = arithmetic.arith_expansion(ev, node, st, frame, True, None)[0]
    assert isinstance(piece, SegmentPiece)  # an arithmetic expansion is one piece of text
    seg = piece.segment
    span = frame.ps.span(node)
    origin = ((seg.site,) if seg.site is not None and seg.site != span else ()) + seg.origin
    return (Segment(seg.text, span, origin, seg.unknown, seg.via, seg.assumed),)


def _string_value(ev: Evaluator, value_node: Node, st: State, frame: Frame) -> Scalar | None:
    """`"…"` as a whole value: its segments, placed as resite places a lone expansion."""
    out = string_segments(ev, value_node, st, frame)
    if out is not None and is_whole_expansion(value_node):
        return resite(out, frame.ps.span(value_node))
    return out


def _ref_segments(ev: Evaluator, node: Node, start: int, st: State, frame: Frame) -> list[Segment] | None:
    """The expansion `node` (written from byte `start`: inside "…" its node may begin with
    the blank before it) when it is `$X`, `${X}`, `$1` or `${X:-word}`: its segments as
    expand_scalar shows them, at the expansion. None for any other expansion."""
    span = frame.ps.source.span_bytes(start, node.end_byte)
    m = _VALUE_REF.match(frame.ps.parse_text, start, node.end_byte)
    if m is None:
        if node.type != "expansion" or start != node.start_byte:
            return None
        got = _default_segments(ev, node, span, st, frame)
        return None if got is None else list(got)
    segs, unknown, _ = variables.var_scalar(ev, (m.group(1) or m.group(2)).decode(), st, frame, span)
    if unknown is not None:
        return [Segment(None, span, (), unknown)]
    return [
        seg
        if seg.site == span
        else Segment(
            seg.text,
            span,
            ((seg.site,) if seg.site is not None else ()) + seg.origin,
            seg.unknown,
            seg.via,
            seg.assumed,
        )
        for seg in segs or ()
    ]


def _default_segments(ev: Evaluator, node: Node, span: Span, st: State, frame: Frame) -> Scalar | None:
    """The value of `${X:-word}`, `${X-word}` or `${X:-}` (a plain word), each segment
    shown at `span` (where the expansion is written) as expand_scalar shows it. None for
    another shape, or when X is unknown or an array: the general path takes those."""
    parts = node.children
    operand: Node | None
    op_raw = b""
    if len(parts) == 5:
        operand = parts[3]
        if operand.type not in ("word", "number") or operand.text is None:
            return None
        op_raw = operand.text
        if len(op_raw) > PLAIN_MAX or NOT_PLAIN.search(op_raw):
            return None
    elif len(parts) == 4:
        operand = None
    else:
        return None
    target, op = parts[1], parts[2].type
    if target.type != "variable_name" or op not in (":-", "-") or target.text is None:
        return None
    ps = frame.ps
    inner = target.text.decode()
    if inner.startswith(UNKNOWN_PREFIX):
        return None
    var = ev.get(st, inner)
    assumed = None
    segs: Scalar = ()
    if var is None:
        # Not set here: empty if the script sets it elsewhere, else an input with a default.
        if not variables.is_internal(ev, inner, frame, span):
            ev.get(st, UNSOURCED)
            assumed = default_assumption(inner, op_raw.decode())
        elif variables.sets_after(ev, inner, frame, span):
            assumed = default_assumption(inner, op_raw.decode())
        use_default = True
    elif var.unknown is not None or var.array is not None:
        return None
    else:
        segs = var.scalar or ()
        use_default = op == ":-" and scalar_text(segs) == ""
    if use_default:
        if operand is None:
            # An input with an empty default is a slot the environment fills (parameters.py).
            return () if assumed is None else None
        a = ps.source.char_offset(operand.start_byte)
        return (Segment(op_raw.decode(), span, (ps.source.span(a, a + len(op_raw)),), None, (), assumed),)
    if oversized(segs):
        return None
    return tuple(
        Segment(
            seg.text,
            span,
            ((seg.site,) if seg.site is not None and seg.site != span else ()) + seg.origin,
            seg.unknown,
            seg.via,
            seg.assumed,
        )
        for seg in segs
    )


# ---------------------------------------------------------------------- arithmetic


def arith_refs(
    ev: Evaluator, text: str, st: State, origins: list[Span] | None, assumed: list[str] | None
) -> str | None:
    """`$GPUS*$NNODES`: each `$X`/`${X}` of a variable the script has set to text, replaced
    by it, as the general path (a parse of the expression as a string) gives. None when
    there is anything else to expand or escape, or a variable is unset, unknown or an array."""
    if "`" in text or "\\" in text or '"' in text or "$(" in text:
        return None
    out: list[str] = []
    pos = 0
    for m in _ARITH_REF.finditer(text):
        name = m.group(1) or m.group(2)
        if name is None or name.startswith(UNKNOWN_PREFIX):
            return None  # `$` not followed by a plain name: the general path knows
        var = ev.get(st, name)
        if var is None or var.unknown is not None or var.array is not None:
            return None
        out.append(text[pos : m.start()])
        arithmetic.arith_texts(var.scalar or (), origins, assumed, out)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)
