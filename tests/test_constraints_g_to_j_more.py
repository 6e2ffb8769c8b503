"""More cases for the group G–J constraint rules ML770–ML784 than their examples hold.

An unknown value (a script argument, an unset variable) or a "$@" that may supply the missing
flag must keep a rule silent; the version ranges must follow the Megatron-LM releases where the
check exists (each case below names the release where the check appears or the name changes).
"""

from __future__ import annotations

import pytest
from linting import lint

HEAD = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 "


def codes(script: str, version: str = "HEAD", gpu: str = "h100") -> list[str]:
    result = lint(script + "\n", version, gpu, path="job.sh")
    assert not result.evaluation.failures, result.evaluation.failures
    return [d.code for d in result.diagnostics]


# A "$@" after the flags may add the flag whose absence the rule reports: no finding.
OPEN_ARGS = [
    ("ML770", "--num-experts 8 --moe-router-padding-for-fp8", "0.15"),
    ("ML772", "--bf16 --fp8-format hybrid --recompute-granularity selective --recompute-modules layernorm", "HEAD"),
    ("ML773", "--context-parallel-size 2 --hybrid-context-parallel", "HEAD"),
    (
        "ML774",
        "--disable-bias-linear --no-rope-fusion --multi-latent-attention --experimental-attention-variant dsa "
        "--context-parallel-size 2",
        "HEAD",
    ),
    ("ML776", "--num-experts 8 --moe-flex-dispatcher-backend ncclep", "HEAD"),
    ("ML782", "--num-experts 8 --moe-dispatch-fwd-dtype mxfp8", "HEAD"),
    ("ML778", "--num-experts 64 --moe-router-topk 6 --moe-router-group-topk 3", "HEAD"),
    ("ML779", "--num-experts 8 --moe-router-load-balancing-type aux_loss seq_aux_loss", "HEAD"),
    ("ML783", "--moe-latent-size 512", "HEAD"),
    ("ML784", "--transformer-impl inference_optimized --num-experts 8", "HEAD"),
]


@pytest.mark.parametrize("code,flags,version", OPEN_ARGS, ids=[c for c, _, _ in OPEN_ARGS])
def test_absent_flag_may_come_from_script_arguments(code, flags, version):
    assert code in codes(HEAD + flags, version)
    assert code not in codes(HEAD + flags + ' "$@"', version)


# Flags written after a "$@" still decide the rule (the last occurrence wins; a list flag
# written before it could be extended by it).
GIVEN_WITH_OPEN_ARGS = [
    ("ML771", "--recompute-granularity selective --recompute-modules core_attn mlp_act"),
    ("ML773", "--pipeline-model-parallel-size 2 --context-parallel-size 2 --hybrid-context-parallel"),
    (
        "ML774",
        "--disable-bias-linear --no-rope-fusion --multi-latent-attention --experimental-attention-variant dsa "
        "--context-parallel-size 2 --cp-comm-type p2p",
    ),
    ("ML775", "--num-experts 8 --moe-shared-expert-intermediate-size 0"),
    ("ML776", "--num-experts 8 --moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend ncclep"),
    ("ML778", "--num-experts 64 --moe-router-topk 6 --moe-router-num-groups 6 --moe-router-group-topk 3"),
    ("ML780", "--num-experts 8 --moe-router-load-balancing-type sinkhorn --moe-aux-loss-coeff 0.01"),
    ("ML781", "--num-experts 8 --moe-layer-freq '[1]*7'"),
    ("ML783", "--num-experts 8 --moe-latent-size 0"),
]


@pytest.mark.parametrize("code,flags", GIVEN_WITH_OPEN_ARGS, ids=[c for c, _ in GIVEN_WITH_OPEN_ARGS])
def test_given_flags_decide_despite_script_arguments(code, flags):
    assert code in codes(HEAD + '"$@" ' + flags)


# A value read from a variable megalint cannot resolve leaves the rule undecided.
UNKNOWN_VALUES = [
    ("ML771", "--recompute-granularity selective --recompute-modules $MODULES"),
    ("ML775", "--num-experts 8 --moe-shared-expert-intermediate-size $SHARED"),
    ("ML778", "--num-experts 64 --moe-router-num-groups $GROUPS --moe-router-group-topk 3"),
    ("ML780", "--num-experts 8 --moe-router-load-balancing-type $BALANCE --moe-aux-loss-coeff 0.01"),
    ("ML781", "--num-experts 8 --moe-layer-freq $PATTERN"),
    ("ML784", "--transformer-impl $IMPL --num-experts 8"),
]


@pytest.mark.parametrize("code,flags", UNKNOWN_VALUES, ids=[c for c, _ in UNKNOWN_VALUES])
def test_unknown_value_is_undecided(code, flags):
    assert code not in codes(HEAD + flags)


def test_padding_for_fp8_rule_follows_the_flag_rename():
    flags = HEAD + "--num-experts 8 --moe-token-dispatcher-type alltoall --moe-router-padding-for-fp8"
    # 0.13-0.15: its own check and message; from 0.16 the alias is checked by ML664.
    assert "ML770" in codes(flags, "0.13")
    assert "ML770" in codes(flags, "0.15")
    assert "ML770" not in codes(flags, "0.16")
    assert "ML664" in codes(flags, "0.16")
    # fp4 does not satisfy the 0.15 check, which reads only fp8.
    assert "ML770" in codes(flags + " --fp4-format e2m1", "0.15", gpu="b200")


@pytest.mark.parametrize(
    "module,first", [("shared_experts", "0.14"), ("gdn_norm_out", "0.19"), ("gdp_qkv", "HEAD"), ("mhc", "HEAD")]
)
def test_recompute_module_names_by_release(module, first):
    flags = HEAD + f"--recompute-granularity selective --recompute-modules core_attn {module}"
    order = ["0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.19", "HEAD"]
    for version in order:
        fires = "ML771" in codes(flags, version)
        assert fires == (order.index(version) < order.index(first)), version


def test_recompute_module_names_need_selective_granularity():
    assert "ML771" not in codes(HEAD + "--recompute-modules core_attn mlp_act")


def test_hybrid_cp_cuda_graph_crash_is_reported_with_its_attribute_error():
    flags = HEAD + (
        "--context-parallel-size 2 --hybrid-context-parallel --calculate-per-token-loss --enable-cuda-graph"
    )
    result = lint(flags + "\n", "HEAD", "h100", path="job.sh")
    (diag,) = [d for d in result.diagnostics if d.code == "ML773"]
    assert "AttributeError" in diag.message and "enable_cuda_graph" in diag.message
    # The non-deprecated spelling passes validate_args.
    assert "ML773" not in codes(
        HEAD + "--context-parallel-size 2 --hybrid-context-parallel --calculate-per-token-loss --cuda-graph-impl local"
    )


def test_sinkhorn_rule_needs_sinkhorn_alone():
    # With several balancing types the router takes the top-k path, where the aux loss is allowed.
    flags = HEAD + ("--num-experts 8 --moe-router-load-balancing-type sinkhorn aux_loss --moe-aux-loss-coeff 0 0.01")
    assert "ML780" not in codes(flags)
    assert "ML780" not in codes(HEAD + "--moe-router-load-balancing-type sinkhorn --moe-aux-loss-coeff 0.01")


def test_moe_layer_pattern_is_not_checked_for_hybrid_models():
    flags = HEAD + "--num-experts 8 --moe-layer-freq '[1]*7' --hybrid-layer-pattern M*M*M*M*"
    assert "ML781" not in codes(flags)


def test_inference_optimized_expert_tp_defaults_to_tp():
    flags = HEAD + (
        "--tensor-model-parallel-size 2 --sequence-parallel --transformer-impl inference_optimized "
        "--num-experts 8 --moe-router-dtype fp32"
    )
    assert "ML784" in codes(flags)
    assert "ML784" not in codes(flags + " --expert-tensor-parallel-size 1")
    assert "ML784" not in codes(flags, "0.16")
