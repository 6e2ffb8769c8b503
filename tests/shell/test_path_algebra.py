"""Comparing and merging paths by the names that can differ between them (interp/algebra.py
`limit`) gives what comparing every variable gives: most variables are one object on every path,
and only the others are looked at."""

from __future__ import annotations

import random

import pytest

from megalint.shell.interp import algebra
from megalint.shell.interp.state import State, Var
from megalint.shell.values import Segment
from megalint.source import Span

SPAN = Span("t.sh", 1, 1, 1, 2, 0, 1)


def _paths(seed: int) -> list[State]:
    """Paths forked from one state, each changing, removing or adding a few variables: some to
    an equal value in a new object, some to the very object another path holds."""
    rng = random.Random(seed)
    base = State({f"V{i}": Var(scalar=(Segment(str(i), None),)) for i in range(40)}, None)
    pool = [Var(scalar=(Segment(t, None),)) for t in ("a", "b", "c")]
    paths = []
    for _ in range(rng.randint(2, 9)):
        st = base.fork()
        for _ in range(rng.randint(0, 6)):
            name = f"V{rng.randrange(45)}"
            roll = rng.random()
            if roll < 0.2:
                st.vars.pop(name, None)
            elif roll < 0.5:
                st.vars[name] = rng.choice(pool)
            elif roll < 0.8 and name in base.vars:
                old = base.vars[name]
                st.vars[name] = Var(scalar=old.scalar)  # equal, not the same object
            else:
                st.vars[name] = Var(scalar=(Segment(str(rng.random()), None),))
        paths.append(st)
    return paths


def _disagreements(a: State, b: State) -> int:
    """Every name either path holds whose values differ (or that one path lacks)."""
    miss = object()
    return sum(
        1
        for n in a.vars.keys() | b.vars.keys()
        if (x := a.vars.get(n, miss)) is not (y := b.vars.get(n, miss)) and (x is miss or y is miss or x != y)
    )


@pytest.mark.parametrize("seed", range(60))
def test_differences_and_merges_by_the_differing_names_are_the_full_ones(seed):
    paths = _paths(seed)
    differing = algebra._differing_names(paths)
    every = {name for p in paths for name in p.vars}
    miss = object()
    assert differing == {n for n in every if len({id(p.vars.get(n, miss)) for p in paths}) > 1}
    values = algebra._Values(tuple(differing))
    for a in paths:
        for b in paths:
            assert algebra._difference_of(a, b, values) == _disagreements(a, b)
    for n in (2, 3):
        for i in range(len(paths) - n + 1):
            group = paths[i : i + n]
            by_values, full = algebra.merge(group, SPAN, values), algebra.merge(group, SPAN)
            assert by_values.vars.keys() == full.vars.keys()
            for name, v in full.vars.items():
                w = by_values.vars[name]
                assert (w is v) or (w.unknown == v.unknown and w.scalar == v.scalar and w.exported == v.exported), name


@pytest.mark.parametrize("seed", range(20))
def test_collapsing_with_kept_marks_gives_what_a_fresh_collapse_gives(seed):
    paths = _paths(seed) * 2  # every path twice: each pair collapses into one
    marks: dict = {}
    kept = algebra.collapse(list(paths), marks=marks)
    again = algebra.collapse(list(paths), marks=marks)  # the marks of the first call reused
    assert [id(s) for s in kept] == [id(s) for s in algebra.collapse(list(paths))] == [id(s) for s in again]


@pytest.mark.parametrize("seed", range(40))
def test_merging_two_paths_gives_what_the_general_merge_gives(seed):
    # The two-path merge (every merge `limit` makes) against the general one, given the
    # second path twice; the commands against "the first path's, then each other one not in it".
    from megalint.shell.facts import CommandRecord

    rng = random.Random(seed)
    pool = [CommandRecord((), {}, {}, SPAN) for _ in range(6)]
    paths = _paths(seed)
    prefix = [CommandRecord((), {}, {}, SPAN) for _ in range(rng.randint(0, 4))]
    for p in paths:
        p.commands = list(prefix) + rng.sample(pool, rng.randint(0, 4))
        for name in rng.sample(sorted(p.vars), 3):  # some exported, on this path only
            v = p.vars[name]
            p.vars[name] = Var(v.scalar, v.array, v.unknown, exported=True)
    for a, b in zip(paths, paths[1:], strict=False):
        two, general = algebra.merge([a, b], SPAN), algebra.merge([a, b, b], SPAN)
        assert list(two.vars) == list(general.vars)
        for name, v in general.vars.items():
            w = two.vars[name]
            assert (w is v) or (w.unknown == v.unknown and w.scalar == v.scalar and w.exported == v.exported), name
        expected = list(a.commands) + [c for c in b.commands if all(c is not x for x in a.commands)]
        assert [id(c) for c in two.commands] == [id(c) for c in expected]


@pytest.mark.parametrize("seed", range(40))
def test_a_merged_path_holds_the_conditions_every_path_holds_in_the_first_paths_order(seed):
    # Paths forked from one another share a prefix of conditions (skipped whole); others differ
    # anywhere, repeat a condition or hold none.
    rng = random.Random(seed)
    words = [f"`[ $X = {i} ]` {rng.choice(('true', 'false'))}" for i in range(8)]
    shared = tuple(rng.sample(words, rng.randint(0, 4)))
    paths = _paths(seed)
    for p in paths:
        roll = rng.random()
        if roll < 0.4:
            p.cond = shared + tuple(rng.sample(words, rng.randint(0, 3)))
        elif roll < 0.6:
            p.cond = shared[: rng.randint(0, len(shared))]
        else:
            p.cond = tuple(rng.choice(words) for _ in range(rng.randint(0, 6)))
    expected = tuple(c for c in paths[0].cond if all(c in p.cond for p in paths))
    assert algebra.merge(paths, SPAN).cond == expected
    for a, b in zip(paths, paths[1:], strict=False):
        assert algebra.merge([a, b], SPAN).cond == tuple(c for c in a.cond if c in b.cond)
