"""A string comparison that went one way on a path decides its complement later on that path."""

import pytest
from modelhelp import has_flag, load_text

from megalint.shell.equality import comparison, learn, recall

SIZES = (
    "MODEL_SIZE=$1\n"
    "if [ $MODEL_SIZE = 7B ]; then HEADS=32; elif [ $MODEL_SIZE = 70B ]; then HEADS=64; G='--num-query-groups 8'; "
    "elif [ $MODEL_SIZE = 8B ]; then HEADS=32; G='--num-query-groups 8'; fi\n"
    "if [ $MODEL_SIZE != 70B ]; then\n"
    "  torchrun pretrain_gpt.py --num-attention-heads $HEADS $G\n"
    "else\n"
    "  python convert_big.py --load x\n"
    "fi\n"
)


def test_the_branch_taken_for_a_value_decides_its_negation_later():
    _, launches = load_text(SIZES)
    torchrun = [la for la in launches if la.launcher == "torchrun"]
    # 7B and 8B reach torchrun; 70B does not, and the fall-through path is still possible.
    conds = [" and ".join(la.condition) for la in torchrun]
    assert not any("`[ $MODEL_SIZE = 70B ]` true" in c for c in conds)
    assert any("`[ $MODEL_SIZE = 8B ]` true" in c and "!= 70B" not in c for c in conds)
    assert any("`[ $MODEL_SIZE = 7B ]` true" in c and "!= 70B" not in c for c in conds)


def test_a_quoted_or_double_bracket_false_outcome_tells_the_value_differs():
    _, launches = load_text(
        'if [[ $M == big ]]; then A=--fp16; fi\nif [ "$M" != big ]; then torchrun pretrain_gpt.py --bf16 $A; fi\n'
    )
    assert len(launches) == 1
    assert not has_flag(launches[0], "--fp16")


def test_an_unquoted_false_test_leaves_the_negation_open():
    # `[ $M = big ]` also fails when M is empty (a syntax error); `[ $M != big ]` fails then too.
    _, launches = load_text(
        "if [ $M = big ]; then A=--fp8-format; fi\n"
        "if [ $M != big ]; then torchrun pretrain_gpt.py --bf16 $A; else torchrun pretrain_gpt.py --fp16 $A; fi\n"
    )
    bf16 = [la for la in launches if has_flag(la, "--bf16")]
    assert len(bf16) == 1 and bf16[0].condition == ("`[ $M = big ]` false", "`[ $M != big ]` true")


def test_a_reassigned_variable_is_asked_again():
    _, launches = load_text(
        "M=$1\nif [ $M = big ]; then M=$2; fi\n"
        "if [ $M != big ]; then torchrun pretrain_gpt.py --bf16; else torchrun pretrain_gpt.py --fp16; fi\n"
    )
    assert any(has_flag(la, "--fp16") for la in launches)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("[ $X = 7B ]", ("X", "7B", True, False)),
        ('[ "$X" != 7B ]', ("X", "7B", False, True)),
        ("[[ ${X} == 7B ]]", ("X", "7B", True, True)),
        ("[[ $X == 7* ]]", None),  # a pattern
        ("[ $X == 7B ]", None),
        ("[ $X = $Y ]", None),
        ("[ -f $X ]", None),
        ("[[ $X = 7B ]", None),
    ],
)
def test_comparison_reads_only_one_variable_against_one_word(text, expected):
    got = comparison(text)
    assert (None if got is None else tuple(got)) == expected


def test_recall_follows_bash_on_empty_operands():
    taken: dict = {}
    ne = comparison("[ $X != a ]")
    learn(taken, ne, "r", True, None)  # X is set and differs from a
    assert recall(taken, comparison("[ $X = a ]"), "r") is False
    assert recall(taken, comparison('[ "$X" != a ]'), "r") is True
    assert recall(taken, ne, "r") is None  # unquoted: an empty X fails this test too
    assert recall(taken, comparison("[ $X = a ]"), "other read") is None
    learn(taken, comparison("[ $X = b ]"), "r", True, None)
    assert recall(taken, comparison("[ $X != c ]"), "r") is True
    assert recall(taken, comparison("[ $X = c ]"), "r") is False
