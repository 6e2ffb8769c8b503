"""The constraint rules of groups G–O and Q against Megatron's observed behaviour.

Each scenario is a launch script (the environment as export lines, then torchrun with the
executed base flags plus the scenario's own) whose outcome under Megatron-LM HEAD, core 0.15.0
and core 0.12.0 was recorded by running parse_args → validate_args → TransformerConfig on an
H200 with WORLD_SIZE=8 (research notes, Appendix A). megalint must report an error from the
rule named for each version where Megatron failed in one of these groups, and no error from
these rules where Megatron passed or failed for a reason outside them (argparse, other groups).
"""

from __future__ import annotations

import pytest
from linting import lint, packaged_rules

from megalint.diagnostics import Severity

RULES = packaged_rules()
VERSIONS = ("HEAD", "0.15", "0.12")

BASE = (
    "--num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 64 --train-iters 10 "
    "--lr 1e-4 --mock-data --tokenizer-type NullTokenizer --vocab-size 1000"
)

# name, extra flags, environment, bf16 in the base, expected rule code (None = no error from
# these rules) per version HEAD, 0.15, 0.12. "other" marks a failure that belongs to another
# rule family (argparse: an unknown flag or choice in that version).
SCENARIOS = [
    ("tp2-no-max-connections", "--tensor-model-parallel-size 2", {}, True, ("ML745", "ML745", "ML745")),
    ("fp16-and-bf16", "--fp16", None, True, ("ML650", "ML650", "ML650")),
    ("seq-over-max-position", "--seq-length 2048", None, True, ("ML712", "ML712", "ML712")),
    ("cp2-seq-1022", "--context-parallel-size 2 --seq-length 1022", None, True, ("ML677", "ML677", "ML677")),
    (
        "ep-tp-without-sp",
        "--num-experts 8 --expert-model-parallel-size 2 --tensor-model-parallel-size 2 --disable-bias-linear",
        None,
        True,
        (None, "ML692", "ML692"),
    ),
    (
        "moe-bias-etp",
        "--num-experts 8 --tensor-model-parallel-size 2 --sequence-parallel",
        None,
        True,
        ("ML687", "ML687", None),
    ),
    ("topk-1", "--num-experts 8 --moe-router-topk 1", None, True, ("ML681", "ML681", "ML681")),
    ("moe-ffn-without-experts", "--moe-ffn-hidden-size 1024", None, True, ("ML680", "ML680", None)),
    (
        "capacity-sinkhorn",
        "--num-experts 8 --moe-expert-capacity-factor 1.0 --moe-router-load-balancing-type sinkhorn",
        None,
        True,
        ("ML682", "ML682", "ML682"),
    ),
    (
        "shared-overlap-allgather",
        "--num-experts 8 --moe-shared-expert-intermediate-size 1024 --moe-shared-expert-overlap",
        None,
        True,
        ("ML684", "ML684", "ML684"),
    ),
    (
        "ep-overlap-without-ep",
        "--num-experts 8 --moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm",
        None,
        True,
        ("ML686", "ML686", "other"),
    ),
    (
        "deepep-alltoall",
        "--num-experts 8 --moe-enable-deepep --moe-token-dispatcher-type alltoall",
        None,
        True,
        ("ML685", "ML685", "ML685"),
    ),
    (
        "selective-with-method",
        "--recompute-granularity selective --recompute-method uniform",
        None,
        True,
        ("ML666", "ML666", "ML666"),
    ),
    (
        "full-without-method",
        "--recompute-granularity full --recompute-num-layers 1",
        None,
        True,
        ("ML667", "ML667", "ML667"),
    ),
    (
        "full-without-num-layers",
        "--recompute-granularity full --recompute-method uniform",
        None,
        True,
        ("ML668", "ML668", "ML668"),
    ),
    (
        "distribute-saved-tp1",
        "--distribute-saved-activations --recompute-granularity full "
        "--recompute-method uniform --recompute-num-layers 1",
        None,
        True,
        ("ML671", "ML671", "ML671"),
    ),
    ("fp8-local-impl", "--fp8-format hybrid --transformer-impl local", None, True, (None, None, None)),
    ("fp8-param-gather-no-distopt", "--fp8-format hybrid --fp8-param-gather", None, True, ("ML654", "ML654", "ML654")),
    (
        "fp8-param-gather-no-fp8",
        "--fp8-param-gather --use-distributed-optimizer",
        None,
        True,
        ("ML655", "ML655", "ML655"),
    ),
    (
        "delayed-first-last-bf16",
        "--fp8-format hybrid --fp8-recipe delayed --first-last-layers-bf16",
        None,
        True,
        ("ML658", "ML658", "ML658"),
    ),
    ("fp8-and-fp4", "--fp8-format hybrid --fp4-format e2m1", None, True, ("ML656", "ML656", "other")),
    ("use-mcore-models", "--use-mcore-models", None, True, (None, None, None)),
    ("checkpoint-activations", "--checkpoint-activations", None, True, ("ML665", "ML665", "ML665")),
    ("mtp-learned-absolute", "--mtp-num-layers 1", None, True, ("ML701", "ML701", "ML701")),
    ("mrope-without-section", "--position-embedding-type mrope", None, True, ("ML713", "ML713", "ML713")),
    ("attention-backend-local", "--attention-backend local", None, True, ("ML705", "ML705", "ML705")),
    ("fp32-residual-fp32", "--fp32-residual-connection", None, False, ("ML653", "ML653", "ML653")),
    ("save-without-interval", "--save /tmp/ckpt", None, True, ("ML720", "ML720", "ML720")),
    (
        "cpu-offload-pp2",
        "--cpu-offloading-num-layers 2 --pipeline-model-parallel-size 2",
        None,
        True,
        ("ML674", "other", "other"),
    ),
    ("hybrid-pattern", "--hybrid-layer-pattern M*M*", None, True, (None, "other", "other")),
    ("32-experts", "--num-experts 32", None, True, (None, None, None)),
    ("enable-cuda-graph", "--enable-cuda-graph", None, True, (None, None, None)),
]

DEFAULT_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}


def _script(extra: str, env: dict[str, str] | None, bf16: bool) -> str:
    env = DEFAULT_ENV if env is None else env
    lines = ["#!/bin/bash"] + [f"export {k}={v}" for k, v in env.items()]
    # Quoted so that a hybrid pattern's '*' is not globbed by the shell.
    words = " ".join(f"'{w}'" if "*" in w else w for w in extra.split())
    lines.append(f"torchrun --nproc_per_node 8 pretrain_gpt.py {BASE}{' --bf16' if bf16 else ''} {words}")
    return "\n".join(lines) + "\n"


def _mine(code: str) -> bool:
    n = int(code[2:])
    return 650 <= n <= 749


def _errors(script: str, version: str) -> set[str]:
    result = lint(script, version, "h200", path="scenario.sh", memory=False)
    assert not result.evaluation.failures, result.evaluation.failures
    return {d.code for d in result.diagnostics if _mine(d.code) and d.severity == Severity.ERROR}


CASES = [
    (name, extra, env, bf16, v, expected[i])
    for name, extra, env, bf16, expected in SCENARIOS
    for i, v in enumerate(VERSIONS)
]


@pytest.mark.parametrize("name,extra,env,bf16,version,expected", CASES, ids=[f"{c[0]}@{c[4]}" for c in CASES])
def test_scenario_verdict(name, extra, env, bf16, version, expected):
    got = _errors(_script(extra, env, bf16), version)
    if expected in (None, "other"):
        assert got == set(), f"{name}@{version}: Megatron passes these checks, megalint says {sorted(got)}"
    else:
        assert expected in got, f"{name}@{version}: expected {expected}, got {sorted(got)}"
        assert got == {expected}, f"{name}@{version}: extra errors {sorted(got - {expected})}"


def test_agreement_counts():
    """Summary: how many scenario × version verdicts agree (the per-case test names the misses)."""
    agree = 0
    total = 0
    by_version = {v: [0, 0] for v in VERSIONS}
    for _name, extra, env, bf16, version, expected in CASES:
        got = _errors(_script(extra, env, bf16), version)
        ok = (got == set()) if expected in (None, "other") else (got == {expected})
        total += 1
        agree += ok
        by_version[version][0] += ok
        by_version[version][1] += 1
    print(f"\nagreement {agree}/{total}: " + ", ".join(f"{v} {a}/{t}" for v, (a, t) in by_version.items()))
    assert agree == total


def test_warnings_where_megatron_only_warns():
    """The scenarios Megatron passes with a warning or a silent no-op get a warning/info here."""
    cases = [
        ("--fp8-format hybrid --transformer-impl local", "ML662"),
        (
            "--num-experts 8 --expert-model-parallel-size 2 --tensor-model-parallel-size 2 --disable-bias-linear",
            "ML693",
        ),
        ("--num-experts 32", "ML694"),
        ("--hybrid-layer-pattern M*M*", "ML703"),
    ]
    for extra, code in cases:
        result = lint(_script(extra, None, True), "HEAD", "h200", path="s.sh", memory=False)
        found = [d for d in result.diagnostics if d.code == code]
        assert found and found[0].severity in (Severity.WARNING, Severity.INFO), (extra, code)


def test_unknown_inputs_stay_silent():
    """A rule whose verdict depends on something the script does not fix says nothing."""
    # The GPU is unknown and CP > 1 needs the GPU generation from 0.13 on.
    script = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --context-parallel-size 2\n"
    result = lint(script, "HEAD", path="s.sh", memory=False)
    assert not [d for d in result.diagnostics if d.code == "ML745"]
    # The environment variable's value comes from outside.
    script = (
        "export CUDA_DEVICE_MAX_CONNECTIONS=$CONN\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --tensor-model-parallel-size 2\n"
    )
    result = lint(script, "HEAD", "h100", path="s.sh", memory=False)
    assert not [d for d in result.diagnostics if d.code == "ML745"]
    # Flags after "$@" may supply the missing --save-interval.
    script = 'torchrun pretrain_gpt.py --num-layers 8 --save /ckpt "$@"\n'
    result = lint(script, path="s.sh", memory=False)
    assert not [d for d in result.diagnostics if d.code == "ML720"]


def test_removing_a_flag_takes_its_quoted_value_whole():
    from megalint.fix import apply_edits, bash_parses

    script = 'torchrun pretrain_gpt.py --hybrid-override-pattern "M*M*" --hybrid-layer-pattern "M*M*"\n'
    result = lint(script, path="s.sh", memory=False)
    d = next(d for d in result.diagnostics if d.code == "ML704")
    fixed = apply_edits(script, d.fix.edits)
    assert fixed == 'torchrun pretrain_gpt.py --hybrid-layer-pattern "M*M*"\n'
    assert bash_parses(fixed)


def test_rule_codes_and_constraint_references():
    mine = [r for r in RULES if _mine(r.code)]
    assert len(mine) >= 40
    for r in mine:
        refs = [x for x in (r.docs.references or []) if str(x).startswith("constraints:")]
        assert refs, f"{r.code} names no constraint row"
        assert r.docs.sources, f"{r.code} cites no source"
