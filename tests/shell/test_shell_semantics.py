"""What bash does that the model once got wrong: brace expansion, short-circuit arithmetic, and a
`source` chain past the depth limit (unknown, never a stale value called a cycle)."""

from __future__ import annotations

from pathlib import Path

import pytest

from megalint.shell import arith
from megalint.shell.analyze import analyze_text
from megalint.shell.facts import UnreadReason
from tests.linting import codes


def _echoed(script: str) -> list[str | None]:
    facts = analyze_text("b.sh", script, skip_unread=False)
    return [w.text for p in facts.paths for c in p.commands if c.words[0].text == "run" for w in c.words[1:]]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("{1..3}", ["1", "2", "3"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{1..9..2}", ["1", "3", "5", "7", "9"]),
        ("{1..9..-4}", ["1", "5", "9"]),
        ("{01..3}", ["01", "02", "03"]),
        ("{a..c}", ["a", "b", "c"]),
        ("{2,4,8}", ["2", "4", "8"]),
        ("x{a,b}y", ["xay", "xby"]),
        ("{a,b}{1,2}", ["a1", "a2", "b1", "b2"]),
        ("{a,}", ["a"]),
        ("{a} {} '{1,2}' \"{1..2}\"", ["{a}", "{}", "{1,2}", "{1..2}"]),
        ("{1..a}", ["{1..a}"]),
    ],
)
def test_brace_expansion_gives_the_words_bash_gives(words: str, expected: list[str]) -> None:
    assert _echoed(f"run {words}\n") == expected


def test_brace_group_with_an_expansion_is_unknown_not_literal() -> None:
    facts = analyze_text("b.sh", "run {$A,b}\n", skip_unread=False)
    (word,) = [w for p in facts.paths for c in p.commands for w in c.words[1:]]
    assert word.splat is not None and "brace expansion" in word.splat.reason


def test_brace_range_past_the_word_limit_is_unknown() -> None:
    facts = analyze_text("b.sh", "run {1..100000000}\n", skip_unread=False)
    (word,) = [w for p in facts.paths for c in p.commands for w in c.words[1:]]
    assert word.splat is not None


def test_assignment_value_is_not_brace_expanded() -> None:
    facts = analyze_text("b.sh", "X={1..3}\n", skip_unread=False)
    assert {p.variables["X"].value.text for p in facts.paths} == {"{1..3}"}


def test_for_over_a_brace_range_is_no_invalid_flag_value() -> None:
    script = (
        "for TP in {1..2}; do\n"
        "  torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --tensor-model-parallel-size $TP\n"
        "done\n"
    )
    assert "ML503" not in codes(script)


@pytest.mark.parametrize(
    "expression",
    ["M > 0 ? G / M : 1", "M != 0 && G / M > 2", "M == 0 || G / M", "M ? (X = G / M) : 2", "0 && (Y = 1)"],
)
def test_the_branch_bash_does_not_take_is_not_evaluated(expression: str) -> None:
    assigned: list[str] = []
    value = arith.evaluate(expression, {"M": 0, "G": 8}.__getitem__, lambda n, v: assigned.append(n))
    assert value in (0, 1, 2) and not assigned


def test_the_branch_taken_still_fails() -> None:
    with pytest.raises(arith.ArithError, match="division by 0"):
        arith.evaluate("M == 0 ? G / M : 1", {"M": 0, "G": 8}.__getitem__)
    with pytest.raises(arith.ArithError, match="division by 0"):
        arith.evaluate("M == 0 && G / M", {"M": 0, "G": 8}.__getitem__)


def test_guarded_division_in_a_script_is_no_arithmetic_error() -> None:
    script = "M=0\nG=8\nA=$(( M > 0 ? G / M : 1 ))\nB=$(( M != 0 && G / M > 2 ))\nrun $A $B\n"
    facts = analyze_text("b.sh", script, skip_unread=False)
    assert not [f for f in facts.findings if f.kind == "arithmetic-error"]
    assert _echoed(script) == ["1", "0"]


def test_source_chain_past_the_limit_is_unknown_not_stale(tmp_path: Path) -> None:
    depth = 20
    for i in range(depth):
        (tmp_path / f"s{i}.sh").write_text(f"TP={i}\nsource ./s{i + 1}.sh\n")
    (tmp_path / f"s{depth}.sh").write_text("TP=4\n")
    main = tmp_path / "main.sh"
    main.write_text("source ./s0.sh\nrun $TP\n")
    facts = analyze_text(str(main), main.read_text(), skip_unread=False)
    (unread,) = facts.unread_sources
    assert unread.reason is UnreadReason.TOO_DEEP
    assert "cycle" not in unread.note and "nested more than" in unread.note
    (tp,) = [p.variables["TP"] for p in facts.paths]
    why = tp.unknown or tp.value.unknown
    assert why is not None and "nested more than" in why.reason
    assert [w.text for p in facts.paths for c in p.commands if c.words[0].text == "run" for w in c.words[1:]] == [None]


def test_a_real_cycle_is_still_called_one(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("source ./b.sh\n")
    (tmp_path / "b.sh").write_text("source ./a.sh\n")
    facts = analyze_text(str(tmp_path / "a.sh"), "source ./b.sh\n", skip_unread=False)
    assert [u.reason for u in facts.unread_sources] == [UnreadReason.CYCLE]
