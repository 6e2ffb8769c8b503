"""Paths an assignment made alike are collapsed before the next statement that is not an
assignment (interp/core.py `collapse_pending`): a run of assignments compares the paths once,
and what the paths record afterwards is what collapsing after every statement gave."""

from __future__ import annotations

import pytest

from megalint.shell.interp import algebra
from megalint.shell.interp.core import interpret
from megalint.shell.parse import parse_text

FORK = 'if [ "$MODE" = a ]; then\n  X=1\nelse\n  X=2\nfi\n'


def _live(script: str):
    _, states = interpret(parse_text("t.sh", script), skip_unread=False)
    return [s for s in states if not s.stopped]


def test_paths_made_alike_by_an_assignment_are_one_before_the_next_command() -> None:
    paths = _live(FORK + "X=3\nY=4\ntorchrun pretrain_gpt.py --seed $X\n")
    assert len(paths) == 1
    (launch,) = paths[0].commands
    assert launch.condition == (), "the branches it ran on no longer differ: no condition"
    assert [w.text for w in launch.words][-1] == "3"


def test_paths_made_alike_by_the_last_assignment_end_as_one() -> None:
    paths = _live(FORK + "torchrun pretrain_gpt.py --seed 1\nX=3\n")
    assert len(paths) == 2, "the command recorded under each branch keeps the paths apart"
    paths = _live(FORK + "X=3\n")
    assert len(paths) == 1


def test_paths_that_still_differ_stay_apart() -> None:
    paths = _live(FORK + "Y=4\ntorchrun pretrain_gpt.py --seed $X\n")
    assert sorted(p.commands[0].words[-1].text for p in paths) == ["1", "2"]


def test_a_run_of_assignments_compares_the_paths_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = algebra.collapse
    monkeypatch.setattr(algebra, "collapse", lambda states, *a, **k: calls.append(len(states)) or real(states, *a, **k))
    assignments = "".join(f"V{i}=$X{i}\n" for i in range(20))
    _live(FORK + assignments + "torchrun pretrain_gpt.py --seed $X\n")
    after_fork = calls[1:]  # the first collapse is the `if`'s own
    assert len(after_fork) <= 2, f"twenty assignments on two paths compared {len(after_fork)} times"
