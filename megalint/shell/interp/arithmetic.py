"""Arithmetic: `$(( ))`, `(( ))`, `let`, and the arithmetic inside `${A[i]}` and `${X:off:len}`.

The expression is evaluated by arith.py; here its `$X` references are expanded first, its
variables looked up on the path (a value that is itself an expression is evaluated in turn), and
its assignments (`i++`, `X=1`) made on the path. A division by zero and the like is what bash
would fail on: a finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell import arith
from megalint.shell.facts import ShellFindingKind
from megalint.shell.interp import expansion, fast_paths, variables
from megalint.shell.interp.pieces import Expansion, Piece, SegmentPiece
from megalint.shell.interp.state import Frame, Node, State, Var, scalar_text
from megalint.shell.parse import parse_text
from megalint.shell.values import Segment, Unknown
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

_NAME = lazy_re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_NESTING = 8  # values that are expressions, evaluated in turn (bash: "expression recursion level exceeded")


def arith_statement(ev: Evaluator, node: Node, st: State, frame: Frame, text: str) -> list[State]:
    """`(( … ))` as a statement: its assignments happen, its outcome is not needed."""
    try:
        arith_eval(ev, text, st, frame, frame.ps.span(node))
    except (arith.ArithUnknown, arith.ArithError):
        pass
    return [st]


def arith_expansion(
    ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None
) -> list[Piece]:
    """`$(( … ))` (and the old `$[ … ]`): its value, with where the numbers in it came from."""
    ps = frame.ps
    span = expansion.expansion_span(node, frame)
    raw = ps.text(node).lstrip()
    inner = raw[3:-2] if raw.startswith("$((") else raw[2:-1]
    origins: list[Span] = []
    assumed: list[str] = []
    try:
        value = arith_eval(ev, inner, st, frame, span, origins, assumed)
    except arith.ArithUnknown as exc:
        return [SegmentPiece(Segment(None, span, tuple(origins), Unknown(exc.reason, span)), False, eid)]
    except arith.ArithError as exc:
        ev.finding(ShellFindingKind.ARITHMETIC_ERROR, span, f"bash would fail here: {exc}")
        return [SegmentPiece(Segment.unknown_at(f"bash fails on `{raw}`: {exc}", span), False, eid)]
    return [
        SegmentPiece(
            Segment(str(value), span, tuple(origins), None, (), assumed[0] if assumed else None),
            not quoted,
            eid or Expansion(span, False),
        )
    ]


def arith_eval(
    ev: Evaluator,
    text: str,
    st: State,
    frame: Frame,
    span: Span | None,
    origins: list[Span] | None = None,
    assumed: list[str] | None = None,
) -> int:
    """Evaluate bash arithmetic; `$X`, `${X}` and `$(( ))` inside are expanded first. Where the
    values read came from is added to `origins`, the defaults they were assumed from to `assumed`."""
    if "$" in text or "`" in text:
        text = _expand_text(ev, text, st, frame, span, origins, assumed)

    nesting = [0]

    def lookup(name: str) -> int:
        return _value_of(ev, name, st, frame, span, origins, assumed, nesting)

    def assign(name: str, value: int) -> None:
        ev.impure = True
        old = st.vars.get(name)
        st.vars[name] = Var(scalar=(Segment(str(value), span),), exported=bool(old and old.exported), site=span)

    return arith.evaluate(text, lookup, assign)


def _value_of(
    ev: Evaluator,
    name: str,
    st: State,
    frame: Frame,
    span: Span | None,
    origins: list[Span] | None,
    assumed: list[str] | None,
    nesting: list[int],
) -> int:
    """The integer value of `name` in arithmetic (arith_eval). Not a closure that calls itself:
    one would hold itself in its own cell, a reference cycle that keeps the whole run (and the
    path it reads) alive until the cycle collector walks it."""
    seen = set()
    cur = name
    while True:
        segs, unknown, _ = variables.var_scalar(ev, cur, st, frame, span)
        if unknown is not None:
            raise arith.ArithUnknown(unknown.reason)
        if segs is None:
            raise arith.ArithUnknown(f"${cur} is not known")
        if origins is not None:
            for s in segs:
                if s.site is not None:
                    origins.append(s.site)
                origins.extend(s.origin)
                if assumed is not None and s.assumed:
                    assumed.append(s.assumed)
        val = scalar_text(segs)
        if val is None:
            bad = next((s.unknown for s in segs if s.text is None), None)
            raise arith.ArithUnknown(bad.reason if bad else f"${cur} is not known")
        val = val.strip()
        if not val:
            return 0
        try:
            return arith.parse_int(val)
        except ValueError as exc:
            if _NAME.fullmatch(val) and val not in seen:
                seen.add(val)
                cur = val
                continue
            # A value that is itself an expression (`X='Y+1'`) is evaluated in turn;
            # bash stops self-reference with "expression recursion level exceeded".
            if nesting[0] >= _MAX_NESTING:
                raise arith.ArithUnknown(f"${cur} refers to itself through arithmetic") from exc
            nesting[0] += 1
            try:
                return arith.evaluate(
                    val, lambda inner: _value_of(ev, inner, st, frame, span, origins, assumed, nesting)
                )
            finally:
                nesting[0] -= 1


def _expand_text(
    ev: Evaluator,
    text: str,
    st: State,
    frame: Frame,
    span: Span | None,
    origins: list[Span] | None,
    assumed: list[str] | None,
) -> str:
    """The expression with its `$` parts replaced by their values."""
    if fast_paths.ENABLED:
        got = fast_paths.arith_refs(ev, text, st, origins, assumed)
        if got is not None:
            return got
    # Parse the expression's `$` parts with tree-sitter's word rules: wrap it as a string.
    key = (frame.ps.source.path, text)
    sub = ev.arith_parsed.get(key)
    if sub is None:
        sub = ev.arith_parsed[key] = parse_text(frame.ps.source.path, '"' + text.replace('"', " ") + '"')
    string_node = sub.root.named_children[0] if sub.root.named_children else None
    while string_node is not None and string_node.type not in ("string",):
        string_node = string_node.named_children[0] if string_node.named_children else None
    if string_node is None:
        raise arith.ArithUnknown(f"`{text}` could not be read")
    pieces = expansion.pieces(ev, string_node, st, Frame(sub, frame.wrappers, frame.depth), True, None)
    out: list[str] = []
    arith_texts([p.segment for p in pieces if isinstance(p, SegmentPiece)], origins, assumed, out)
    return "".join(out)


def arith_texts(segs: Sequence[Segment], origins: list[Span] | None, assumed: list[str] | None, out: list[str]) -> None:
    """The texts of the segments an expansion gives inside `$(( ))`, with where they came from;
    an unknown one makes the expression unknown."""
    for seg in segs:
        if seg.text is None:
            raise arith.ArithUnknown(seg.unknown.reason if seg.unknown else "unknown value")
        if origins is not None:
            origins.extend(seg.origin)
        if assumed is not None and seg.assumed:
            assumed.append(seg.assumed)
        out.append(seg.text)
