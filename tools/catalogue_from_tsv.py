"""Build megalint's per-version Megatron flag catalogues from the research TSV.

    python tools/catalogue_from_tsv.py path/to/megatron-flags-by-version.tsv \
        --out megalint/data/catalogue

The TSV is a dump of the real argparse parser of megatron/training/arguments.py at
core_v0.8.0, core_v0.12.0, core_v0.15.0, core_v0.19.0 and main@d98e8a64 (called HEAD), one row
per option string with the versions that define it (`present_in`). Its default, choices, type,
action and nargs columns come from the newest version that has the flag, and a list default is
written joined with commas (`['p2p']` -> `p2p`, `[]` -> empty). The tables below put back, per
version, what that flattening loses; every entry cites the line of Megatron-LM it comes from.
The output format is documented in megalint/megatron/catalogue.py.
"""

from __future__ import annotations

import argparse
import csv
import json
import signal
import sys
from pathlib import Path

VERSIONS = ("0.8", "0.12", "0.15", "0.19", "HEAD")  # oldest first, as the TSV lists them
TAG = {
    "0.8": "core_v0.8.0",
    "0.12": "core_v0.12.0",
    "0.15": "core_v0.15.0",
    "0.19": "core_v0.19.0",
    "HEAD": "main@d98e8a64",
}
FORMAT = 1

ACTIONS = {
    "store": "store",
    "store_true": "store_true",
    "store_false": "store_false",
    "bool_optional": "boolean_optional",
    "store_const": "store_const",
    "append": "append",
    "append_const": "append_const",
    "count": "count",
}

# Defaults that are Python expressions in Megatron, evaluated when the parser is built: the
# TSV shows the value they had on the machine that dumped it, which a linter must not assume.
EXPR_DEFAULTS: dict[str, tuple[str, str]] = {
    "--initial-loss-scale": ("2 ** 32", "megatron/training/arguments.py:3059@HEAD"),
    "--inprocess-active-world-size": ("int(os.getenv('WORLD_SIZE', '1'))", "megatron/training/arguments.py:2518@HEAD"),
    "--local-rank": (
        "int(os.getenv('LOCAL_RANK', '0'))",
        "megatron/training/config/common_config.py:85@HEAD; arguments.py:2117@core_v0.12.0",
    ),
    "--attention-backend": (
        "AttnBackend.auto",
        "megatron/core/transformer/transformer_config.py:151@HEAD; arguments.py:1562@core_v0.15.0",
    ),
    "--exit-signal": ("signal.SIGTERM", "megatron/training/config/training_config.py:82@HEAD"),
}

# List defaults of dataclass fields (>= 0.16, ArgumentGroupFactory uses default_factory()).
LIST_DEFAULTS: dict[str, tuple[list, tuple[str, ...], str]] = {
    "--profile-ranks": ([], ("0.19", "HEAD"), "megatron/training/config/common_config.py:53@HEAD"),
    "--high-priority-stream-groups": ([], ("0.19", "HEAD"), "megatron/training/config/common_config.py:124@HEAD"),
    "--iterations-to-skip": ([], ("0.19", "HEAD"), "megatron/training/config/training_config.py:107@HEAD"),
    "--offload-modules": ([], ("0.19", "HEAD"), "megatron/core/transformer/transformer_config.py:1328@HEAD"),
    "--gtp-remat-opt-in-modules": ([], ("HEAD",), "megatron/core/transformer/transformer_config.py:955@HEAD"),
}

# argparse takes a dest's default from the first action registered with that dest; the TSV is
# sorted by name, so the registration order of flags sharing a dest is restored here.
REGISTERED_FIRST: dict[str, str] = {
    # store_true with default=None, then --no-... store_false: a tri-state, default None.
    "--yarn-correction-range-round-to-int": "megatron/training/arguments.py:2406@HEAD",
}

# Deprecations, curated: the TSV's "deprecated" column is a keyword match on HEAD's help text,
# which also hits flags that merely mention a deprecated spelling, and says nothing of when.
# option -> (first catalogue version where it is deprecated, what it does now);
# megatron-constraints.md section P and the help texts cited there.
ALL_VERSIONS = "0.8"
DEPRECATIONS: dict[str, tuple[str, str]] = {
    "--batch-size": (ALL_VERSIONS, "validate_args rejects it: use --micro-batch-size"),
    "--warmup": (ALL_VERSIONS, "validate_args rejects it: use --lr-warmup-fraction"),
    "--model-parallel-size": (ALL_VERSIONS, "validate_args rejects it: use --tensor-model-parallel-size"),
    "--checkpoint-activations": (
        ALL_VERSIONS,
        "validate_args prints a hint and calls exit(): the job ends with status 0 "
        "without training; use --recompute-activations or --recompute-granularity",
    ),
    "--use-mcore-models": (ALL_VERSIONS, "accepted and ignored (MCore models are the default)"),
    "--use-flash-attn": (ALL_VERSIONS, "no effect on MCore models (read by legacy models only)"),
    "--use-rotary-position-embeddings": (ALL_VERSIONS, "use --position-embedding-type rope"),
    "--no-position-embedding": (ALL_VERSIONS, "an error unless --position-embedding-type rope"),
    "--fp8-interval": (ALL_VERSIONS, "ignored (deprecated in Transformer Engine 1.8)"),
    "--no-tp-comm-split-ag": (ALL_VERSIONS, "ignored (deprecated in Transformer Engine 1.6)"),
    "--no-tp-comm-split-rs": (ALL_VERSIONS, "ignored (deprecated in Transformer Engine 1.6)"),
    "--disable-tp-comm-split-ag": (ALL_VERSIONS, "ignored (deprecated in Transformer Engine 1.6)"),
    "--disable-tp-comm-split-rs": (ALL_VERSIONS, "ignored (deprecated in Transformer Engine 1.6)"),
    "--pipeline-model-parallel-split-rank": ("0.12", "use --encoder-pipeline-model-parallel-size"),
    "--moe-extended-tp": ("0.12", "use --expert-tensor-parallel-size"),
    "--no-async-tensor-model-parallel-allreduce": ("0.12", "no effect since 0.12"),
    "--use-dist-ckpt": ("0.12", "no effect (prints a notice); use --ckpt-format"),
    "--dist-ckpt-format": ("0.12", "no effect (prints a notice); use --ckpt-format"),
    "--ckpt-fully-parallel-save": ("0.12", "no effect (prints a notice); fully parallel save is the default"),
    "--enable-cuda-graph": ("0.15", "replaced by --cuda-graph-impl local"),
    "--external-cuda-graph": ("0.15", "replaced by --cuda-graph-impl transformer_engine"),
    "--cuda-graph-scope": ("0.19", "replaced by --cuda-graph-modules"),
    "--hybrid-override-pattern": ("0.19", "replaced by --hybrid-layer-pattern"),
    "--mtp-hybrid-override-pattern": ("0.19", "replaced by the '/' part of --hybrid-layer-pattern"),
    "--no-weight-decay-cond-type": ("0.19", "replaced by --apply-wd-to-qk-layernorm"),
    "--disable-msc": ("0.19", "no effect; MSC is opt-in through --enable-msc"),
    "--moe-enable-deepep": ("0.19", "replaced by --moe-flex-dispatcher-backend deepep"),
    "--moe-deepep-num-sms": ("0.19", "replaced by --moe-flex-dispatcher-num-sms"),
    "--moe-hybridep-num-sms": ("0.19", "replaced by --moe-flex-dispatcher-num-sms"),
    "--moe-router-padding-for-fp8": ("0.19", "replaced by --moe-router-padding-for-quantization"),
    "--moe-layer-recompute": ("0.19", "replaced by --recompute-granularity selective --recompute-modules moe"),
    "--rampup-batch-size": ("0.19", "ignored; use --step-batch-size-schedule"),
    "--ckpt-convert-update-legacy-dist-opt-format": (
        ALL_VERSIONS,
        "converts the distributed-optimizer format deprecated in February 2024",
    ),
}
# Flags the TSV marks whose deprecation is one of their values (or only a mention in the help).
DEPRECATED_CHOICES: dict[str, tuple[str, dict[str, str]]] = {
    "--optimizer": ("0.19", {"dist_muon": "use --optimizer muon with the layer-wise distributed optimizer"}),
    "--experimental-attention-variant": ("0.19", {"gated_delta_net": "a deprecated alias of gdn"}),
}
NOT_DEPRECATED = {
    # Named in the TSV's column only because the help mentions a deprecated spelling.
    "--cuda-graph-modules",
    "--moe-flex-dispatcher-num-sms",
    "--recompute-activations",
    "--use-legacy-models",
    "--moe-use-legacy-grouped-gemm",
}

# Per-version facts the TSV flattens (it shows the newest version's action, nargs, type,
# default and choices). Up to 0.15 every flag is a literal add_argument call, read directly.
OVERRIDES: dict[tuple[str, str], tuple[dict, str]] = {
    ("0.8", "--transformer-impl"): (
        {"choices": ["local", "transformer_engine"]},
        "megatron/training/arguments.py:668@core_v0.8.0",
    ),
    ("0.8", "--inference-batch-times-seqlen-threshold"): (
        {"default": 512},
        "megatron/training/arguments.py:677@core_v0.8.0",
    ),
    ("0.8", "--position-embedding-type"): (
        {"choices": ["learned_absolute", "rope", "none"]},
        "megatron/training/arguments.py:775@core_v0.8.0",
    ),
    ("0.8", "--rampup-batch-size"): (
        {"nargs": "*", "type": None},
        "megatron/training/arguments.py:993@core_v0.8.0",
    ),
    ("0.8", "--profile-ranks"): (
        {"default": [0]},
        "megatron/training/arguments.py:1051@core_v0.8.0",
    ),
    ("0.8", "--optimizer"): (
        {"choices": ["adam", "sgd"]},
        "megatron/training/arguments.py:1146@core_v0.8.0",
    ),
    ("0.8", "--dist-ckpt-format"): (
        {"default": "torch_dist", "choices": ["zarr", "torch_dist"]},
        "megatron/training/arguments.py:1323@core_v0.8.0",
    ),
    ("0.8", "--async-save"): (
        {"default": None},
        "megatron/training/arguments.py:1335@core_v0.8.0",
    ),
    ("0.8", "--lazy-mpu-init"): (
        {"action": "store", "default": None, "type": "bool"},
        "megatron/training/arguments.py:1442@core_v0.8.0",
    ),
    ("0.8", "--eval-interval"): (
        {"default": 1000},
        "megatron/training/arguments.py:1475@core_v0.8.0",
    ),
    ("0.8", "--tokenizer-type"): (
        {
            "choices": [
                "BertWordPieceLowerCase",
                "BertWordPieceCase",
                "GPT2BPETokenizer",
                "SentencePieceTokenizer",
                "GPTSentencePieceTokenizer",
                "HuggingFaceTokenizer",
                "Llama2Tokenizer",
                "Llama3Tokenizer",
                "MistralTokenizer",
                "TikTokenizer",
                "NullTokenizer",
            ]
        },
        "megatron/training/arguments.py:1547@core_v0.8.0",
    ),
    ("0.8", "--tiktoken-pattern"): (
        {"choices": None},
        "megatron/training/arguments.py:1563@core_v0.8.0",
    ),
    ("0.8", "--retriever-report-topk-accuracies"): (
        {"default": []},
        "megatron/training/arguments.py:1631@core_v0.8.0",
    ),
    ("0.8", "--moe-router-load-balancing-type"): (
        {"nargs": None, "choices": ["aux_loss", "sinkhorn", "none"]},
        "megatron/training/arguments.py:1732@core_v0.8.0",
    ),
    ("0.8", "--moe-aux-loss-coeff"): (
        {"nargs": None},
        "megatron/training/arguments.py:1742@core_v0.8.0",
    ),
    ("0.8", "--moe-token-dispatcher-type"): (
        {"choices": ["allgather", "alltoall"]},
        "megatron/training/arguments.py:1748@core_v0.8.0",
    ),
    ("0.8", "--lr-wsd-decay-style"): (
        {"choices": ["exponential", "linear", "cosine"]},
        "megatron/training/arguments.py:1229@core_v0.8.0",
    ),
    ("0.12", "--fp8-recipe"): (
        {"choices": ["tensorwise", "delayed", "mxfp8"]},
        "megatron/training/arguments.py:1057@core_v0.12.0",
    ),
    ("0.12", "--transformer-impl"): (
        {"choices": ["local", "transformer_engine"]},
        "megatron/training/arguments.py:1078@core_v0.12.0",
    ),
    ("0.12", "--cuda-graph-scope"): (
        {"nargs": None, "default": "full", "choices": ["full", "attn"], "type": "str"},
        "megatron/training/arguments.py:1128@core_v0.12.0",
    ),
    ("0.12", "--position-embedding-type"): (
        {"choices": ["learned_absolute", "rope", "mrope", "relative", "none"]},
        "megatron/training/arguments.py:1250@core_v0.12.0",
    ),
    ("0.12", "--rampup-batch-size"): (
        {"nargs": "*", "type": None},
        "megatron/training/arguments.py:1511@core_v0.12.0",
    ),
    ("0.12", "--recompute-modules"): (
        {"nargs": "*"},
        "megatron/training/arguments.py:1568@core_v0.12.0",
    ),
    ("0.12", "--iterations-to-skip"): (
        {"default": []},
        "megatron/training/arguments.py:1594@core_v0.12.0",
    ),
    ("0.12", "--profile-ranks"): (
        {"default": [0]},
        "megatron/training/arguments.py:1605@core_v0.12.0",
    ),
    ("0.12", "--optimizer"): (
        {"choices": ["adam", "sgd"]},
        "megatron/training/arguments.py:1712@core_v0.12.0",
    ),
    ("0.12", "--rerun-mode"): (
        {"default": "disabled"},
        "megatron/training/arguments.py:1792@core_v0.12.0",
    ),
    ("0.12", "--non-persistent-ckpt-type"): (
        {"choices": ["global", "local", "in_memory", None]},
        "megatron/training/arguments.py:1899@core_v0.12.0",
    ),
    ("0.12", "--ckpt-format"): (
        {"choices": ["torch", "torch_dist", "zarr", "torch_dcp"]},
        "megatron/training/arguments.py:1949@core_v0.12.0",
    ),
    ("0.12", "--ckpt-convert-format"): (
        {"choices": ["torch", "torch_dist", "zarr"]},
        "megatron/training/arguments.py:1954@core_v0.12.0",
    ),
    ("0.12", "--async-save"): (
        {"default": None},
        "megatron/training/arguments.py:1973@core_v0.12.0",
    ),
    ("0.12", "--lazy-mpu-init"): (
        {"action": "store", "default": None, "type": "bool"},
        "megatron/training/arguments.py:2119@core_v0.12.0",
    ),
    ("0.12", "--data-parallel-sharding-strategy"): (
        {"default": "no_shard"},
        "megatron/training/arguments.py:2136@core_v0.12.0",
    ),
    ("0.12", "--cp-comm-type"): (
        {"default": ["p2p"]},
        "megatron/training/arguments.py:2155@core_v0.12.0",
    ),
    ("0.12", "--eval-interval"): (
        {"default": 1000},
        "megatron/training/arguments.py:2194@core_v0.12.0",
    ),
    ("0.12", "--tokenizer-type"): (
        {
            "choices": [
                "BertWordPieceLowerCase",
                "BertWordPieceCase",
                "GPT2BPETokenizer",
                "SentencePieceTokenizer",
                "GPTSentencePieceTokenizer",
                "HuggingFaceTokenizer",
                "Llama2Tokenizer",
                "TikTokenizer",
                "MultimodalTokenizer",
                "NullTokenizer",
                "NullMultimodalTokenizer",
            ]
        },
        "megatron/training/arguments.py:2216@core_v0.12.0",
    ),
    ("0.12", "--tiktoken-pattern"): (
        {"choices": None},
        "megatron/training/arguments.py:2232@core_v0.12.0",
    ),
    ("0.12", "--retriever-report-topk-accuracies"): (
        {"default": []},
        "megatron/training/arguments.py:2366@core_v0.12.0",
    ),
    ("0.12", "--moe-router-load-balancing-type"): (
        {"nargs": None, "choices": ["aux_loss", "seq_aux_loss", "sinkhorn", "none"]},
        "megatron/training/arguments.py:2502@core_v0.12.0",
    ),
    ("0.12", "--moe-router-score-function"): (
        {"choices": ["softmax", "sigmoid"]},
        "megatron/training/arguments.py:2513@core_v0.12.0",
    ),
    ("0.12", "--moe-aux-loss-coeff"): (
        {"nargs": None},
        "megatron/training/arguments.py:2537@core_v0.12.0",
    ),
    ("0.12", "--moe-token-dispatcher-type"): (
        {"choices": ["allgather", "alltoall", "flex", "alltoall_seq"]},
        "megatron/training/arguments.py:2546@core_v0.12.0",
    ),
    ("0.12", "--mscale-all-dim"): (
        {"default": 1.0},
        "megatron/training/arguments.py:2580@core_v0.12.0",
    ),
    ("0.12", "--exp-avg-dtype"): (
        {"choices": ["fp32", "fp16", "fp8"]},
        "megatron/training/arguments.py:2679@core_v0.12.0",
    ),
    ("0.12", "--exp-avg-sq-dtype"): (
        {"choices": ["fp32", "fp16", "fp8"]},
        "megatron/training/arguments.py:2681@core_v0.12.0",
    ),
    ("0.12", "--lr-wsd-decay-style"): (
        {"choices": ["exponential", "linear", "cosine"]},
        "megatron/training/arguments.py:1829@core_v0.12.0",
    ),
    ("0.15", "--fp8-recipe"): (
        {"choices": ["tensorwise", "delayed", "mxfp8", "blockwise"]},
        "megatron/training/arguments.py:1318@core_v0.15.0",
    ),
    ("0.15", "--transformer-impl"): (
        {"choices": ["local", "transformer_engine"]},
        "megatron/training/arguments.py:1339@core_v0.15.0",
    ),
    ("0.15", "--fp4-recipe"): (
        {"choices": ["nvfp4"]},
        "megatron/training/arguments.py:1357@core_v0.15.0",
    ),
    ("0.15", "--cuda-graph-impl"): (
        {"choices": ["none", "local", "transformer_engine"]},
        "megatron/training/arguments.py:1405@core_v0.15.0",
    ),
    ("0.15", "--cuda-graph-scope"): (
        {"nargs": None, "default": "full", "choices": ["full", "attn", "full_iteration"], "type": "str"},
        "megatron/training/arguments.py:1411@core_v0.15.0",
    ),
    ("0.15", "--symmetric-ar-type"): (
        {"choices": ["two_shot", "one_shot", "multimem_all_reduce", None]},
        "megatron/training/arguments.py:1484@core_v0.15.0",
    ),
    ("0.15", "--softmax-type"): (
        {"choices": ["learnable", "vanilla", "off-by-one"]},
        "megatron/training/arguments.py:1571@core_v0.15.0",
    ),
    ("0.15", "--position-embedding-type"): (
        {"choices": ["learned_absolute", "rope", "mrope", "relative", "none"]},
        "megatron/training/arguments.py:1588@core_v0.15.0",
    ),
    ("0.15", "--rl-use-sequence-packing"): (
        {"action": "store_true"},
        "megatron/training/arguments.py:1960@core_v0.15.0",
    ),
    ("0.15", "--rampup-batch-size"): (
        {"nargs": "*", "type": None},
        "megatron/training/arguments.py:1988@core_v0.15.0",
    ),
    ("0.15", "--recompute-modules"): (
        {"nargs": "*"},
        "megatron/training/arguments.py:2045@core_v0.15.0",
    ),
    ("0.15", "--iterations-to-skip"): (
        {"default": []},
        "megatron/training/arguments.py:2073@core_v0.15.0",
    ),
    ("0.15", "--profile-ranks"): (
        {"default": [0]},
        "megatron/training/arguments.py:2084@core_v0.15.0",
    ),
    ("0.15", "--optimizer"): (
        {"choices": ["adam", "sgd"]},
        "megatron/training/arguments.py:2197@core_v0.15.0",
    ),
    ("0.15", "--high-priority-stream-groups"): (
        {"nargs": "*", "default": []},
        "megatron/training/arguments.py:2264@core_v0.15.0",
    ),
    ("0.15", "--load-main-params-from-ckpt"): (
        {"default": None},
        "megatron/training/arguments.py:2399@core_v0.15.0",
    ),
    ("0.15", "--non-persistent-ckpt-type"): (
        {"choices": ["global", "local", "in_memory", None]},
        "megatron/training/arguments.py:2407@core_v0.15.0",
    ),
    ("0.15", "--ckpt-format"): (
        {"choices": ["torch", "torch_dist", "zarr", "torch_dcp", "fsdp_dtensor"]},
        "megatron/training/arguments.py:2457@core_v0.15.0",
    ),
    ("0.15", "--ckpt-convert-format"): (
        {"choices": ["torch", "torch_dist", "zarr"]},
        "megatron/training/arguments.py:2463@core_v0.15.0",
    ),
    ("0.15", "--async-save"): (
        {"default": None},
        "megatron/training/arguments.py:2482@core_v0.15.0",
    ),
    ("0.15", "--lazy-mpu-init"): (
        {"action": "store", "default": None, "type": "bool"},
        "megatron/training/arguments.py:2646@core_v0.15.0",
    ),
    ("0.15", "--data-parallel-sharding-strategy"): (
        {"default": "no_shard"},
        "megatron/training/arguments.py:2677@core_v0.15.0",
    ),
    ("0.15", "--cp-comm-type"): (
        {"default": ["p2p"]},
        "megatron/training/arguments.py:2706@core_v0.15.0",
    ),
    ("0.15", "--eval-interval"): (
        {"default": 1000},
        "megatron/training/arguments.py:2747@core_v0.15.0",
    ),
    ("0.15", "--tiktoken-pattern"): (
        {"choices": None},
        "megatron/training/arguments.py:2792@core_v0.15.0",
    ),
    ("0.15", "--retriever-report-topk-accuracies"): (
        {"default": []},
        "megatron/training/arguments.py:2933@core_v0.15.0",
    ),
    ("0.15", "--moe-router-load-balancing-type"): (
        {"choices": ["aux_loss", "seq_aux_loss", "global_aux_loss", "sinkhorn", "none"]},
        "megatron/training/arguments.py:3077@core_v0.15.0",
    ),
    ("0.15", "--moe-router-score-function"): (
        {"choices": ["softmax", "sigmoid"]},
        "megatron/training/arguments.py:3090@core_v0.15.0",
    ),
    ("0.15", "--moe-deepep-num-sms"): (
        {"default": 20},
        "megatron/training/arguments.py:3137@core_v0.15.0",
    ),
    ("0.15", "--disable-mamba-mem-eff-path"): (
        {"action": "store_true", "default": False},
        "megatron/training/arguments.py:3276@core_v0.15.0",
    ),
    ("0.15", "--disable-msc"): (
        {"action": "store_false", "default": True},
        "megatron/training/arguments.py:3305@core_v0.15.0",
    ),
    ("0.19", "--cuda-graph-modules"): (
        {"default": []},
        "megatron/training/arguments.py:1969@core_v0.19.0",
    ),
    ("0.19", "--muon-tp-mode"): (
        {"default": "blockwise"},
        "megatron/training/arguments.py:2540@core_v0.19.0",
    ),
    ("0.19", "--rl-generation-lag"): (
        {"default": 0, "type": "int"},
        "megatron/training/arguments.py:2578@core_v0.19.0",
    ),
    ("0.19", "--rl-inference-parsers"): (
        {"default": []},
        "megatron/training/arguments.py:2714@core_v0.19.0",
    ),
    ("0.19", "--ddp-param-name-patterns-for-fp32-local-accumulation"): (
        {"default": []},
        "megatron/training/arguments.py:2983@core_v0.19.0",
    ),
    ("0.19", "--cp-comm-type"): (
        {"default": ["p2p"]},
        "megatron/training/arguments.py:3054@core_v0.19.0",
    ),
    ("0.19", "--retriever-report-topk-accuracies"): (
        {"default": []},
        "megatron/training/arguments.py:3257@core_v0.19.0",
    ),
    ("HEAD", "--cuda-graph-modules"): (
        {"default": []},
        "megatron/training/arguments.py:2050@HEAD",
    ),
    ("HEAD", "--rl-inference-parsers"): (
        {"default": []},
        "megatron/training/arguments.py:2852@HEAD",
    ),
    ("HEAD", "--ddp-param-name-patterns-for-fp32-local-accumulation"): (
        {"default": []},
        "megatron/training/arguments.py:3142@HEAD",
    ),
    ("HEAD", "--cp-comm-type"): (
        {"default": ["p2p"]},
        "megatron/training/arguments.py:3221@HEAD",
    ),
    ("HEAD", "--retriever-report-topk-accuracies"): (
        {"default": []},
        "megatron/training/arguments.py:3424@HEAD",
    ),
}


def _signal_names(numbers: list[str]) -> list[str]:
    # signal.Signals is an IntEnum; argparse shows the members as numbers, the converter looks
    # them up by name (Signals[name]), so a user writes the name.
    return [signal.Signals(int(n)).name for n in numbers]


def _convert_scalar(text: str, type_: str | None, action: str):
    if text == "":
        return None
    if action in ("store_true", "store_false", "boolean_optional") or type_ == "bool":
        if text in ("True", "False"):
            return text == "True"
    if type_ == "int":
        return int(text)
    if type_ == "float":
        return float(text)
    if type_ in ("moe_freq_type", "la_freq_type", "no_rope_freq_type"):
        try:
            return int(text)
        except ValueError:
            return text
    return text


def _convert_choice(text: str, type_: str | None):
    if type_ == "int":
        return int(text)
    if type_ == "float":
        return float(text)
    return text


def _row_spec(row: dict, version: str) -> dict:
    option = row["flag"]
    action = ACTIONS[row["action"]]
    tsv_type = row["type"] or None
    type_ = "enum" if tsv_type == "enum(name)" else tsv_type
    nargs: object = row["nargs"] or None
    if isinstance(nargs, str) and nargs.isdigit():
        nargs = int(nargs)
    if row["choices"]:
        names = row["choices"].split(",")
        choices = _signal_names(names) if option == "--exit-signal" else [_convert_choice(c, type_) for c in names]
    else:
        choices = None
    default: object = _convert_scalar(row["default"], type_, action)
    notes: list[str] = []
    if option in EXPR_DEFAULTS:
        expr, cite = EXPR_DEFAULTS[option]
        default = {"__expr__": expr}
        notes.append(f"default: {cite}")
    if option in LIST_DEFAULTS and version in LIST_DEFAULTS[option][1]:
        default = list(LIST_DEFAULTS[option][0])
        notes.append(f"default: {LIST_DEFAULTS[option][2]}")
    spec = {"action": action, "type": type_, "default": default, "choices": choices, "nargs": nargs}
    over = OVERRIDES.get((version, option))
    if over is not None:
        fields, cite = over
        for key, value in fields.items():
            if key == "action":
                value = ACTIONS.get(value, value)
            spec[key] = value
        notes.append(f"{', '.join(fields)}: {cite}")
    spec["deprecated"] = None
    if option in DEPRECATIONS:
        since, note = DEPRECATIONS[option]
        if _at_least(version, since):
            spec["deprecated"] = note
    if option in DEPRECATED_CHOICES:
        since, values = DEPRECATED_CHOICES[option]
        if _at_least(version, since):
            spec["deprecated_choices"] = dict(values)
    spec["notes"] = notes
    return spec


def _at_least(version: str, since: str) -> bool:
    return VERSIONS.index(version) >= VERSIONS.index(since)


def _alias_key(spec: dict, dest: str) -> tuple:
    return (dest, spec["action"])


def build(rows: list[dict], source_name: str) -> dict[str, dict]:
    catalogues: dict[str, dict] = {}
    present = {r["flag"]: r["present_in"].split() for r in rows}
    for version in VERSIONS:
        groups: dict[tuple, dict] = {}
        order: list[tuple] = []
        for row in rows:
            if version not in present[row["flag"]]:
                continue
            spec = _row_spec(row, version)
            key = _alias_key(spec, row["dest"])
            if key in groups:
                entry = groups[key]
                comparable = ("type", "default", "choices", "nargs")
                if any(entry[k] != spec[k] for k in comparable):
                    raise SystemExit(
                        f"{version}: {row['flag']} and {entry['option_strings']} "
                        f"share dest and action but differ: {spec} / {entry}"
                    )
                entry["option_strings"].append(row["flag"])
                entry["present_in"][row["flag"]] = present[row["flag"]]
                entry["notes"].extend(n for n in spec["notes"] if n not in entry["notes"])
                if entry["deprecated"] is None:
                    entry["deprecated"] = spec["deprecated"]
                continue
            entry = {
                "option_strings": [row["flag"]],
                "dest": row["dest"],
                **spec,
                "present_in": {row["flag"]: present[row["flag"]]},
                "source": row["source_or_status"] or None,
            }
            groups[key] = entry
            order.append(key)
        flags = []
        for key in order:
            entry = groups[key]
            entry["option_strings"].sort(key=lambda o: _option_rank(o, entry, present))
            if not entry["notes"]:
                del entry["notes"]
            flags.append(entry)
        flags = _registration_order(flags)
        catalogues[version] = {
            "format": FORMAT,
            "version": version,
            "megatron_ref": TAG[version],
            "generated_from": (
                f"{source_name}: argparse parser of Megatron-LM {TAG[version]} "
                "dumped at run time, with the per-version corrections of "
                "tools/catalogue_from_tsv.py"
            ),
            "flags": flags,
        }
    return catalogues


def _option_rank(option: str, entry: dict, present: dict) -> tuple:
    # The spelling most versions know comes first; for --x/--no-x pairs the positive one.
    negative = entry["action"] == "boolean_optional" and option.startswith("--no-")
    return (negative, -len(present[option]), option)


def _registration_order(flags: list[dict]) -> list[dict]:
    for first in REGISTERED_FIRST:
        idx = next((i for i, f in enumerate(flags) if first in f["option_strings"]), None)
        if idx is None:
            continue
        dest = flags[idx]["dest"]
        earliest = next(i for i, f in enumerate(flags) if f["dest"] == dest)
        if earliest < idx:
            flags.insert(earliest, flags.pop(idx))
    return flags


def dumps(cat: dict) -> str:
    """JSON with one flag per line: small, and a diff shows which flags changed."""
    head = {k: v for k, v in cat.items() if k != "flags"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "flags": [']
    for i, flag in enumerate(cat["flags"]):
        comma = "," if i + 1 < len(cat["flags"]) else ""
        lines.append(" " + json.dumps(flag, ensure_ascii=False) + comma)
    lines.append("]}")
    return "\n".join(lines) + "\n"


def read_tsv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        lines = [line for line in fh if not line.startswith("# ")]
    return list(csv.DictReader(lines, delimiter="\t"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tsv", type=Path)
    ap.add_argument("--out", type=Path, default=Path("megalint/data/catalogue"))
    args = ap.parse_args(argv)
    rows = read_tsv(args.tsv)
    marked = {r["flag"] for r in rows if r["deprecated"] == "yes"}
    curated = set(DEPRECATIONS) | set(DEPRECATED_CHOICES) | NOT_DEPRECATED
    if marked != curated:
        raise SystemExit(f"deprecation tables out of step with the TSV: {marked ^ curated}")
    for version, option in OVERRIDES:
        if not any(r["flag"] == option for r in rows):
            raise SystemExit(f"override for unknown flag {option} ({version})")
    catalogues = build(rows, args.tsv.name)
    args.out.mkdir(parents=True, exist_ok=True)
    for version, cat in catalogues.items():
        path = args.out / f"{version}.json"
        path.write_text(dumps(cat), encoding="utf-8")
        print(
            f"{path}: {len(cat['flags'])} actions, {sum(len(f['option_strings']) for f in cat['flags'])} option strings"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
