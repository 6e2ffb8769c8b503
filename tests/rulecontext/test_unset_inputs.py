"""A Megatron flag value reading a variable nothing sets (ML018): reported at the read with the
assignment it most likely meant, and never for a variable the script means to take from the
environment, one the shell, scheduler or launcher provides, a script whose sources were not all
read, or a file of arguments without a launch."""

from __future__ import annotations

import os

import pytest
from linting import lint

from megalint.shell.names import provided, script_names
from megalint.source import SourceFile

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures")


def unset_findings(text: str, path: str = "t.sh", root_dir: str | None = None):
    result = lint(text, path=path, memory=False, root_dir=root_dir)
    return [d for d in result.diagnostics if d.code == "ML018"]


def fixture(name: str):
    path = os.path.join(FIXTURES, "unset-inputs", name)
    with open(path, encoding="utf-8") as fh:
        return unset_findings(fh.read(), path=path, root_dir=os.path.dirname(path))


def at(d) -> str:
    return f"{d.span.start_line}:{d.span.start_col}-{d.span.end_line}:{d.span.end_col}"


def test_a_misspelt_name_is_reported_at_the_read_with_the_name_meant() -> None:
    (d,) = fixture("typo.sh")
    assert at(d) == "5:56-5:71"
    assert d.severity == "warning"
    assert d.message.startswith("`$TOKENIZER_PATH` is never set: not in the script, not in a file it sources")
    assert "so `--tokenizer-model` is given an empty value" in d.message
    assert d.message.endswith(
        "did you mean `TOKENIZER_MODEL`, assigned at " + os.path.join(FIXTURES, "unset-inputs", "typo.sh") + ":3?"
    )


def test_the_name_meant_may_be_set_in_a_sourced_file() -> None:
    (d,) = fixture("with_source.sh")
    assert at(d) == "5:12-5:24"
    assert "did you mean `SAVE_DIR`, assigned at " in d.message and d.message.endswith("paths.sh:1?")


@pytest.mark.parametrize("name", ["meant_inputs.sh", "unread_source.sh", "fragment.sh", "paths.sh"])
def test_inputs_meant_or_not_at_hand_are_not_reported(name: str) -> None:
    assert fixture(name) == []


LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --load $CKPT\n"


def test_without_any_sign_of_an_input_the_read_is_reported() -> None:
    # The same read as in meant_inputs.sh, without what marks it as an input there.
    (d,) = unset_findings(LAUNCH)
    assert "`$CKPT` is never set" in d.message and "did you mean" not in d.message


@pytest.mark.parametrize(
    "before",
    [
        "# run as: CKPT=/ckpt bash t.sh\n",
        'echo "loading ${CKPT:-nothing}"\n',
        'if [[ -n "$CKPT" ]]; then echo resume; fi\n',
        "export CKPT\n",
        "read -r CKPT < ckpt.txt\n",
        'for arg in "$@"; do export "${arg%%=*}"="${arg#*=}"; done\n',
        'eval "$1=$2"\n',
    ],
)
def test_signs_that_the_variable_is_an_input(before: str) -> None:
    assert unset_findings(before + LAUNCH) == []


def test_a_variable_after_a_list_of_values_is_not_a_value() -> None:
    # `--data-path` takes a list: an unset `$EXTRA_OPTIONS` after it drops out harmlessly.
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --data-path /d/a $EXTRA_OPTIONS\n"
    assert unset_findings(text) == []


@pytest.mark.parametrize(
    "name", ["SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "OMPI_COMM_WORLD_RANK", "MASTER_ADDR", "HOME", "RANDOM"]
)
def test_provided_names(name: str) -> None:
    assert provided(name)


def test_names_read_from_the_text() -> None:
    names = script_names([SourceFile("a.sh", "X=1\nlocal Y=2\n: ${Z:-3}\n[ -v W ]\necho $X\n")])
    assert {"X", "Y", "Z", "W"} <= names.meant
    assert names.assigned["Y"].line == 2 and names.read == frozenset({"X", "Z"}) and not names.dynamic
