"""An `if` chain run once for each group of paths that hold the same values of what it reads.

Past a few undecided tests a script runs along many paths (up to MAX_STATES), and the `if` chains
after them (`if [ $MODEL_SIZE = 7B ]; then NUM_LAYERS=32 …`) mostly read values every path
shares. Such a chain runs on the first path of each group of paths alike in all it can read: its
variables (the same objects) and the way each path already took the tests it makes
(`State.taken`). What it did there (the paths it made, what each assigned, the tests each took
one way, the statements counted) is done again on the other paths of the group, without running it.

Only a chain of tests (joined by `&&`, `||`), assignments, `export` and `echo` is replayed
(`_reads`): it then reads nothing but the variables written in it. A chain whose run on the first path did more (recorded a command,
stopped the path, dropped a variable) runs on every path. It is a fast path like the others:
tests/shell/test_fast_paths.py compares runs with fast paths on and off.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import is_
from typing import TYPE_CHECKING

from megalint.shell.interp import fast_paths
from megalint.shell.interp.state import MAX_STEPS, UNSOURCED, Frame, Node, State, Var

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

    Handler = Callable[[Evaluator, Node, State, Frame], list[State]]

# The nodes of a chain that reads only the variables written in it and changes only variables
# and the tests taken (a command: `echo` alone, checked by name).
_READABLE = frozenset(
    "if_statement elif_clause else_clause test_command binary_expression unary_expression "
    "parenthesized_expression string raw_string string_content word number concatenation "
    "simple_expansion expansion variable_name test_operator variable_assignment comment command "
    "command_name declaration_command list".split()
)
_COMMANDS = frozenset({"echo"})


def run(ev: Evaluator, handler: Handler, node: Node, live: list[State], frame: Frame) -> list[State] | None:
    """What `handler` gives on each path of `live`, in order, the chain run once per group of
    paths alike in what it reads; None when it cannot be (each path is then run)."""
    if not fast_paths.ENABLED or ev.reads is not None:
        return None
    names = _reads(ev, node, frame)
    if names is None or any("echo" in s.funcs for s in live):
        return None
    groups: list[_Group] = []
    out: list[State] = []
    for s in live:
        values = tuple(map(s.vars.get, names))
        taken = _taken(s, names, values)
        group = next((g for g in groups if g.taken == taken and all(map(is_, g.values, values))), None)
        if group is None:
            group = _Group(values, taken)
            groups.append(group)
            out.extend(group.run(ev, handler, node, s, frame))
        elif group.replays is not None and not ev.exhausted and ev.steps + group.steps < MAX_STEPS - 1:
            out.extend(group.replay(ev, s))
        else:
            out.extend(handler(ev, node, s, frame))
    return out


def _reads(ev: Evaluator, node: Node, frame: Frame) -> tuple[str, ...] | None:
    """The variables a chain reads (and those a variable not set is read through), or None when
    it may read or do more; found once per construct."""
    ps = frame.ps
    key = (id(ps), node.start_byte, node.end_byte)
    held = ev.chain_reads.get(key)
    if held is None or held[0] is not ps:
        names: set[str] | None = {UNSOURCED}
        stack = [node]
        while stack and names is not None:
            n = stack.pop()
            stack.extend(n.children)
            if not n.is_named:
                continue
            t = n.type
            if t not in _READABLE:
                names = None
            elif t == "variable_name":
                name = ps.text(n)
                names = None if not name or name[0].isdigit() else names | {name}
            elif t == "expansion" and ps.text(n).startswith("${!"):
                names = None  # an indirect expansion reads a variable named at run time
            elif t == "command":
                name_node = n.child_by_field_name("name")
                if name_node is None or ps.text(name_node) not in _COMMANDS:
                    names = None
            elif t == "declaration_command" and not ps.text(n).startswith("export "):
                names = None
        held = ev.chain_reads[key] = (ps, None if names is None else tuple(sorted(names)))
    return held[1]


def _taken(s: State, names: tuple[str, ...], values: tuple[Var | None, ...]) -> frozenset[tuple[object, object]]:
    """The tests this path took one way that the chain's tests can meet again: those of the
    values it reads, as they are now (conditions.decide and equality.recall key a test by what
    it read, name and object)."""
    if not s.taken:
        return frozenset()
    now = dict(zip(names, map(id, values), strict=True))
    out = []
    for k, v in s.taken.items():
        # What a test read is the first tuple of its key: the second item of a test's
        # (conditions.decide), the third of what equality.learn derived from one.
        reads = k[1] if k[1].__class__ is tuple else next((x for x in k if isinstance(x, tuple)), None)
        if reads is None:
            continue
        for name, i in reads:
            if now.get(name, -1) != i:
                break
        else:
            out.append((k, v[0]))
    return frozenset(out)


# One path the chain made from the first path of a group: whether it is that path itself, the
# variables it set (new objects or none before), the conditions and tests it took after.
_Replay = tuple[bool, dict[str, Var], tuple[str, ...], dict[tuple[object, ...], tuple[object, object]]]


class _Group:
    """Paths alike in what a chain reads: its run on the first, to replay on the others."""

    def __init__(self, values: tuple[Var | None, ...], taken: frozenset[tuple[object, object]]) -> None:
        self.values = values
        self.taken = taken
        self.steps = 0
        self.replays: list[_Replay] | None = None

    def run(self, ev: Evaluator, handler: Handler, node: Node, s: State, frame: Frame) -> list[State]:
        before_vars, before_taken, before_funcs = dict(s.vars), dict(s.taken), dict(s.funcs)
        cond, commands, positional, in_loop = s.cond, len(s.commands), s.positional, s.in_loop
        steps = ev.steps
        outs = handler(ev, node, s, frame)
        self.steps = ev.steps - steps
        replays: list[_Replay] = []
        for o in outs:
            if (
                o.stopped
                or o.returning
                or o.breaking
                or o.in_loop != in_loop
                or o.positional is not positional
                or len(o.commands) != commands
                or o.funcs != before_funcs
                or o.cond[: len(cond)] != cond
                or not o.vars.keys() >= before_vars.keys()
                or not o.taken.keys() >= before_taken.keys()
            ):
                return outs
            get, was = before_vars.get, before_taken.get
            replays.append(
                (
                    o is s,
                    {k: v for k, v in o.vars.items() if get(k) is not v},
                    o.cond[len(cond) :],
                    {k: v for k, v in o.taken.items() if was(k) is not v},
                )
            )
        self.replays = replays
        return outs

    def replay(self, ev: Evaluator, s: State) -> list[State]:
        """The paths the chain makes from `s`: forks made before `s` itself is changed, as the
        run made them."""
        assert self.replays is not None
        outs: list[State] = []
        itself: _Replay | None = None
        for r in self.replays:
            if r[0]:
                itself = r
                outs.append(s)
            else:
                outs.append(_applied(s.fork(), r))
        if itself is not None:
            _applied(s, itself)
        ev.steps += self.steps
        return outs


def _applied(s: State, r: _Replay) -> State:
    _same, assigned, cond, taken = r
    if assigned:
        s.vars.update(assigned)
    if cond:
        s.cond = s.cond + cond
    if taken:
        s.taken.update(taken)
    return s
