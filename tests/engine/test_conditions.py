"""The reduction of a finding's branch condition (megalint/engine/conditions.py)."""

from __future__ import annotations

from megalint.engine.conditions import reduce, shown

A, NOT_A = "`A` true", "`A` false"
B, NOT_B = "`B` true", "`B` false"
C = "`C` true"
ARM = "case $X matches a"


def test_a_test_the_finding_holds_either_way_is_left_out() -> None:
    assert reduce([(A, B), (NOT_A, B)]) == [(B,)]


def test_a_path_containing_another_adds_nothing() -> None:
    assert reduce([(A,), (A, B)]) == [(A,)]


def test_a_or_not_a_and_b_is_a_or_b() -> None:
    assert reduce([(A,), (NOT_A, B)]) == [(A,), (B,)]
    assert reduce([(A, C), (NOT_A, B, C)]) == [(A, C), (B, C)]


def test_every_outcome_is_no_condition() -> None:
    assert reduce([(A, B), (A, NOT_B), (NOT_A,)]) == [()]
    assert shown(reduce([(A,), (NOT_A,)])) is None
    assert shown(reduce([(A,), ()])) is None


def test_a_case_arm_has_no_single_opposite() -> None:
    assert reduce([(ARM, A), (NOT_A,)]) == [(ARM,), (NOT_A,)]
    assert reduce([(ARM,), ("case $X matches no arm",)]) == [(ARM,), ("case $X matches no arm",)]


def test_paths_are_shown_joined_and_a_long_one_counted() -> None:
    assert shown([(A,), (B, C)]) == "(`A` true) or (`B` true and `C` true)"
    assert shown([("`w` true", "`x` true", A, B)]) == "`A` true and `B` true (and 2 other conditions)"
    assert shown([("`x` true", A, B)]) == "`x` true and `A` true and `B` true"
