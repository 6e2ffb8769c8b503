"""The algebra of paths: collapsing paths that ended up alike, merging paths when there are too
many, keeping only the effects of a child shell, and forgetting what an undecided construct set.

A script with undecided tests runs along several paths (one `State` each). Paths that differ in
nothing tracked are one path; past MAX_STATES, the most alike are joined and what they disagree
on becomes unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING

from megalint.shell.facts import CommandRecord
from megalint.shell.interp.state import MAX_STATES, Frame, Node, State, Var
from megalint.shell.values import Unknown
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator


def limit(ev: Evaluator, states: list[State], node: Node, frame: Frame) -> list[State]:
    """The paths after a statement: alike ones collapsed, at most MAX_STATES of them."""
    if len(states) < 2:
        return states
    # The variables whose value is not one object on every path: only these can tell paths
    # apart, before the collapse, after it (a subset of the paths) and after merging (which
    # makes new values of these alone). Most of a script's variables are shared by every path.
    # Each path's values of them, in one order, are looked up once per path for its fingerprint,
    # the ranking of neighbours and the merge.
    values = _Values(tuple(_differing_names(states)))
    states = collapse(states, ev.command_marks, values)
    if len(states) <= MAX_STATES:
        return states
    live = [s for s in states if not s.stopped]
    stopped = [s for s in states if s.stopped]
    span = frame.ps.span(node)
    ev.merged = True

    # Join the two neighbouring paths that differ in the fewest variables (usually the
    # last, least consequential fork) until few enough remain: what they disagree on
    # becomes unknown, everything else stays known.
    while len(live) > MAX_STATES:
        excess = len(live) - MAX_STATES
        held = [values.of(s) for s in live]  # each path's values looked up once per round
        differences = [_differences(held[i], held[i + 1]) for i in range(len(live) - 1)]
        ranked = sorted(range(len(live) - 1), key=differences.__getitem__)
        chosen: set[int] = set()
        for i in ranked:
            if len(chosen) >= excess:
                break
            if i in chosen or i - 1 in chosen or i + 1 in chosen:
                continue
            chosen.add(i)
        merged, i = [], 0
        while i < len(live):
            if i in chosen:
                merged.append(merge(live[i : i + 2], span, values))
                i += 2
            else:
                merged.append(live[i])
                i += 1
        live = merged
    return stopped[:MAX_STATES] + live


def merge(states: list[State], span: Span, values: _Values | None = None) -> State:
    """One path standing for several: the variables they disagree on become unknown, and it
    holds every command any of them ran. `values`: the paths' values of every name they could
    disagree on (`_differing_names`), when kept."""
    base = states[0].fork()
    base.cond = _common_conditions(states)
    if values is None:
        names = _differing_names(states)
    else:
        held, others = values.of(states[0]), [values.of(s) for s in states[1:]]
        if len(others) == 1:  # every merge `limit` makes: compared without a Python loop
            names = frozenset(compress(values.names, map(is_not, held, others[0])))
        else:
            names = frozenset(k for i, k in enumerate(values.names) if any(o[i] is not held[i] for o in others))
    reason = Unknown(f"differs between branches (too many paths, merged at line {span.start_line})", span)
    if len(states) == 2:
        # Every merge `limit` makes: the test below, for two paths.
        mine, theirs = states[0].vars, states[1].vars
        for name in names:
            x, y = mine.get(name), theirs.get(name)
            if not _alike(x, y):
                exported = (x is not None and x.exported) or (y is not None and y.exported)
                base.vars[name] = Var(unknown=reason, exported=exported, site=span)
    else:
        for name in names:
            vals = [s.vars.get(name) for s in states]
            if not all(_alike(vals[0], v) for v in vals):
                exported = any(v is not None and v.exported for v in vals)
                base.vars[name] = Var(unknown=reason, exported=exported, site=span)
    commands = base.commands
    for s in states[1:]:
        # Paths share the commands run before they parted (the same objects, in the same
        # places): only those after are looked for among the merged path's.
        ran = s.commands
        shared = 0
        for a, b in zip(commands, ran, strict=False):
            if a is not b:
                break
            shared += 1
        if shared == len(ran):
            continue
        seen = set(map(id, commands))
        for c in ran[shared:]:
            if id(c) not in seen:
                seen.add(id(c))
                commands.append(c)
    return base


def _common_conditions(states: list[State]) -> tuple[str, ...]:
    """The first path's conditions that every path holds, in its order. Paths forked from one
    another share a prefix of conditions: a path holding the whole of the first's is skipped."""
    cond = states[0].cond
    for s in states[1:]:
        other = s.cond
        if other is cond or (len(other) >= len(cond) and other[: len(cond)] == cond):
            continue
        held = set(other)
        cond = tuple(c for c in cond if c in held)
    return cond


def _alike(x: Var | None, y: Var | None) -> bool:
    """Whether two paths' values of a variable are one value (whether exported aside)."""
    return x is y or (
        x is not None and y is not None and x.scalar == y.scalar and x.array == y.array and x.unknown == y.unknown
    )


def _same_path(a: State, b: State) -> bool:
    return (
        a.stopped == b.stopped
        and a.in_loop == b.in_loop
        and a.positional is b.positional
        and a.breaking == b.breaking
        and a.returning == b.returning
        and a.vars == b.vars
        and a.commands == b.commands
        and a.funcs == b.funcs
    )


def collapse(
    states: list[State],
    marks: dict[int, tuple[CommandRecord, int]] | None = None,
    values: _Values | None = None,
) -> list[State]:
    """Paths that ended up alike (same variables, same commands run) are one path: the
    test that split them changed nothing that is tracked. `marks`: the commands' marks kept for
    the whole run; `values`: the paths' values of the names `_differing_names` gives, when kept."""
    # Paths are compared by a fingerprint first, equal whenever the paths are: comparing whole
    # states pair by pair is quadratic in the paths and deep in their values. Only the variables
    # some path holds a value of its own for are fingerprinted (most are shared by every path),
    # and `seen` shares the fingerprints of the commands paths share.
    if len(states) < 2:
        return states
    seen: dict[int, tuple[CommandRecord, int]] = {} if marks is None else marks
    out: list[tuple[int, State]] = []
    if values is None:
        values = _Values(tuple(_differing_names(states)))
    for s in states:
        mark = _fingerprint(s, values, seen)
        for f, o in out:
            if f == mark and _same_path(o, s):
                if o.cond != s.cond:
                    o.cond = tuple(c for c in o.cond if c in s.cond)
                if o.taken != s.taken:
                    o.taken = {k: v for k, v in o.taken.items() if s.taken.get(k) == v}
                break
        else:
            out.append((mark, s))
    return [s for _, s in out]


def _differing_names(states: list[State]) -> frozenset[str]:
    """The variables whose value is not the same object on every path."""
    first = states[0].vars
    names: set[str] = set()
    get = first.get
    for s in states[1:]:
        other = s.vars
        if other is first:
            continue
        # Each name of `other` whose value is not the first path's (None: the first has none; a
        # value is never None), in `other`'s order: compared without a Python loop.
        names.update(compress(other, map(is_not, other.values(), map(get, other))))
        # The names only the first path holds: there are some only when the two key sets differ.
        if len(other) != len(first) or other.keys() != first.keys():
            names.update(name for name in first if name not in other)
    return frozenset(names)


class _Values:
    """Each path's values of some names, in one order (None where it has none: a value is never
    None), made once per path while paths are compared and merged."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self._made: dict[int, tuple[State, tuple[Var | None, ...]]] = {}

    def of(self, st: State) -> tuple[Var | None, ...]:
        held = self._made.get(id(st))
        if held is None or held[0] is not st:
            held = self._made[id(st)] = (st, tuple(map(st.vars.get, self.names)))
        return held[1]


def _difference_of(a: State, b: State, values: _Values) -> int:
    """How many variables two paths disagree on (a name one lacks counts); `values` holds every
    name they could disagree on."""
    return 0 if a.vars is b.vars else _differences(values.of(a), values.of(b))


def _differences(mine: tuple[Var | None, ...], theirs: tuple[Var | None, ...]) -> int:
    """How many of two paths' values of the same names differ (None, a name a path lacks)."""
    n = 0
    # Most values are the same object on both paths: only the others are compared, in Python,
    # by their marks first (kept on each value: unequal marks are unequal values).
    for w, v in compress(zip(mine, theirs, strict=True), map(is_not, mine, theirs)):
        if w is None or v is None or (w._mark or w.mark()) != (v._mark or v.mark()) or w != v:
            n += 1
    return n


def _fingerprint(st: State, values: _Values, seen: dict[int, tuple[CommandRecord, int]]) -> int:
    """A hash of what `_same_path` compares: equal paths have equal fingerprints (`values`, the
    paths' values of the differing names, in one order for every path compared)."""
    vars_ = tuple([None if v is None else (v._mark or v.mark()) for v in values.of(st)])
    commands = tuple(_command_mark(c, seen) for c in st.commands)
    flags = (st.stopped, st.in_loop, st.breaking, st.returning, id(st.positional), len(st.vars))
    return hash((flags, vars_, commands, frozenset(st.funcs)))


def _command_mark(c: CommandRecord, seen: dict[int, tuple[CommandRecord, int]]) -> int:
    # Kept with the command itself (by its id, the command held so that the id is not reused):
    # a command is never changed once recorded, and every path after it holds it. Its words are
    # left out (a launch's hundreds of segments, hashed once per path that runs it): the mark
    # only sorts paths, and paths whose marks agree are compared in full (`_same_path`).
    held = seen.get(id(c))
    if held is None or held[0] is not c:
        held = seen[id(c)] = (
            c,
            hash((len(c.words), c.span, c.condition, c.wrappers, c.in_loop, len(c.assigns), len(c.env))),
        )
    return held[1]


def effects_only(parent: State, results: list[State]) -> list[State]:
    """The parent's state after child shells ran: their commands and the branches they took
    count, the variables they set do not (a subshell, a pipeline part, `bash -c`, a here-document)."""
    out = []
    for r in results:
        keep = parent.fork()
        keep.cond = r.cond
        keep.commands = r.commands
        out.append(keep)
    return out or [parent]


def unset_to_unknown(st: State, names: Iterable[str], what: str, where: Span | None) -> None:
    """The variables an undecided construct (an `if` chain, a `case`) would set, when no arm was
    taken: unknown rather than empty, unless the path set them already."""
    line = where.start_line if where is not None else "?"
    for name in names:
        if st.vars.get(name) is None:
            st.vars[name] = Var(
                unknown=Unknown(f"`{name}` is set only inside {what} (line {line}) that no known value selects", where),
                site=where,
            )
