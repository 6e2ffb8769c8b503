"""A hand-made launch script and findings over it, shared by the renderer tests."""

from __future__ import annotations

import os
from pathlib import Path

from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix, Label, Severity
from megalint.engine.rule import Docs, RuleInfo
from megalint.source import SourceFile

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

TRAIN = (
    "#!/bin/bash\n"
    "# 训练脚本 (GPT 1.3B)\n"
    "#SBATCH --nodes=2\n"
    "TP=7\n"
    "PP=2\n"
    "GPUS_PER_NODE=8\n"
    "source ./common.sh\n"
    'GPT_ARGS="--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 '
    '--max-position-embeddings 2048 --lr 3.0e-4 --fp16 --bf16"\n'
    "\n"
    "torchrun --nproc_per_node $GPUS_PER_NODE \\\n"
    "\tpretrain_gpt.py \\\n"
    "    $GPT_ARGS \\\n"
    "    --tensor-model-parallel-size $TP \\\n"
    "    --pipeline-model-parallel-size $PP \\\n"
    "    --micro-batch-size 4 --global-batch-size 30 \\\n"
    '    --data-path "数据/文本_document" \\\n'
    "    --save /ckpt\n"
)

COMMON = "# shared cluster settings\nexport NCCL_DEBUG=INFO\nexport CUDA_DEVICE_MAX_CONNECTIONS=8\n"


def find(sf: SourceFile, needle: str, nth: int = 1):
    """The span of the nth occurrence of `needle` in `sf`."""
    start = -1
    for _ in range(nth):
        start = sf.text.index(needle, start + 1)
    return sf.span(start, start + len(needle))


def build_example():
    train = SourceFile("scripts/train.sh", TRAIN)
    common = SourceFile("scripts/common.sh", COMMON)
    sources = {train.path: train, common.path: common}
    tp_value = find(train, "7", 1)
    diags = [
        Diagnostic(
            code="ML012",
            name="tp-divides-heads",
            severity=Severity.ERROR,
            message="--num-attention-heads 16 is not divisible by --tensor-model-parallel-size 7",
            span=find(train, "$TP", 1),
            labels=(
                Label(find(train, "TP=7"), "TP=7 set here"),
                Label(find(train, "--num-attention-heads 16"), "16 heads"),
            ),
            help="use a tensor-parallel size that divides 16 (1, 2, 4, 8 or 16)",
            fix=Fix("set TP to 8", Applicability.UNSAFE, (Edit(tp_value, "8"),)),
        ),
        Diagnostic(
            code="ML031",
            name="fp16-and-bf16",
            severity=Severity.WARNING,
            message="--fp16 and --bf16 are both set; Megatron refuses the pair",
            span=find(train, "--bf16"),
            labels=(Label(find(train, "--fp16"), "--fp16 set here"),),
            fix=Fix("remove --fp16", Applicability.SAFE, (Edit(find(train, " --fp16"), ""),)),
        ),
        Diagnostic(
            code="ML040",
            name="global-batch-divisible",
            severity=Severity.ERROR,
            message="--global-batch-size 30 is not a multiple of micro-batch-size × data-parallel size (4 × 1 = 4)",
            span=find(train, "--global-batch-size 30"),
            labels=(Label(find(train, "--micro-batch-size 4"), "micro batch 4"),),
            condition="#SBATCH --nodes=2 is the node count",
            fix=Fix("round the global batch size up to 32", Applicability.SAFE, (Edit(find(train, "30"), "32"),)),
        ),
        Diagnostic(
            code="ML050",
            name="data-path-not-ascii",
            severity=Severity.INFO,
            message="the data path has non-ASCII characters; some file systems mangle them",
            span=find(train, "数据/文本_document"),
        ),
        Diagnostic(
            code="ML060",
            name="no-train-iters",
            severity=Severity.WARNING,
            message="the launch sets neither --train-iters nor --train-samples",
            span=train.span(train.text.index("torchrun"), train.text.index("/ckpt") + len("/ckpt")),
            labels=(Label(find(common, "CUDA_DEVICE_MAX_CONNECTIONS=8"), "exported here"),),
            help="add --train-iters N (or --train-samples N)",
            url="https://example.invalid/rules/ML060",
        ),
        Diagnostic(
            code="ML071",
            name="nccl-debug-info",
            severity=Severity.INFO,
            message="NCCL_DEBUG=INFO floods the logs of every rank",
            span=find(common, "NCCL_DEBUG=INFO"),
            fix=Fix("use NCCL_DEBUG=WARN", Applicability.DISPLAY_ONLY, (Edit(find(common, "INFO"), "WARN"),)),
        ),
    ]
    rules = {
        "ML012": RuleInfo(
            "ML012",
            "tp-divides-heads",
            Severity.ERROR,
            url="https://example.invalid/rules/ML012",
            docs=Docs(
                summary="The tensor-parallel size must divide the number of attention heads.",
                what="Checks that --num-attention-heads is a multiple of --tensor-model-parallel-size.",
                why="Megatron asserts this at start-up, after the job waited in the queue.",
                example="torchrun pretrain_gpt.py --num-attention-heads 16 --tensor-model-parallel-size 7",
                use_instead="torchrun pretrain_gpt.py --num-attention-heads 16 --tensor-model-parallel-size 8",
                fix_safety="Unsafe: a different TP size changes the memory per GPU.",
            ),
            tags=("parallelism", "correctness"),
        ),
        "ML031": RuleInfo(
            "ML031",
            "fp16-and-bf16",
            Severity.WARNING,
            url="https://example.invalid/rules/ML031",
            docs=Docs(summary="Only one of --fp16 and --bf16 may be set."),
            tags=("precision",),
        ),
        "ML040": RuleInfo(
            "ML040",
            "global-batch-divisible",
            Severity.ERROR,
            url="https://example.invalid/rules/ML040",
            docs=Docs(summary="The global batch size must be a multiple of micro batch × DP."),
        ),
        "ML050": RuleInfo(
            "ML050", "data-path-not-ascii", Severity.INFO, docs=Docs(summary="Data paths should be ASCII.")
        ),
        "ML060": RuleInfo(
            "ML060",
            "no-train-iters",
            Severity.WARNING,
            url="https://example.invalid/rules/ML060",
            docs=Docs(summary="A launch needs --train-iters or --train-samples."),
        ),
        # ML071 has no metadata on purpose: renderers must cope.
    }
    return diags, sources, rules


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/<name>; MEGALINT_REGEN_GOLDEN=1 rewrites the file."""
    path = GOLDEN / name
    if os.environ.get("MEGALINT_REGEN_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return
    assert path.exists(), f"missing golden file {path}; run with MEGALINT_REGEN_GOLDEN=1"
    with open(path, encoding="utf-8", newline="") as f:
        expected = f.read()
    assert text == expected, f"{name} differs from its golden file (MEGALINT_REGEN_GOLDEN=1 to update)"
