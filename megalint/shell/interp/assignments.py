"""Assignments: `NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(a b c)`.

Most assignments in launch scripts are `NAME=literal` or `NAME=${NAME:-default}`: the first is
read straight from the tree (always), the second by a fast path (fast_paths.py, switchable);
everything else takes the general path, memoised on what it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from megalint.shell.interp import expansion, fast_paths
from megalint.shell.interp.reparse import MappedSource
from megalint.shell.interp.state import (
    MAX_ARRAY,
    Frame,
    Node,
    Scalar,
    State,
    Var,
    array_values,
    next_index,
    oversized,
    resite,
    scalar_text,
    too_long,
)
from megalint.shell.interp.syntax import NOT_PLAIN, is_whole_expansion
from megalint.shell.parse import ParsedScript
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator


def variable_assignment(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    assign(ev, node, st, frame)
    return [st]


def variable_assignments(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    for c in node.named_children:
        if c.type == "variable_assignment":
            assign(ev, c, st, frame)
    return [st]


def assign(ev: Evaluator, node: Node, st: State, frame: Frame) -> str | None:
    """Carry out an assignment on the path; returns the name assigned, if any."""
    plain = _plain_assignment(ev, node, st, frame)
    if plain is not None:
        return plain
    if fast_paths.ENABLED and not ev.many_paths:
        plain = fast_paths.assignment(ev, node, st, frame)
        if plain is not None:
            return plain
    name, var = ev.memo(
        frame.ps, ("a", node.start_byte, node.end_byte), st, lambda: _assign_result(ev, node, st, frame)
    )
    if name is not None and var is not None:
        st.vars[name] = var
    return name


def _plain_assignment(ev: Evaluator, node: Node, st: State, frame: Frame) -> str | None:
    """`NAME=text` with nothing to expand: the value is the text where it is written.
    Returns the name, or None when the general path must take it."""
    ps = frame.ps
    key = (id(ps), node.start_byte, node.end_byte)
    held = ev.plain_of.get(key)
    if held is None or held[0] is not ps:
        held = ev.plain_of[key] = (ps, _plain_parts(node, ps))
    parts = held[1]
    if parts is None:
        return None
    name, made = parts
    old = ev.get(st, name)
    if old is not None and old.array is not None:
        return None
    exported = bool(old and old.exported)
    var = made[exported]
    if var is None:
        # Made once per assignment (exported or not) for every path that runs it: the value
        # is the same whatever the path holds.
        value_node = node.children[2]
        var = made[exported] = ev.shared(
            Var(
                scalar=(Segment(ps.text(value_node), ps.span(value_node)),),
                exported=exported,
                site=ps.span(node),
            )
        )
    st.vars[name] = var
    return name


def _plain_parts(node: Node, ps: ParsedScript) -> tuple[str, list[Var | None]] | None:
    """(the name, its values as made so far: not exported, exported) of a plain `NAME=text`,
    or None when the assignment is not one."""
    if node.child_count != 3 or isinstance(ps.source, MappedSource):
        return None
    name_node, eq, value_node = node.children
    if eq.type != "=" or name_node.type != "variable_name" or value_node.type not in ("word", "number"):
        return None
    raw, raw_name = value_node.text, name_node.text
    if raw is None or raw_name is None or NOT_PLAIN.search(raw):
        return None
    return raw_name.decode(), [None, None]


def _assign_result(ev: Evaluator, node: Node, st: State, frame: Frame) -> tuple[str | None, Var | None]:
    name = _assign(ev, node, st, frame)
    return name, (st.vars.get(name) if name is not None else None)


def _assign(ev: Evaluator, node: Node, st: State, frame: Frame) -> str | None:
    name_node = node.child_by_field_name("name")
    value_node = node.child_by_field_name("value")
    if name_node is None:
        return None
    append = any(c.type == "+=" for c in node.children)
    index = None
    if name_node.type == "subscript":
        idx_node = name_node.child_by_field_name("index")
        base = name_node.child_by_field_name("name")
        name = frame.ps.text(base) if base is not None else frame.ps.text(name_node)
        index = scalar_text(expansion.expand_scalar(ev, idx_node, st, frame)) if idx_node is not None else None
    else:
        name = frame.ps.text(name_node)
    span = frame.ps.span(node)
    old = ev.get(st, name)
    exported = bool(old and old.exported)
    if value_node is not None and value_node.type == "array":
        st.vars[name] = _array(ev, name, value_node, append, old, span, st, frame)
        return name
    segs = expansion.expand_scalar(ev, value_node, st, frame) if value_node is not None else ()
    if value_node is not None:
        segs = resite(segs, frame.ps.span(value_node)) if is_whole_expansion(value_node) else segs
    if index is not None or (old is not None and old.array is not None and not append):
        st.vars[name] = _element(name, index, segs, append, old, span)
        return name
    if append:
        old_segs: Scalar
        if old is None:
            old_segs = ()
        elif old.unknown is not None:
            st.vars[name] = Var(unknown=old.unknown, exported=exported, site=span)
            return name
        elif old.array is not None:
            old_segs = array_values(old.array)[0] if old.array else ()
        else:
            old_segs = old.scalar or ()
        segs = tuple(old_segs) + tuple(segs)
        if oversized(segs):
            st.vars[name] = Var(unknown=too_long(span), exported=exported, site=span)
            return name
    st.vars[name] = ev.shared(Var(scalar=tuple(segs), exported=exported, site=span))
    return name


def _array(
    ev: Evaluator, name: str, value_node: Node, append: bool, old: Var | None, span: Span, st: State, frame: Frame
) -> Var:
    """`NAME=(a b c)` or `NAME+=(d)`."""
    exported = bool(old and old.exported)
    elements: list[Word] = []
    for c in value_node.named_children:
        if c.type == "comment":
            continue
        for w in expansion.expand_word(ev, c, st, frame):
            elements.append(w)
    why = next((w.splat for w in elements if w.splat is not None), None)
    if why is not None:
        reason = why.reason if "too long" in why.reason else f"`{name}` holds the script's arguments"
        return Var(unknown=Unknown(reason, span), exported=exported, site=span)
    base_arr: dict[str, Scalar] = {}
    if append and old is not None and old.array is not None:
        base_arr = dict(old.array)
    elif append and old is not None and old.scalar is not None:
        base_arr = {"0": old.scalar}
    elif append and old is not None and old.unknown is not None:
        return Var(unknown=old.unknown, exported=exported, site=span)
    if len(base_arr) + len(elements) > MAX_ARRAY:
        return _too_many(name, exported, span)
    start = next_index(base_arr)
    for i, w in enumerate(elements):
        base_arr[str(start + i)] = w.segments
    return Var(array=base_arr, exported=exported, site=span)


def _element(name: str, index: str | None, segs: Scalar, append: bool, old: Var | None, span: Span) -> Var:
    """`NAME[i]=value`, `NAME[i]+=value`, or `NAME=value` of an array (its element 0)."""
    exported = bool(old and old.exported)
    arr = dict(old.array) if old is not None and old.array is not None else {}
    key = index if index is not None else "0"
    if key is None:
        return Var(
            unknown=Unknown(f"`{name}` is indexed by a value not known statically", span),
            exported=exported,
            site=span,
        )
    if append and key in arr:
        arr[key] = tuple(arr[key]) + tuple(segs)
        if oversized(arr[key]):
            arr[key] = (Segment(None, span, (), too_long(span)),)
    else:
        arr[key] = segs
    if len(arr) > MAX_ARRAY:
        return _too_many(name, exported, span)
    return Var(array=arr, exported=exported, site=span)


def _too_many(name: str, exported: bool, span: Span) -> Var:
    return Var(
        unknown=Unknown(f"`{name}` has more than {MAX_ARRAY} elements (too long to follow)", span),
        exported=exported,
        site=span,
    )
