"""Parameter expansion: `$X`, `$1`, `$@`, `$#`, and every form of `${…}`: `${X}`, `${#X}`,
`${!X}`, `${A[i]}`, `${A[@]}`, and the operators `${X:-d}`, `${X:=d}`, `${X:+a}`, `${X:?}`,
`${X#p}`, `${X%p}`, `${X/a/b}`, `${X^^}`, `${X:off:len}`.

A variable the script never sets is an input: `${X:-d}` then gives the default, marked as
assumed ("the default X=d; the environment may set it"): rules use it, and a finding that rests
on it says so. Glob matching for the pattern operators is patterns.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell import arith
from megalint.shell.facts import SplitElement
from megalint.shell.interp import arithmetic, expansion, variables
from megalint.shell.interp.patterns import replace_pattern, strip_pattern
from megalint.shell.interp.pieces import FIELD_BREAK, QUOTED_EMPTY, Expansion, Piece, SegmentPiece, Splat
from megalint.shell.interp.splitting import IFS
from megalint.shell.interp.state import (
    MAX_VALUE_CHARS,
    Frame,
    Node,
    Scalar,
    State,
    Var,
    array_values,
    origins_of,
    scalar_text,
)
from megalint.shell.values import Segment, Unknown, default_assumption
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

_NAME = lazy_re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLACEHOLDER = lazy_re.compile(r"<[A-Za-z_][^<>\n]*>")


def simple_expansion(
    ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None
) -> list[Piece]:
    """`$X`, `$1`, `$@`, `$#`, `$?` …"""
    ps = frame.ps
    span = expansion.expansion_span(node, frame)
    name = ps.text(node).lstrip()[1:]
    my_eid = eid or Expansion(span, False)
    if name in ("@", "*"):
        return _positional_all(ev, name, st, span, quoted, eid)
    if name == "#":
        return [_argument_count(ev, st, span, my_eid)]
    if name in ("?", "$", "!", "-"):
        return [SegmentPiece(Segment.unknown_at(f"${name} is only known at run time", span), False, my_eid)]
    segs, unknown, _ = variables.var_scalar(ev, name, st, frame, span)
    if unknown is not None:
        return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
    return [SegmentPiece(s, not quoted, my_eid) for s in segs or ()]


def _argument_count(ev: Evaluator, st: State, span: Span, eid: Expansion) -> Piece:
    """`$#`, `${#@}`."""
    positional = ev.positional(st)
    if positional is None:
        return SegmentPiece(Segment.unknown_at("the number of arguments given to the script", span), False, eid)
    return SegmentPiece(Segment(str(len(positional)), span), False, eid)


def _positional_all(
    ev: Evaluator, name: str, st: State, span: Span, quoted: bool, eid: Expansion | None
) -> list[Piece]:
    """`$@`, `$*`, `"$@"`, `"$*"`."""
    my_eid = eid or Expansion(span, True)
    positional = ev.positional(st)
    if positional is None:
        return [Splat(Unknown('the arguments given to the script ("$@")', span))]
    out: list[Piece] = []
    for i, p in enumerate(positional):
        if i:
            out.append(
                FIELD_BREAK
                if (quoted and name == "@") or not quoted
                else SegmentPiece(Segment(" ", span), False, my_eid)
            )
        if not p and quoted:
            out.append(QUOTED_EMPTY)
        out.extend(SegmentPiece(s, not quoted, my_eid) for s in p)
    return out


def brace_expansion(
    ev: Evaluator, node: Node, st: State, frame: Frame, quoted: bool, eid: Expansion | None
) -> list[Piece]:
    """`${…}` in all its forms."""
    ps = frame.ps
    span = expansion.expansion_span(node, frame)
    inner = [c for c in node.children if c.type not in ("${", "}")]
    if not inner:
        return [SegmentPiece(Segment.unknown_at("an empty ${}", span), False, eid)]
    length = False
    indirect = False
    if inner[0].type == "#" and len(inner) > 1:
        length = True
        inner = inner[1:]
    elif inner[0].type == "!" and len(inner) > 1:
        indirect = True
        inner = inner[1:]
    target = inner[0]
    rest = inner[1:]
    spread = None  # "@" or "*" for `${A[@]}`, `${A[*]}`
    index = None
    if target.type == "subscript":
        base = target.child_by_field_name("name")
        idx = target.child_by_field_name("index")
        name = ps.text(base) if base is not None else ps.text(target)
        idx_text = ps.text(idx) if idx is not None else "0"
        if idx_text in ("@", "*"):
            spread = idx_text
        else:
            index = _index(ev, name, idx, st, frame)
    elif target.type in ("variable_name", "special_variable_name", "word", "number"):
        name = ps.text(target)
    else:
        return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` is not understood", span), False, eid)]
    my_eid = eid or Expansion(span, spread is not None and quoted)
    if indirect:
        segs, unknown, _ = variables.var_scalar(ev, name, st, frame, span)
        ref = scalar_text(segs) if unknown is None else None
        if ref is None or not _NAME.fullmatch(ref):
            return [SegmentPiece(Segment.unknown_at(f"indirect expansion `{ps.text(node)}`", span), False, my_eid)]
        name = ref
    # The value, as a list of elements (arrays) or one scalar.
    if name in ("@", "*"):
        if length:
            return [_argument_count(ev, st, span, my_eid)]
        if not rest:
            return _positional_all(ev, name, st, span, quoted, eid)
        return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` on the script's arguments", span), False, my_eid)]
    var = ev.get(st, name)
    if spread is not None:
        return _whole_array(ev, node, name, var, spread, length, bool(rest), span, frame, quoted, my_eid)
    if index is not None or target.type == "subscript":
        segs, unknown, is_set = _element(ev, node, name, var, index, span, frame)
    else:
        segs, unknown, is_set = variables.var_scalar(ev, name, st, frame, span)
    if length:
        if unknown is not None:
            return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
        t = scalar_text(segs)
        if t is None or segs is None:
            return [SegmentPiece(Segment.unknown_at(f"the length of `{name}`", span), False, my_eid)]
        return [SegmentPiece(Segment(str(len(t)), span, origins_of(segs)), False, my_eid)]
    if not rest:
        if unknown is not None:
            return [SegmentPiece(Segment(None, span, (), unknown), False, my_eid)]
        return [SegmentPiece(s, not quoted, my_eid) for s in segs or ()]
    op = rest[0]
    op_text = ps.text(op) if not op.is_named else None
    if op_text is None:
        return [SegmentPiece(Segment.unknown_at(f"`{ps.text(node)}` is not understood", span), False, my_eid)]
    return _operator(ev, op_text, rest[1:], node, name, segs, unknown, is_set, st, frame, quoted, my_eid, span)


def _index(ev: Evaluator, name: str, idx: Node | None, st: State, frame: Frame) -> str | None:
    """The index of `${A[i]}`: as written for an associative array, else its arithmetic value."""
    index = scalar_text(expansion.expand_scalar(ev, idx, st, frame))
    ivar = ev.get(st, name) if index is not None else None
    if index is not None and ivar is not None and ivar.array is not None and not index.lstrip("-").isdigit():
        pass
    elif index is not None:
        try:
            index = str(arithmetic.arith_eval(ev, index, st.fork(), frame, None)) if not index.isdigit() else index
        except (arith.ArithUnknown, arith.ArithError):
            pass
    return index


def _whole_array(
    ev: Evaluator,
    node: Node,
    name: str,
    var: Var | None,
    spread: str,
    length: bool,
    operated: bool,
    span: Span,
    frame: Frame,
    quoted: bool,
    eid: Expansion,
) -> list[Piece]:
    """`${A[@]}`, `${A[*]}`, `${#A[@]}`."""
    elements: list[Scalar]
    if var is not None and var.array is not None:
        elements = array_values(var.array)
    elif var is not None and var.unknown is not None:
        if length:
            return [SegmentPiece(Segment(None, span, (), var.unknown), False, eid)]
        # An unknown array is any number of words, not one.
        return [Splat(Unknown(var.unknown.reason, span))]
    elif var is not None and var.scalar is not None:
        elements = [var.scalar]
    elif var is None:
        return [SegmentPiece(Segment(None, span, (), variables.env_unknown(name, span)), False, eid)]
    else:
        elements = []
    if length:
        return [SegmentPiece(Segment(str(len(elements)), span), False, eid)]
    if operated:
        return [
            SegmentPiece(
                Segment.unknown_at(f"`{frame.ps.text(node)}`: operators on whole arrays are not evaluated", span),
                False,
                eid,
            )
        ]
    out: list[Piece] = []
    for i, el in enumerate(elements):
        if i:
            if quoted and spread == "@":
                out.append(FIELD_BREAK)
            else:
                out.append(SegmentPiece(Segment(" ", None), not quoted, eid))
        if not el and quoted:
            out.append(QUOTED_EMPTY)
        elif not quoted:
            _note_split(ev, el, span)
        out.extend(SegmentPiece(s, not quoted, eid) for s in el)
    return out


def _note_split(ev: Evaluator, element: Scalar, span: Span) -> None:
    """Record an element that the unquoted expansion at `span` cuts into several words, so that a
    finding on one of them can name the expansion that cut it."""
    text = scalar_text(element)
    sites = [s.site for s in element if s.site is not None]
    if text is None or not sites or sites[0].path != sites[-1].path:
        return
    fields = sum(1 for f in IFS.split(text) if f)
    if fields > 1:
        first, last = sites[0], sites[-1]
        place = Span(first.path, first.start_line, first.start_col, last.end_line, last.end_col, first.start, last.end)
        ev.split_elements[SplitElement(span, place, text, fields)] = None


def _element(
    ev: Evaluator, node: Node, name: str, var: Var | None, index: str | None, span: Span, frame: Frame
) -> tuple[Scalar | None, Unknown | None, bool]:
    """(segments, unknown, is_set) of `${A[i]}`, as variables.var_scalar gives them of `$X`."""
    if var is not None and var.array is not None:
        found = var.array.get(index) if index is not None else None
        if index is None:
            return (), Unknown(f"`{frame.ps.text(node)}`: the index is not known", span), False
        return found or (), None, found is not None
    if var is not None and var.unknown is not None:
        return None, var.unknown, True
    if var is not None and index == "0":
        return var.scalar or (), None, True
    if var is None and name == "BASH_SOURCE" and index == "0":
        return variables.script_place(ev, name, frame, span), None, True
    if var is None:
        return None, variables.env_unknown(name, span), False
    return (), None, False


def _operator(
    ev: Evaluator,
    op: str,
    operands: list[Node],
    node: Node,
    name: str,
    segs: Scalar | None,
    unknown: Unknown | None,
    is_set: bool,
    st: State,
    frame: Frame,
    quoted: bool,
    eid: Expansion,
    span: Span,
) -> list[Piece]:
    """`${X<op>…}` of a scalar whose value is `segs` (or `unknown`)."""
    ps = frame.ps
    colon = op.startswith(":") and op != ":"
    base = op[1:] if colon else op
    if base in ("-", "=", "+", "?"):
        return _default(ev, base, colon, operands, node, name, segs, unknown, is_set, st, frame, quoted, eid, span)
    if unknown is not None or segs is None:
        return [SegmentPiece(Segment(None, span, (), unknown), False, eid)]
    value = scalar_text(segs)
    origin = origins_of(segs)
    if value is None:
        bad = next((s.unknown for s in segs if s.text is None), None)
        return [SegmentPiece(Segment(None, span, origin, bad or Unknown("unknown value", span)), False, eid)]
    assumed = next((s.assumed for s in segs if s.assumed), None)

    def result(text: str) -> list[Piece]:
        return [SegmentPiece(Segment(text, span, origin, None, (), assumed), not quoted, eid)]

    def unknown_at(reason: str) -> list[Piece]:
        return [SegmentPiece(Segment.unknown_at(reason, span), False, eid)]

    if op in ("#", "##", "%", "%%"):
        pat = _operand_text(ev, operands, st, frame)
        if pat is None:
            return unknown_at(f"the pattern of `{ps.text(node)}`")
        got = strip_pattern(value, pat, op)
        if got is None:
            return unknown_at(f"`{ps.text(node)}` on a value too long to match a pattern against")
        return result(got)
    if op in ("/", "//", "/#", "/%"):
        pat_nodes: list[Node] = []
        rep_nodes: list[Node] = []
        seen_sep = False
        for c in operands:
            if not c.is_named and ps.text(c) == "/" and not seen_sep:
                seen_sep = True
                continue
            (rep_nodes if seen_sep else pat_nodes).append(c)
        pat = _operand_text(ev, pat_nodes, st, frame)
        rep = _operand_text(ev, rep_nodes, st, frame) if rep_nodes else ""
        if pat is None or rep is None:
            return unknown_at(f"the pattern of `{ps.text(node)}`")
        got = replace_pattern(value, pat, rep, op)
        if got is None or len(got) > MAX_VALUE_CHARS:
            return unknown_at(f"`{ps.text(node)}` on a value too long to match a pattern against")
        return result(got)
    if op in ("^^", "^", ",,", ","):
        if operands:
            return unknown_at(f"case conversion with a pattern `{ps.text(node)}`")
        if op == "^^":
            return result(value.upper())
        if op == ",,":
            return result(value.lower())
        if op == "^":
            return result(value[:1].upper() + value[1:])
        return result(value[:1].lower() + value[1:])
    if op == ":":
        raw = ps.text(node)
        body = raw[2:-1]
        k = body.find(":")
        spec = body[k + 1 :]
        parts = _split_top(spec, ":")
        try:
            off = arithmetic.arith_eval(ev, parts[0], st.fork(), frame, None) if parts[0].strip() else 0
            ln = arithmetic.arith_eval(ev, parts[1], st.fork(), frame, None) if len(parts) > 1 else None
        except arith.ArithUnknown as exc:
            return unknown_at(f"the offset of `{raw}`: {exc.reason}")
        except arith.ArithError:
            return unknown_at(f"`{raw}` is not a valid substring expansion")
        if off < 0:
            off = max(0, len(value) + off)
        if ln is None:
            return result(value[off:])
        if ln < 0:
            return result(value[off : len(value) + ln])
        return result(value[off : off + ln])
    if op == "@":
        return unknown_at(f"the transformation `{ps.text(node)}`")
    return unknown_at(f"`{ps.text(node)}` is not understood")


def _default(
    ev: Evaluator,
    base: str,
    colon: bool,
    operands: list[Node],
    node: Node,
    name: str,
    segs: Scalar | None,
    unknown: Unknown | None,
    is_set: bool,
    st: State,
    frame: Frame,
    quoted: bool,
    eid: Expansion,
    span: Span,
) -> list[Piece]:
    """`${X-d}`, `${X:-d}`, `${X=d}`, `${X:=d}`, `${X+a}`, `${X:+a}`, `${X?}`, `${X:?}`."""
    # The script never set it (an input from the environment or an argument): bash would
    # use the default when it is unset in the environment, which is the script's intent.
    empty = (unknown is None and scalar_text(segs) == "") if colon else False
    use_default = (not is_set) or empty
    if unknown is not None and is_set:
        return [SegmentPiece(Segment(None, span, (), unknown), False, eid)]
    operand_pieces = []
    for c in operands:
        operand_pieces.extend(expansion.pieces(ev, c, st, frame, quoted, eid))
    if base == "+":
        if unknown is not None and not is_set:
            return []  # unset in the script: `${X:+…}` is empty, as the default convention says
        return operand_pieces if not use_default else []
    if not use_default:
        return [SegmentPiece(s, not quoted, eid) for s in segs or ()]
    if base == "?":
        return [
            SegmentPiece(
                Segment(None, span, (), unknown or Unknown(f"${name} is required by the script", span)),
                False,
                eid,
            )
        ]
    assumed = None
    if not is_set and (unknown is not None or (name and variables.sets_after(ev, name, frame, span))):
        default = "".join(s.text or "…" for s in segments_of(operand_pieces))
        if not default or PLACEHOLDER.fullmatch(default):
            # `${CKPT:-}`, `${SAVE_DIR:-<path to checkpoints>}`: a slot the environment fills, not a value.
            why = f"${name} is an input whose default is {'empty' if not default else f'the placeholder `{default}`'}"
            return [SegmentPiece(Segment(None, span, (), Unknown(why, span)), False, eid)]
        assumed = default_assumption(name, default)
    result: list[Piece] = []
    for p in operand_pieces:
        if isinstance(p, SegmentPiece) and assumed:
            s = p.segment
            p = SegmentPiece(
                Segment(s.text, s.site, s.origin, s.unknown, s.via, s.assumed or assumed), p.split, p.expansion
            )
        result.append(p)
    if not result:
        result = [QUOTED_EMPTY] if quoted else []
    if base == "=" and name and not name.isdigit():
        val = tuple(p.segment for p in result if isinstance(p, SegmentPiece))
        old = st.vars.get(name)
        ev.impure = True
        st.vars[name] = Var(scalar=val, exported=bool(old and old.exported), site=span)
    return result


def segments_of(pieces: list[Piece]) -> list[Segment]:
    return [p.segment for p in pieces if isinstance(p, SegmentPiece)]


def _operand_text(ev: Evaluator, nodes: list[Node], st: State, frame: Frame) -> str | None:
    """The text of an operator's operand (a pattern, a replacement), or None when not known."""
    parts = []
    for c in nodes:
        for p in expansion.pieces(ev, c, st, frame, True, None):
            if isinstance(p, SegmentPiece):
                if p.segment.text is None:
                    return None
                parts.append(p.segment.text)
    return "".join(parts)


def _split_top(text: str, sep: str) -> list[str]:
    """`text` cut at `sep` outside brackets (the offset and length of `${X:off:len}`)."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts
