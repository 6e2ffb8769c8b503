"""The four headline rules on the idioms real launch scripts use, and on the traps they must not fall into.

fixtures/headline/<rule>/ holds one small script per idiom (flags in a string expanded unquoted, in
a bash array, through sbatch and srun, a here-document, a launcher in a variable, eval, `${X:-d}`
and `$(( ))`, a sourced file). Each must give exactly the expected findings of the headline rules:
code, start and end, the text found there, and the numbers of the message.

fixtures/traps/ reproduces what made earlier checkers cry wolf on real scripts (precision branches,
node counts from the environment, the DeepSpeed pipeline, `--kv-channels`, guarded sequence
parallelism, per-node launchers, one task per GPU, disagreeing GPU hints, Ascend NPUs, other
fabrics): the whole command line must report nothing from these rules and no error.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest
from linting import lint

from megalint.cli import main

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
HEADLINE = ("ML101", "ML201", "ML202", "ML301")


def lint_fixture(rel: str, version: str | None = None):
    path = os.path.join(FIXTURES, rel)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return lint(text, version, path=path, root_dir=FIXTURES)


def headline(result):
    return [d for d in result.diagnostics if d.code in HEADLINE]


def text_at(result, span) -> str:
    return result.sources[span.path].text[span.start : span.end]


W, F, V, N = (
    "headline/world-size-divisibility/",
    "headline/fp8-requires-hopper/",
    "headline/overlap-param-gather-on-volta/",
    "headline/missing-nccl-ib-timeout/",
)

# fixture, code, (line, col, end_line, end_col), text at the span, words the message must hold
CASES = [
    # world-size-divisibility
    (W + "string.sh", "ML101", (6, 91, 6, 94), "$PP", ["world size 8", "4×4×1 = 16"]),
    (W + "array.sh", "ML101", (9, 36, 9, 37), "3", ["world size 16", "4×3×1 = 12"]),
    (W + "sbatch_srun.slurm", "ML101", (9, 100, 9, 101), "2", ["world size 24", "8×2×1 = 16"]),
    (W + "srun_per_gpu.sbatch", "ML101", (6, 91, 6, 92), "2", ["world size 12", "4×2×1 = 8"]),
    (W + "heredoc.sh", "ML101", (9, 129, 9, 130), "2", ["world size 8", "8×1×2 = 16"]),
    (W + "launcher_eval.sh", "ML101", (4, 89, 4, 91), "16", ["world size 8", "expert grid", "1×16×1 = 16"]),
    (W + "defaults_arith.sh", "ML101", (8, 36, 8, 39), "$PP", ["world size 8", "4×3×1 = 12"]),
    (W + "sourced/train.sh", "ML101", (3, 109, 3, 112), "$PP", ["world size 8", "2×3×1 = 6"]),
    # fp8-requires-hopper
    (F + "string.sh", "ML201", (3, 32, 3, 38), "hybrid", ["--fp8-format hybrid", "delayed", "8.9", "has 8.0"]),
    (F + "array.sh", "ML201", (6, 18, 6, 22), "e4m3", ["tensorwise", "8.9", "NVIDIA A100 has 8.0"]),
    (F + "sbatch_srun.slurm", "ML201", (8, 57, 8, 61), "e4m3", ["mxfp8", "10.x", "NVIDIA H100 has 9.0"]),
    (F + "heredoc.sh", "ML201", (8, 85, 8, 91), "hybrid", ["8.9", "Tesla V100 has 7.0"]),
    (F + "default_case.sh", "ML201", (7, 41, 7, 47), "hybrid", ["delayed", "has 8.0"]),
    (F + "eval_cmd.sh", "ML201", (4, 62, 4, 66), "e2m1", ["--fp4-format e2m1", "10.0", "has 9.0"]),
    (F + "sourced/train.sh", "ML201", (2, 32, 2, 38), "hybrid", ["blockwise", "9.0", "has 8.0"]),
    # overlap-param-gather-on-volta
    (V + "string.sh", "ML202", (5, 61, 5, 83), "--overlap-param-gather", ["V100", "set in the script"]),
    (V + "array.sh", "ML202", (8, 5, 8, 26), "--overlap-grad-reduce", ["V100", "TP > 1"]),
    (
        V + "sbatch_srun.slurm",
        "ML202",
        (9, 70, 9, 91),
        "--overlap-grad-reduce",
        ["V100-SXM2-16GB", "set in the script"],
    ),
    (V + "eval_default.sh", "ML202", (5, 99, 5, 107), "$OVERLAP", ["--overlap-grad-reduce", "TP > 1"]),
    # missing-nccl-ib-timeout
    (N + "string.sh", "ML301", (6, 60, 6, 67), "$NNODES", ["2 nodes"]),
    (N + "array.sh", "ML301", (5, 14, 5, 15), "4", ["4 nodes"]),
    (N + "sbatch_srun.slurm", "ML301", (7, 43, 7, 56), "$SLURM_NNODES", ["8 nodes"]),
    (N + "heredoc.sh", "ML301", (6, 17, 6, 18), "4", ["4 nodes"]),
    (N + "heredoc_variable.sh", "ML301", (8, 43, 8, 57), "\\$SLURM_NNODES", ["4 nodes"]),
    (N + "arith_launcher_var.sh", "ML301", (6, 84, 6, 91), "$NNODES", ["2 nodes"]),
    (N + "sourced/train.sh", "ML301", (3, 51, 3, 58), "$NNODES", ["2 nodes"]),
]


@pytest.mark.parametrize("fixture,code,where,text,words", CASES, ids=[c[0].split("/", 1)[1] for c in CASES])
def test_headline_rule_fires_at_the_exact_span(fixture, code, where, text, words):
    result = lint_fixture(fixture)
    assert not result.evaluation.failures
    found = headline(result)
    assert [d.code for d in found] == [code], [(d.code, d.message) for d in found]
    d = found[0]
    s = d.span
    assert (s.start_line, s.start_col, s.end_line, s.end_col) == where
    assert text_at(result, s) == text
    for w in words:
        assert w in d.message, d.message
    assert "\n" not in d.message


def test_every_headline_rule_covers_string_array_and_scheduler_idioms():
    by_rule: dict[str, set[str]] = {}
    for fixture, code, *_ in CASES:
        name = os.path.basename(fixture)
        kind = (
            "string"
            if name.startswith("string")
            else "array"
            if name.startswith("array")
            else "scheduler"
            if name.startswith(("sbatch", "srun", "heredoc"))
            else "other"
        )
        by_rule.setdefault(code, set()).add(kind)
    for code in HEADLINE:
        assert {"string", "array", "scheduler"} <= by_rule[code], code


def test_world_size_labels_name_the_launch_quantities():
    d = headline(lint_fixture(W + "sbatch_srun.slurm"))[0]
    labels = {(lab.span.start_line, lab.span.start_col): lab.text for lab in d.labels}
    assert labels[(8, 63)] == "8 processes per node"  # $GPUS_PER_NODE in the launcher string
    assert labels[(8, 87)] == "3 nodes"  # $SLURM_NNODES, known from `#SBATCH --nodes=3`
    assert labels[(9, 67)] == "TP = 8"  # PP = 2 breaks the division and is the place
    assert d.help.startswith("world sizes that fit this layout: 16 or 32 GPUs")


def test_a_default_value_is_labelled_once():
    d = headline(lint_fixture(W + "defaults_arith.sh"))[0]
    tp = [lab for lab in d.labels if lab.text.startswith("TP = 4 set here")]
    assert [(line.span.start_line, line.span.start_col, line.span.end_col) for line in tp] == [(4, 4, 12)]


def test_world_size_follows_the_megatron_version():
    # 0.8 lowers PP to world ÷ TP instead of stopping (arguments.py:165@core_v0.8.0).
    assert headline(lint_fixture(W + "string.sh", "0.8")) == []
    assert [d.code for d in headline(lint_fixture(W + "string.sh", "0.15"))] == ["ML101"]


def test_fp8_help_follows_what_the_gpu_can_do():
    h100 = headline(lint_fixture(F + "sbatch_srun.slurm"))[0]
    assert "--fp8-recipe tensorwise or delayed" in h100.help and h100.fix is None
    a100 = headline(lint_fixture(F + "array.sh"))[0]
    assert "bf16" in a100.help and "already given" in a100.help
    v100 = headline(lint_fixture(F + "heredoc.sh"))[0]
    assert "fp16" in v100.help and v100.fix is None  # no bf16 on Volta: no --bf16 fix


def test_gpu_type_in_gpus_per_node_points_at_the_type():
    d = headline(lint_fixture(F + "heredoc.sh"))[0]
    gpu = [lab for lab in d.labels if lab.text.startswith("GPU taken as")]
    assert [(line.span.start_line, line.span.start_col, line.span.end_col) for line in gpu] == [(7, 25, 29)]


def test_overlap_rule_is_a_note_and_skips_fsdp():
    d = headline(lint_fixture(V + "array.sh"))[0]
    assert d.severity.value == "info"
    text = (
        "#SBATCH --constraint=v100-32g\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --use-torch-fsdp2 --overlap-grad-reduce --fp16\n"
    )
    result = lint(text, path="x.sh")
    assert result.evaluation.outcomes["ML202"] == {"passed"}


# -- what the shell front end does not read yet ------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="a value expanded inside an unquoted here-document maps to the "
    "assignment it came from (TP=8 at 2:4), not to `$TP` in the body",
)
def test_heredoc_expansion_points_into_the_heredoc():
    d = headline(lint_fixture(W + "heredoc_variable.sh"))[0]
    assert (d.span.start_line, d.span.start_col, d.span.end_col) == (6, 91, 94)


@pytest.mark.xfail(
    strict=True,
    reason="the `#SBATCH` lines of a here-document without expansions are "
    "read from the outer file (read_headers on the whole source), so "
    "they are lost: no GPU and no node count",
)
def test_headers_of_a_literal_heredoc_are_read():
    found = headline(lint_fixture(F + "heredoc_literal.sh"))
    assert [(d.code, d.span.start_line) for d in found] == [("ML201", 6)]


# -- traps ---------------------------------------------------------------------------------------

TRAPS = os.path.join(FIXTURES, "traps")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_traps_give_no_headline_finding_and_no_error():
    assert len(os.listdir(TRAPS)) >= 15
    code, out, err = run_cli("--isolated", "--output-format", "json", "--no-memory", TRAPS)
    assert err == ""
    found = json.loads(out)
    assert [f for f in found if f["code"] in HEADLINE] == []
    assert not [f for f in found if f["severity"] in ("error", "warning")]
    assert code == 0


UNDECIDED = [
    ("pai_nodes_from_world_size.sh", {"ML101", "ML301"}),
    ("slurm_nnodes_without_header.sh", {"ML101", "ML301"}),
    ("gpu_count_from_nvidia_smi.sh", {"ML101"}),
    ("unread_sourced_env.sh", {"ML301"}),
    ("site_environment_module.sh", {"ML301"}),
]


@pytest.mark.parametrize("fixture,codes", UNDECIDED, ids=[u[0] for u in UNDECIDED])
def test_unknown_inputs_leave_rules_undecided(fixture, codes):
    result = lint_fixture("traps/" + fixture)
    assert headline(result) == []
    undecided = {u.rule.code for u in result.evaluation.undecided}
    assert codes <= undecided


def test_the_scheduler_line_decides_the_gpu_over_a_comment():
    # The job runs on what it requests: a stale comment naming another GPU does not change that.
    result = lint_fixture("headline/fp8_gpu_comment_disagrees.sh")
    assert [d.code for d in headline(result)] == ["ML201"]
    assert "A100" in headline(result)[0].message
    volta = lint_fixture("traps/volta_comment_disagrees.sh")
    assert headline(volta) == []
    assert "ML202" not in {u.rule.code for u in volta.evaluation.undecided}


def test_the_precision_branches_are_decided_one_by_one():
    result = lint_fixture("traps/precision_branches.sh")
    assert len(result.launches) == 3
    assert [r.context["args"]["fp16"] for r in result.launches] == [True, False, False]
    assert [r.context["args"]["bf16"] for r in result.launches] == [False, True, False]


def test_consistent_world_sizes_are_checked_and_pass():
    for fixture, world in (
        ("per_node_launcher.slurm", 32),
        ("srun_task_per_gpu.sbatch", 64),
        ("deepspeed_pipeline.slurm", 192),
    ):
        result = lint_fixture("traps/" + fixture)
        assert [r.launch.world_size.value for r in result.launches] == [world]
        assert "passed" in result.evaluation.outcomes["ML101"]


def test_other_fabrics_are_checked_and_pass():
    for fixture in ("ascend_npu.sh", "efa_no_infiniband.sh", "ib_disabled.sh"):
        result = lint_fixture("traps/" + fixture)
        assert result.launches[0].launch.nnodes.value == 2
        assert result.evaluation.outcomes["ML301"] == {"passed"}, fixture
