"""The group N rules (data, checkpointing, determinism, misc training flags) where their examples
do not reach: values megalint cannot know must keep them silent, and the version gates must
follow the Megatron releases the checks were read in."""

from __future__ import annotations

import pytest
from linting import lint


def codes(script: str, version: str | None = None) -> list[str]:
    res = lint(script, version, memory=False)
    return sorted(d.code for d in res.diagnostics if d.code.startswith("ML7"))


def launch(flags: str, pre: str = "") -> str:
    return pre + f"torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 {flags}\n"


# Rules that fire on a flag being absent (or on a default) must not fire when the script passes
# arguments megalint cannot see: those may supply the missing flag.
ABSENT = [
    ("ML751", "--data-path /data/a_text_document"),
    ("ML752", "--log-memory-interval 50"),
    ("ML753", "--use-checkpoint-args"),
    ("ML755", "--replication --replication-jump 8"),
    ("ML756", "--load /ckpt --load-main-params-from-ckpt"),
    ("ML757", "--save /ckpt --save-interval 10 --async-save"),
    ("ML759", "--num-experts 8 --moe-use-upcycling --load /ckpt/dense"),
    ("ML764", "--inference-batch-times-seqlen-threshold 512"),
]


@pytest.mark.parametrize("code,flags", ABSENT, ids=[c for c, _ in ABSENT])
def test_absent_flag_rules_fire_and_stay_silent_with_unseen_arguments(code, flags):
    assert code in codes(launch(flags))
    assert code not in codes(launch(flags + ' "$@"'))


def test_given_values_still_decide_with_unseen_arguments():
    # The value written in the script is what the rule reads; it is not a default.
    assert "ML752" in codes(launch('--log-interval 10 --log-memory-interval 25 "$@"'))
    assert "ML764" in codes(
        launch('--pipeline-model-parallel-size 1 --inference-batch-times-seqlen-threshold 512 "$@"')
    )


@pytest.mark.parametrize(
    "flags",
    [
        "--data-path $DATA --data-args-path /data/blend.txt",
        "--log-memory-interval $N",
        "--use-checkpoint-args --load $CKPT",
        "--replication --replication-jump 8 --non-persistent-ckpt-type $T",
        "--num-dataset-builder-threads $THREADS",
        "--qk-clip --qk-clip-alpha $ALPHA",
        "--fim-data --fim-rate $RATE --data-path /d --split 99,1,0",
        "--cross-entropy-loss-fusion --cross-entropy-fusion-impl $IMPL",
    ],
)
def test_unknown_values_are_not_judged(flags):
    # $DATA is the one unknown in the first case: --data-args-path alone decides it.
    found = codes(launch(flags))
    if flags.startswith("--data-path"):
        assert found == ["ML750"]
    else:
        assert found == []


def test_deterministic_environment_unknown_or_opaque():
    # A value from the caller is not judged; from 0.19 an unset variable is fine.
    assert "ML762" not in codes(launch("--deterministic-mode", 'export NCCL_ALGO="$1"\n'))
    assert "ML762" not in codes(launch("--deterministic-mode"))
    # Before 0.16 the variable must be set: unset fires, unreadable or opaque does not.
    assert "ML763" in codes(launch("--deterministic-mode"), "0.15")
    assert "ML763" not in codes(launch("--deterministic-mode", 'export NCCL_ALGO="$1"\n'), "0.15")
    assert "ML763" not in codes(launch("--deterministic-mode", "source ./site_env.sh\n"), "0.15")
    # Even with an opaque environment, a value the script itself exports is what Megatron reads.
    assert "ML762" in codes(launch("--deterministic-mode", "source ./site_env.sh\nexport NCCL_ALGO=Tree\n"))


@pytest.mark.parametrize(
    "value,fires",
    [
        ("Ring", False),
        ("CollnetDirect,CollnetChain", False),
        ("Ring, ^NVLS", False),
        ("Tree", True),
        ("Ring,Tree", True),
        ("", True),
        (",", True),
        ("ring", True),
    ],
)
def test_nccl_algo_tokens_from_0_19(value, fires):
    script = launch("--deterministic-mode", f"export NCCL_ALGO='{value}'\n")
    assert ("ML762" in codes(script)) is fires
    assert ("ML762" in codes(script, "0.19")) is fires


@pytest.mark.parametrize(
    "value,fires", [("Ring", False), ("Tree", False), ("^NVLS", False), ("Ring,Tree", True), ("NVLS", True)]
)
def test_nccl_algo_single_value_before_0_16(value, fires):
    script = launch("--deterministic-mode", f"export NCCL_ALGO='{value}'\n")
    for version in ("0.8", "0.12", "0.15"):
        assert ("ML763" in codes(script, version)) is fires
    assert "ML763" not in codes(script)  # HEAD has its own rule


def test_causal_conv1d_variable_only_after_0_19():
    script = launch("--deterministic-mode", "export CAUSAL_CONV1D_DETERMINISTIC=0\n")
    assert "ML762" in codes(script)
    assert "ML762" not in codes(script, "0.19")


@pytest.mark.parametrize(
    "flags,by_version",
    [
        # The deterministic-mode options changed: flash attention was refused up to 0.15, the TP
        # overlap from 0.19, the fused cross entropy from 0.12.
        (
            "--deterministic-mode --use-flash-attn",
            {"HEAD": False, "0.19": False, "0.15": True, "0.12": True, "0.8": True},
        ),
        ("--deterministic-mode --cross-entropy-loss-fusion", {"HEAD": True, "0.15": True, "0.12": True, "0.8": False}),
        (
            "--deterministic-mode --tp-comm-overlap --tensor-model-parallel-size 2 --sequence-parallel",
            {"HEAD": True, "0.19": True, "0.15": False, "0.12": False},
        ),
    ],
)
def test_deterministic_options_by_version(flags, by_version):
    pre = "export NCCL_ALGO=Ring\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n"
    for version, fires in by_version.items():
        assert ("ML761" in codes(launch(flags, pre), None if version == "HEAD" else version)) is fires, version


def test_use_checkpoint_args_pretrained_checkpoint_counts_from_0_16():
    script = launch("--use-checkpoint-args --pretrained-checkpoint /ckpt/base")
    assert "ML753" not in codes(script)
    assert "ML753" not in codes(script, "0.19")
    assert "ML753" in codes(script, "0.15")


def test_inference_threshold_cuda_graphs_only_from_0_15():
    flags = "--pipeline-model-parallel-size 2 --inference-batch-times-seqlen-threshold 512 --enable-cuda-graph"
    pre = "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
    assert "ML764" in codes(launch(flags, pre))
    assert "ML764" in codes(launch(flags, pre), "0.15")
    assert "ML764" not in codes(launch(flags, pre), "0.12")
    assert "ML764" not in codes(launch("--inference-batch-times-seqlen-threshold -1"))


def test_async_save_with_torch_format_is_not_disabled():
    # Only distributed checkpoints lose --async-save without the persistent worker.
    assert "ML757" not in codes(launch("--save /c --save-interval 10 --async-save --ckpt-format torch"))


def test_fim_zero_spm_rate_and_mock():
    assert "ML767" in codes(launch("--fim-data --fim-spm-rate 0 --data-path /d --split 99,1,0"))
    assert "ML767" not in codes(launch("--fim-data --data-path /d --split 99,1,0"))
