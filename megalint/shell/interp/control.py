"""Control flow: lists and blocks, subshells and pipelines, `&&`/`||`, `if`, `case`, the loops,
function definitions.

A test whose outcome is known (conditions.py) takes one way; an undecided one forks the path,
each side remembering the outcome it assumed. Loops over known values are unrolled; a loop run
an unknown number of times makes what it assigns unknown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from megalint.shell import arith
from megalint.shell.interp import algebra, arithmetic, conditions, expansion, nested_scripts
from megalint.shell.interp.patterns import glob_match
from megalint.shell.interp.state import (
    MAX_LOOP_UNROLL,
    Frame,
    Node,
    State,
    Var,
    assign_scalar,
    scalar_text,
)
from megalint.shell.interp.syntax import assigned_names, is_test, plain_name
from megalint.shell.values import Unknown, Word

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

# Commands whose here-document is a script of their own (`sbatch <<EOF … EOF`).
_HEREDOC_SHELLS = frozenset({"sbatch", "bash", "sh", "srun", "salloc"})


def program(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    return ev.block(node.children, [st], frame)


def compound_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    first = node.child(0)
    if first is not None and first.type == "((":
        return arithmetic.arith_statement(ev, node, st, frame, frame.ps.text(node)[2:-2])
    return ev.block(node.children, [st], frame)


def subshell(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    # Variables set in a subshell do not reach the parent; commands run there still count.
    return algebra.effects_only(st, ev.block(node.children, [st.fork()], frame))


def do_group(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    return ev.block(node.children, [st], frame)


def redirected_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    body = node.child_by_field_name("body")
    if body is None:
        return [st]
    heredoc = next((c for c in node.children if c.type == "heredoc_redirect"), None)
    if heredoc is not None and body.type == "command":
        name = plain_name(body.child_by_field_name("name"))
        if name in _HEREDOC_SHELLS:
            return nested_scripts.heredoc_script(ev, body, heredoc, st, frame)
    return ev.stmt(body, [st], frame)


def negated_command(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    return ev.block(node.named_children, [st], frame)


def test_command(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    return [st]


def pipeline(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    # Each part runs in a subshell; the last one's variables are lost too (no lastpipe).
    states = [st]
    for child in node.named_children:
        nxt = []
        for s in states:
            nxt.extend(algebra.effects_only(s, ev.stmt(child, [s.fork()], frame)))
        states = nxt or states
    return states


def and_or_list(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    # `a && b`, `a || b`: tests are decided when they can be; other commands are taken to
    # succeed, the way the script's author expects its launch path to run.
    children = node.children
    left = node.named_children[0] if node.named_children else None
    op = None
    for c in children:
        if not c.is_named:
            op = c.type
            break
    if left is None or op is None or len(node.named_children) < 2:
        return ev.block(node.named_children, [st], frame)
    right = node.named_children[-1]
    verdict, key = conditions.decide(ev, left, st, frame)
    states = ev.stmt(left, [st], frame)
    out = []
    for s in states:
        if s.stopped:
            out.append(s)
            continue
        if verdict is None and is_test(left):
            desc = frame.ps.text(left)
            taken = s.fork(f"`{desc}` {'true' if op == '&&' else 'false'}")
            skipped = s.fork(f"`{desc}` {'false' if op == '&&' else 'true'}")
            conditions.remember(taken, key, op == "&&")
            conditions.remember(skipped, key, op != "&&")
            out.extend(ev.stmt(right, [taken], frame))
            out.append(skipped)
            continue
        success = True if verdict is None else verdict
        run_right = success if op == "&&" else not success
        out.extend(ev.stmt(right, [s], frame) if run_right else [s])
    return out


def if_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    # if COND; then BODY [elif COND; then BODY]* [else BODY] fi
    arms: list[tuple[list[Node], list[Node]]] = []  # (condition nodes, body nodes)
    cond_nodes: list[Node] = []
    body: list[Node] = []
    mode = "cond"
    else_body = None
    for child in node.children:
        t = child.type
        if t == "if":
            continue
        if t == "then":
            mode = "body"
            continue
        if t == "fi":
            break
        if t == "elif_clause":
            arms.append((cond_nodes, body))
            cond_nodes, body, mode = [], [], "cond"
            for c in child.children:
                if c.type == "then":
                    mode = "body"
                elif c.type == "elif":
                    continue
                elif mode == "cond":
                    cond_nodes.append(c)
                else:
                    body.append(c)
            continue
        if t == "else_clause":
            else_body = [c for c in child.children if c.type != "else"]
            continue
        (cond_nodes if mode == "cond" else body).append(child)
    arms.append((cond_nodes, body))
    return _branches(ev, node, arms, else_body, st, frame)


def _branches(
    ev: Evaluator,
    node: Node,
    arms: list[tuple[list[Node], list[Node]]],
    else_body: list[Node] | None,
    st: State,
    frame: Frame,
) -> list[State]:
    out: list[State] = []
    pending = [st]
    for cond_nodes, body in arms:
        named = [c for c in cond_nodes if c.is_named and c.type != "comment"]
        next_pending = []
        for s in pending:
            states = ev.block(named[:-1], [s], frame) if len(named) > 1 else [s]
            for s2 in states:
                if s2.stopped:
                    out.append(s2)
                    continue
                last = named[-1] if named else None
                verdict, key = conditions.decide(ev, last, s2, frame) if last is not None else (None, None)
                after = ev.stmt(last, [s2], frame) if last is not None else [s2]
                desc = frame.ps.text(last).strip() if last is not None else "?"
                for s3 in after:
                    if s3.stopped:
                        out.append(s3)
                    elif verdict is True:
                        out.extend(ev.block(body, [s3], frame))
                    elif verdict is False:
                        next_pending.append(s3)
                    else:
                        yes, no = s3.fork(f"`{desc}` true"), s3.fork(f"`{desc}` false")
                        conditions.remember(yes, key, True)
                        conditions.remember(no, key, False)
                        out.extend(ev.block(body, [yes], frame))
                        next_pending.append(no)
        pending = next_pending
    if not else_body and any("` false" in c for s in pending for c in s.cond[len(st.cond) :]):
        # Fell through every arm of an undecided chain: what the arms would have set is
        # unknown here, not empty (that path is an argument the script did not expect).
        names = _assigned_in(ev, node, [n for _cond, body in arms for n in body], frame)
        where = frame.ps.span(arms[0][1][0]) if arms and arms[0][1] else None
        for s in pending:
            algebra.unset_to_unknown(s, names, "an `if` chain", where)
    for s in pending:
        out.extend(ev.block(else_body, [s], frame) if else_body else [s])
    return out


def _assigned_in(ev: Evaluator, node: Node, parts: list[Node], frame: Frame) -> tuple[str, ...]:
    """The variables `parts` of the construct `node` (an `if` chain's bodies, a `case`'s arms)
    may assign, in the order a set of them gives: found once per construct, though each path
    that reaches it asks."""
    ps = frame.ps
    key = (id(ps), node.start_byte, node.end_byte)
    known = ev.assigned_in.get(key)
    if known is None or known[0] is not ps:
        names: set[str] = set()
        for part in parts:
            assigned_names(part, ps, names)
        known = ev.assigned_in[key] = (ps, tuple(names))
    return known[1]


def case_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    value_node = node.child_by_field_name("value")
    subject = expansion.expand_scalar(ev, value_node, st, frame) if value_node is not None else ()
    subject_text = scalar_text(subject)
    items = [c for c in node.named_children if c.type == "case_item"]
    out: list[State] = []
    matched_all = False
    desc_subject = frame.ps.text(value_node) if value_node is not None else "?"
    for item in items:
        patterns, body = _case_item_parts(ev, item, st, frame)
        if subject_text is not None and all(p is not None for p in patterns):
            if any(glob_match(p, subject_text) for p in patterns if p is not None):
                out.extend(ev.block(body, [st], frame))
                return out
            continue
        # An undecided subject: every arm is a possible path, unless a pattern is known not to match.
        desc = f"case {desc_subject} matches {frame.ps.text(item).split(')')[0].strip()}"
        out.extend(ev.block(body, [st.fork(desc)], frame))
        if any(p == "*" for p in patterns):
            matched_all = True
            break
    if subject_text is not None:
        return [st]  # no arm matched
    if not matched_all:
        rest = st.fork(f"case {desc_subject} matches no arm")
        names = _assigned_in(ev, node, items, frame)
        algebra.unset_to_unknown(rest, names, "the arms of a `case`", frame.ps.span(node))
        out.append(rest)
    return out


def _case_item_parts(ev: Evaluator, item: Node, st: State, frame: Frame) -> tuple[list[str | None], list[Node]]:
    """An arm's patterns (None where not known) and its body."""
    patterns = []
    body = []
    seen_paren = False
    for c in item.children:
        if not seen_paren:
            if c.type == ")":
                seen_paren = True
            elif c.is_named:
                patterns.append(scalar_text(expansion.expand_scalar(ev, c, st, frame, pattern=True)))
            continue
        if c.type in (";;", ";&", ";;&"):
            continue
        body.append(c)
    return patterns, body


def for_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    var_node = node.child_by_field_name("variable")
    body = node.child_by_field_name("body")
    values = [c for c in node.children_by_field_name("value")]
    name = frame.ps.text(var_node) if var_node is not None else "_"
    items: list[Word] | None
    if not values and node.child(0) is not None and node.child(0).type == "for":
        # `for x; do` iterates over the positional parameters
        items = None if st.positional is None else [Word(tuple(p)) for p in st.positional]
    else:
        items = []
        for v in values:
            for w in expansion.expand_word(ev, v, st, frame):
                if w.splat is not None or w.text is None:
                    items = None
                    break
                items.append(w)
            if items is None:
                break
    if items is not None and len(items) <= MAX_LOOP_UNROLL:
        states = [st]
        finished: list[State] = []
        for w in items:
            for s in states:
                if not s.stopped:
                    assign_scalar(s, name, w.segments, frame.ps.span(var_node) if var_node else None)
            states = ev.stmt(body, states, frame) if body is not None else states
            states, broke = _loop_exits(states)
            finished.extend(broke)
        return finished + states
    return _havoc_loop(
        ev, node, body, st, frame, {name: f"set by the `for {name}` loop over values not known statically"}
    )


def _loop_exits(states: list[State]) -> tuple[list[State], list[State]]:
    """Split off the states that left the loop with `break`."""
    going, broke = [], []
    for s in states:
        if s.breaking:
            s.breaking = False
            s.stopped = False
            broke.append(s)
        else:
            going.append(s)
    return going, broke


def c_style_for_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    body = node.child_by_field_name("body")
    text = frame.ps.text(node)
    m = re.match(r"for\s*\(\((.*?);(.*?);(.*?)\)\)", text, re.S)
    if m:
        init, cond, update = m.groups()
        s = st.fork()
        try:
            arithmetic.arith_eval(ev, init, s, frame, None)
            states = [s]
            for _ in range(MAX_LOOP_UNROLL + 1):
                if len(states) != 1 or states[0].stopped:
                    break
                if cond.strip() and not arithmetic.arith_eval(ev, cond, states[0], frame, None):
                    return states
                states = ev.stmt(body, states, frame) if body is not None else states
                if len(states) == 1 and not states[0].stopped:
                    arithmetic.arith_eval(ev, update, states[0], frame, None)
        except (arith.ArithUnknown, arith.ArithError):
            pass
    return _havoc_loop(ev, node, body, st, frame, {})


def while_statement(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    body = node.child_by_field_name("body")
    cond = [c for c in node.children if c.is_named and c != body and c.type != "comment"]
    until = node.child(0) is not None and node.child(0).type == "until"
    states = [st.fork()]
    finished: list[State] = []
    for _ in range(MAX_LOOP_UNROLL):
        if len(states) != 1 or states[0].stopped:
            break
        s = states[0]
        verdict = conditions.condition_value(ev, cond[-1], s, frame) if cond else None
        if verdict is None:
            break
        if until:
            verdict = not verdict
        if not verdict:
            return finished + states
        states = ev.stmt(body, states, frame) if body is not None else states
        states, broke = _loop_exits(states)
        finished.extend(broke)
        if not states:
            return finished
    return _havoc_loop(ev, node, body, st, frame, {})


def _havoc_loop(
    ev: Evaluator, node: Node, body: Node | None, st: State, frame: Frame, extra: dict[str, str]
) -> list[State]:
    """A loop whose trip count is unknown: every variable it assigns becomes unknown."""
    span = frame.ps.span(node)
    assigned = set(extra)
    assigned_names(node, frame.ps, assigned)
    s = st.fork()
    for name in assigned:
        reason = (
            extra.get(name)
            or f"`{name}` is changed in a loop (line {span.start_line}) that runs an unknown number of times"
        )
        old = s.vars.get(name)
        s.vars[name] = Var(unknown=Unknown(reason, span), exported=bool(old and old.exported), site=span)
    shifts = "shift" in frame.ps.text(node)
    if shifts:
        s.positional = None
    was = s.in_loop
    s.in_loop = True
    results = ev.stmt(body, [s], frame) if body is not None else [s]
    out = []
    for r in results:
        r.in_loop = was
        r.stopped = False  # `exit` inside a loop may not run
        for name in assigned:
            old = r.vars.get(name)
            reason = (
                extra.get(name)
                or f"`{name}` is changed in a loop (line {span.start_line}) that runs an unknown number of times"
            )
            r.vars[name] = Var(unknown=Unknown(reason, span), exported=bool(old and old.exported), site=span)
        if shifts:
            r.positional = None
        out.append(r)
    if len(out) > 1:
        # Branches inside a loop of unknown trip count are not paths of the script: the
        # variables they set are unknown already; keep every command they run.
        live = [r for r in out if not r.stopped] or out
        merged = algebra.merge(live, span)
        merged.cond = st.cond
        return [merged]
    return out or [s]


def function_definition(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    name_node = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name_node is not None and body is not None:
        st.funcs[frame.ps.text(name_node)] = (body, frame.ps)
    return [st]
