"""A typo in a size is a finding with Megatron's reason and exit status 1; it never crashes the
run, hangs it or exhausts memory (each case was an internal error, a hang or an OOM kill)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.limited import megalint as run_cli

LAUNCH = (
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
    "--micro-batch-size 1 --global-batch-size 64 --bf16 --position-embedding-type rope "
)

INVALID = [
    ("--tensor-model-parallel-size 0", "--tensor-model-parallel-size: 0 is not a positive integer"),
    ("--pipeline-model-parallel-size 0", "--pipeline-model-parallel-size: 0 is not a positive integer"),
    ("--context-parallel-size 0", "--context-parallel-size: 0 is not a positive integer"),
    ("--num-experts 8 --expert-model-parallel-size 0", "--expert-model-parallel-size: 0 is not"),
    ("--num-experts 8 --expert-tensor-parallel-size 0", "--expert-tensor-parallel-size: 0 is not"),
    (
        "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 0",
        "--num-layers-per-virtual-pipeline-stage: 0 is not a positive integer",
    ),
    ("--pipeline-model-parallel-size -1", "--pipeline-model-parallel-size: -1 is not a positive integer"),
    (
        "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage -1",
        "--num-layers-per-virtual-pipeline-stage: -1 is not",
    ),
    ("--make-vocab-size-divisible-by 0", "--make-vocab-size-divisible-by: 0 is not a positive integer"),
    ("--tensor-model-parallel-size -1", "--tensor-model-parallel-size: -1 is not a positive integer"),
    ("--global-batch-size 0", "--global-batch-size: 0 is not a positive integer"),
    ("--num-layers 1" + "0" * 40, "--num-layers: a 41-digit value does not fit"),
    ("--mtp-num-layers 1" + "0" * 40, "--mtp-num-layers: a 41-digit value does not fit"),
    ("--mtp-num-layers 1e40", "--mtp-num-layers: invalid int value: '1e40'"),
]


def _script(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "train.sh"
    path.write_text(LAUNCH + flags + "\n")
    return path


@pytest.mark.parametrize(("flags", "message"), INVALID, ids=[f for f, _ in INVALID])
def test_invalid_size_is_a_finding(tmp_path: Path, flags: str, message: str) -> None:
    _script(tmp_path, flags)
    for command in ((), ("memory",)):
        proc = run_cli(*command, "--gpu", "H100-80GB", "train.sh", cwd=tmp_path)
        assert "internal error" not in proc.err, proc.err
        if not command:
            assert proc.rc == 1, proc.out + proc.err
            assert message in proc.out
            assert ("ML515" in proc.out) or ("ML503" in proc.out)
        else:
            assert proc.rc == 0, proc.out + proc.err


@pytest.mark.parametrize("flags", ["--num-layers 1000000000", "--mtp-num-layers 100000000"])
def test_a_huge_count_is_not_walked(tmp_path: Path, flags: str) -> None:
    """A billion layers ran the estimator out of memory, a hundred million MTP layers hung it:
    the layers are capped and the MTP layers counted in closed form."""
    _script(tmp_path, flags)
    proc = run_cli("--gpu", "H100-80GB", "train.sh", cwd=tmp_path)
    assert "internal error" not in proc.err, proc.err
    assert proc.rc in (0, 1), proc.out + proc.err
    memory = run_cli("memory", "--gpu", "H100-80GB", "train.sh", cwd=tmp_path)
    assert memory.rc == 0, memory.out + memory.err
    if "num-layers 1000000000" in flags:
        assert "outside the 0 to 100,000 layers megalint estimates" in memory.out
    else:
        assert "GiB" in memory.out
