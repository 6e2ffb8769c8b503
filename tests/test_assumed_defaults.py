"""Inputs the script gives a default for, and modules it loads: linted with what they are assumed to
be, each finding that rests on an assumption saying so and reported one severity lower."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest
from linting import lint

from megalint.cli import main

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
NNODES_2 = "the default NNODES=2; the environment may set it"


def _lint(name: str, **kw: object):
    path = os.path.join(FIXTURES, "assumed-defaults", name)
    with open(path, encoding="utf-8") as fh:
        return lint(fh.read(), path=path, root_dir=FIXTURES, memory=False, **kw)  # type: ignore[arg-type]


def _found(name: str, code: str, **kw: object) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (f"{d.span.start_line}:{d.span.start_col}", d.severity.value, d.message, d.assumed)
        for d in _lint(name, **kw).diagnostics
        if d.code == code
    ]


def test_a_default_node_count_is_linted_with_and_lowers_the_severity():
    (ml101,) = _found("nnodes_default.sh", "ML101")
    assert ml101 == (
        "5:67",
        "warning",
        "world size 16 is not divisible by TP×PP×CP = 8×4×1 = 32 "
        "(with the default NNODES=2; the environment may set it: it works when NNODES is a multiple of 4)",
        (NNODES_2,),
    )
    (ml301,) = _found("nnodes_default.sh", "ML301")
    assert ml301[:2] == ("4:19", "info") and ml301[2].endswith(f"(with {NNODES_2})")


def test_the_same_value_fixed_by_the_script_keeps_its_severity():
    (ml101,) = _found("nnodes_fixed.sh", "ML101")
    assert ml101 == ("4:67", "error", "world size 16 is not divisible by TP×PP×CP = 8×4×1 = 32", ())


def test_a_value_given_with_assume_is_not_an_assumption():
    (ml101,) = _found("nnodes_default.sh", "ML101", assume={"NNODES": "2"})
    assert ml101[:2] == ("5:67", "error") and ml101[3] == ()


def test_a_default_process_count_flows_through_the_data_parallel_size():
    (ml626,) = _found("gpus_default_batch.sh", "ML626")
    assert ml626[:2] == ("5:46", "warning")
    assert ml626[2].startswith("global batch 36 is not a multiple of micro batch × data parallel = 2 × 8 = 16")
    assert ml626[2].endswith("(with the default GPUS_PER_NODE=8; the environment may set it)")


def test_a_failure_at_every_node_count_does_not_rest_on_the_default():
    (ml626,) = _found("fails_for_every_node_count.sh", "ML626")
    assert ml626[:2] == ("6:46", "error") and ml626[3] == ()
    assert "(with the default" not in ml626[2]


def test_defaults_reached_through_source_in_both_forms():
    (ml101,) = _found("sourced_defaults.sh", "ML101")
    assert ml101[:2] == ("5:67", "warning")
    assert ml101[2].endswith(
        "(with the defaults GPUS_PER_NODE=8 and NNODES=2; the environment may set them: "
        "it works when NNODES is a multiple of 3)"
    )


def test_a_loaded_module_is_assumed_to_set_no_tuning_variable():
    (ml745,) = _found("module_load.sh", "ML745")
    path = os.path.join(FIXTURES, "assumed-defaults", "module_load.sh")
    module = f"assuming `module load` at {path}:3 sets no NCCL/CUDA tuning variables"
    assert ml745[:2] == ("5:34", "warning") and ml745[3] == (module,)
    assert ml745[2].startswith("CUDA_DEVICE_MAX_CONNECTIONS is not set but TP = 2 on NVIDIA H100")
    assert ml745[2].endswith(f"({module})")


def test_a_missing_nccl_timeout_under_a_module_rests_on_it():
    (ml301,) = _found("module_load_two_nodes.sh", "ML301")
    path = os.path.join(FIXTURES, "assumed-defaults", "module_load_two_nodes.sh")
    assert ml301[:2] == ("3:19", "info")
    assert ml301[3] == (f"assuming `module load` at {path}:2 sets no NCCL/CUDA tuning variables",)


def test_a_variable_the_script_sets_itself_does_not_rest_on_the_module():
    (ml746,) = _found("module_load_nvte.sh", "ML746")
    assert ml746[:2] == ("3:24", "error") and ml746[3] == ()


def test_a_module_of_the_communication_stack_stays_opaque():
    result = _lint("module_load_nccl.sh")
    assert not [d for d in result.diagnostics if d.code == "ML745"]
    (undecided,) = [u for u in result.evaluation.undecided if u.rule.code == "ML745"]
    assert undecided.missing[0].path == "env_set" and "nccl/2.21-ib" in (undecided.missing[0].reason or "")


def test_a_single_node_fallback_is_not_the_job_size():
    result = _lint("single_node_fallback.sh")
    assert not [d for d in result.diagnostics if d.code == "ML101"]
    (undecided,) = [u for u in result.evaluation.undecided if u.rule.code == "ML101"]
    assert undecided.missing[0].reason == (
        "the default SLURM_NNODES=1 is the fallback of a job whose environment sets the node count"
    )


def test_a_single_node_fallback_tries_node_counts_only_up_to_the_first_that_works(monkeypatch):
    """TP 8 x PP 2 on 8 GPUs a node: 2 nodes work. A job that falls back to one node needs only to
    know that some count works; the contexts of further counts are not made."""
    from megalint.pipeline import launches

    tried: list[int] = []
    real = launches._varier

    def counting(*args, **kwargs):
        vary = real(*args, **kwargs)
        return lambda key, value: tried.append(value) or vary(key, value)

    monkeypatch.setattr(launches, "_varier", counting)
    test_a_single_node_fallback_is_not_the_job_size()
    assert tried == [1, 2]


def test_placeholder_defaults_are_not_values():
    result = _lint("placeholder_defaults.sh")
    assert [d.code for d in result.diagnostics] == []
    save = result.launches[0].bound.args["save"].value
    assert "placeholder `<path to checkpoints>`" in save.reason


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        main(list(argv))
    return out.getvalue()


@pytest.mark.parametrize("name", ["nnodes_default.sh", "module_load.sh"])
def test_explain_lists_every_assumption_a_finding_rests_on(name: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    path = os.path.join(FIXTURES, "assumed-defaults", name)
    data = json.loads(_cli("explain", "--isolated", "--no-memory", "--json", path))[0]
    fired = data["launches"][0]["rules"]["fired"]
    rests = {e["code"]: [f["assumed"] for f in e["findings"]] for e in fired}
    text = _cli("explain", "--isolated", "--no-memory", path)
    if name == "nnodes_default.sh":
        assert rests["ML101"] == [[NNODES_2]] and rests["ML301"] == [[NNODES_2]]
        assert f"        rests on: {NNODES_2}\n" in text
    else:
        assert rests["ML745"] == [[f"assuming `module load` at {path}:3 sets no NCCL/CUDA tuning variables"]]
        assert f"        rests on: assuming `module load` at {path}:3 sets no NCCL/CUDA tuning variables\n" in text


def test_the_json_output_flags_each_finding_resting_on_an_assumption():
    path = os.path.join(FIXTURES, "assumed-defaults", "nnodes_default.sh")
    found = json.loads(_cli("--isolated", "--no-memory", "--output-format", "json", "--exit-zero", path))
    by_code = {f["code"]: f for f in found}
    assert (by_code["ML101"]["severity"], by_code["ML101"]["assumed"]) == ("warning", [NNODES_2])
    assert by_code["ML301"]["assumed"] == [NNODES_2]
