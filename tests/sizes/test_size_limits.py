"""An out-of-range size is a binding problem and an unknown value: the derivations and the
memory estimate that read it are undecided, with Megatron's reason."""

from __future__ import annotations

import pytest

from megalint.megatron.argv_words import literal_argv
from megalint.megatron.bind import bind
from megalint.megatron.bound import ProblemKind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.derived import derive
from megalint.megatron.sizes import INT64_MAX, size_problem
from megalint.memory.launch_view import launch_memory
from megalint.memory.suggest import _powers
from megalint.shell.values import Unknown

GPT = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1"


@pytest.mark.parametrize("version", ["HEAD", "0.15", "0.8"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_zero_or_negative_parallel_size_is_unknown_downstream(version: str, value: str) -> None:
    bound = bind(literal_argv(f"{GPT} --tensor-model-parallel-size {value}"), Catalogue.load(version))
    [problem] = bound.problems_of(ProblemKind.INVALID_SIZE)
    assert problem.option == "--tensor-model-parallel-size" and problem.value == value
    assert isinstance(bound.value("tensor_model_parallel_size"), Unknown)
    dp = derive(bound, 8)["data_parallel_size"]
    assert isinstance(dp.value, Unknown) and "is not a positive integer" in dp.value.reason
    memory, why = launch_memory(bound, 8)
    assert memory is None and why is not None and "is not a positive integer" in why


def test_defaults_and_valid_sizes_are_no_problem() -> None:
    bound = bind(literal_argv(f"{GPT} --tensor-model-parallel-size 2 --mtp-num-layers 0"), Catalogue.load("HEAD"))
    assert not bound.problems_of(ProblemKind.INVALID_SIZE)
    assert derive(bound, 8)["data_parallel_size"].value == 4


def test_messages() -> None:
    assert size_problem("tensor_model_parallel_size", "--tp", 0) == (
        "argument --tp: 0 is not a positive integer; Megatron divides by it "
        "(world size % (TP×PP×CP), megatron/training/arguments.py:432): ZeroDivisionError"
    )
    assert size_problem("decoder_first_pipeline_num_layers", "--x", 0) is None  # a rule of its own
    assert size_problem("num_layers", "--num-layers", -3) == (
        "argument --num-layers: -3 is not at least 0; Megatron builds this many of them; a negative count is no model"
    )
    assert size_problem("num_layers", "--num-layers", 0) is None
    assert size_problem("seed", "--seed", INT64_MAX) is None
    assert "a 19-digit value does not fit" in (size_problem("seed", "--seed", INT64_MAX + 1) or "")
    assert size_problem("lr", "--lr", float("nan")) is None


def test_doubling_a_size_below_one_stops() -> None:
    assert _powers(-1, 8) == [] and _powers(0, 8) == []
    assert _powers(2, 8) == [2, 4, 8]
