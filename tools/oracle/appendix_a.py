#!/usr/bin/env python3
"""Encode the executed scenarios of megatron-constraints.md Appendix A as oracle scenarios.

Each scenario carries the outcome the research notes recorded for HEAD, 0.15.0 and 0.12.0
(`doc`), so the recorded oracle data can be checked against them. Stage names follow
run_oracle.STAGES; the notes' columns map as: argparse -> parse_args, v -> validate_args,
c -> transformer_config, mb -> microbatches.

Writes tests/data/oracle/scenarios/appendix_a.json.
"""

from __future__ import annotations

import json
import os
import sys

BASE = [
    "--num-layers",
    "8",
    "--hidden-size",
    "512",
    "--num-attention-heads",
    "8",
    "--seq-length",
    "1024",
    "--max-position-embeddings",
    "1024",
    "--micro-batch-size",
    "1",
    "--global-batch-size",
    "64",
    "--train-iters",
    "10",
    "--lr",
    "1e-4",
    "--mock-data",
    "--tokenizer-type",
    "NullTokenizer",
    "--vocab-size",
    "1000",
    "--bf16",
]
ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
H100 = [9, 0]

P, V, C, MB = "parse_args", "validate_args", "transformer_config", "microbatches"
VERSIONS = ("HEAD", "0.15.0", "0.12.0")


def ok(**extra):
    return {"outcome": "ok", **extra}


def err(stage, contains=None, exception=None):
    e = {"outcome": "error", "stage": stage}
    if contains is not None:
        e["contains"] = contains
    if exception is not None:
        e["exception"] = exception
    return e


def exit0(stage=V):
    return {"outcome": "exit0", "stage": stage}


NA = None  # the notes record no outcome for this version


def argv_with(extra, drop=()):
    """BASE with the flags in `drop` removed (with their value) and `extra` overriding."""
    out, i = [], 0
    override = {a for a in extra if a.startswith("--")}
    while i < len(BASE):
        flag = BASE[i]
        has_value = i + 1 < len(BASE) and not BASE[i + 1].startswith("--")
        span = 2 if has_value else 1
        if flag not in drop and flag not in override:
            out += BASE[i : i + span]
        i += span
    return out + list(extra)


# (id, title, extra flags, env changes, drop, {version: expectation}, gpu)
ROWS = []


def row(sid, title, extra, doc, env=None, drop=(), gpu=H100, world=8, keep_base=False):
    e = dict(ENV)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    argv = (BASE + list(extra)) if keep_base else argv_with(extra, drop)
    if isinstance(doc, dict) and set(doc) <= set(VERSIONS):
        per = doc
    else:
        per = {v: doc for v in VERSIONS}
    ROWS.append(
        {"id": sid, "title": title, "argv": argv, "env": e, "world_size": world, "gpu_capability": gpu, "doc": per}
    )


_SAME = object()


def same(head, v15=_SAME, v12=_SAME):
    """Expectations per version; an omitted column repeats the one to its left."""
    v15 = head if v15 is _SAME else v15
    v12 = v15 if v12 is _SAME else v12
    return {"HEAD": head, "0.15.0": v15, "0.12.0": v12}


def build():
    ROWS.clear()
    row("A00", "base configuration", [], same(ok()))
    row(
        "A01",
        "--tensor-model-parallel-size 3",
        ["--tensor-model-parallel-size", "3"],
        same(
            err(V, "world size (8) is not divisible by total_model_size"),
            err(V, "world size (8) is not divisible by total_model_size"),
            err(V, "decoder_model_size=3"),
        ),
    )
    row(
        "A02",
        "TP=2, CUDA_DEVICE_MAX_CONNECTIONS unset",
        ["--tensor-model-parallel-size", "2"],
        same(err(V, "CUDA_DEVICE_MAX_CONNECTIONS")),
        env={"CUDA_DEVICE_MAX_CONNECTIONS": None},
    )
    row("A03", "--sequence-parallel at TP=1", ["--sequence-parallel"], same(ok(sequence_parallel=False)))
    row(
        "A04",
        "--overlap-param-gather --overlap-grad-reduce",
        ["--overlap-param-gather", "--overlap-grad-reduce"],
        same(err(V, "--overlap-param-gather only supported with distributed optimizer")),
    )
    row(
        "A05",
        "--overlap-param-gather --use-distributed-optimizer",
        ["--overlap-param-gather", "--use-distributed-optimizer"],
        same(err(V, "--overlap-grad-reduce")),
    )
    row("A06", "--fp16 with --bf16", ["--fp16"], same(err(V, "", "AssertionError")), keep_base=True)
    row(
        "A07",
        "--num-layers 6 --pipeline-model-parallel-size 4",
        ["--num-layers", "6", "--pipeline-model-parallel-size", "4"],
        same(err(V, "divisible by the pipeline-model-parallel size")),
    )
    row(
        "A08",
        "12 heads, TP=8",
        ["--hidden-size", "768", "--num-attention-heads", "12", "--tensor-model-parallel-size", "8"],
        same(err(C, "num_attention_heads (12) must be a multiple of tensor_model_parallel_size (8)")),
    )
    row(
        "A09",
        "GQA 3 groups, TP=2",
        ["--group-query-attention", "--num-query-groups", "3", "--tensor-model-parallel-size", "2"],
        same(
            err(C, "must be a multiple or divisor of tensor_model_parallel_size"),
            err(C, "must be a multiple of tensor_model_parallel_size"),
        ),
    )
    row(
        "A10",
        "GQA 1 group, TP=2",
        ["--group-query-attention", "--num-query-groups", "1", "--tensor-model-parallel-size", "2"],
        same(ok(), err(C, "num_query_groups (1) must be a multiple of tensor_model_parallel_size (2)")),
    )
    row(
        "A11",
        "GQA 5 groups, 12 heads",
        ["--hidden-size", "768", "--num-attention-heads", "12", "--group-query-attention", "--num-query-groups", "5"],
        same(ok()),
    )
    row(
        "A12",
        "GBS 10, MBS 4",
        ["--global-batch-size", "10", "--micro-batch-size", "4"],
        same(
            err(V, "eval_global_batch_size (10) must be divisible by eval_micro_batch_size (4)"),
            err(MB, "global batch size (10) is not divisible by micro batch size (4)"),
        ),
    )
    row(
        "A13",
        "--seq-length 2048 (max-pos 1024)",
        ["--seq-length", "2048"],
        same(err(V, "max_position_embeddings (1024) must be greater than or equal to seq_length (2048)")),
    )
    row(
        "A14",
        "CP=2, seq 1022",
        ["--context-parallel-size", "2", "--seq-length", "1022"],
        same(err(V, "seq-length should be a multiple of 2 * context-parallel-size")),
    )
    row(
        "A15",
        "6 experts, EP=4",
        ["--num-experts", "6", "--expert-model-parallel-size", "4"],
        same(err(V, "Number of experts should be a multiple of expert model parallel_size")),
    )
    row(
        "A16",
        "EP=2 without experts",
        ["--expert-model-parallel-size", "2"],
        same(err(V, "num_experts must be non None to use expert model parallelism")),
    )
    row(
        "A17",
        "8 experts, EP=2, TP=2, no SP, no bias",
        [
            "--num-experts",
            "8",
            "--expert-model-parallel-size",
            "2",
            "--tensor-model-parallel-size",
            "2",
            "--disable-bias-linear",
        ],
        same(
            ok(warns="sequence parallelism must be used"),
            err(C, "name 'warnings' is not defined", "NameError"),
            err(C, "sequence parallelism must be used", "ValueError"),
        ),
    )
    row(
        "A18",
        "8 experts, TP=2 + SP, bias on",
        ["--num-experts", "8", "--tensor-model-parallel-size", "2", "--sequence-parallel"],
        same(
            err(C, "Bias in Moe is only supported when ETP==1"),
            err(C, "Bias in Moe is only supported when ETP==1"),
            ok(),
        ),
    )
    row(
        "A19",
        "topk=1",
        ["--num-experts", "8", "--moe-router-topk", "1"],
        same(err(C, "Please use --moe-router-pre-softmax when topk is 1")),
    )
    row(
        "A20",
        "--moe-ffn-hidden-size without experts",
        ["--moe-ffn-hidden-size", "1024"],
        same(
            err(C, "moe_ffn_hidden_size is set but num_moe_experts is None", "ValueError"),
            err(C, "moe_ffn_hidden_size must be None when num_experts is not set", "AssertionError"),
            ok(),
        ),
    )
    row(
        "A21",
        "capacity factor + sinkhorn",
        ["--num-experts", "8", "--moe-expert-capacity-factor", "1.0", "--moe-router-load-balancing-type", "sinkhorn"],
        same(
            err(C, "moe_expert_capacity_factor only works with aux_loss"),
            err(C, "moe_expert_capacity_factor only works with aux_loss"),
            err(C, "aux_loss or none"),
        ),
    )
    row(
        "A22",
        "shared-expert overlap + allgather",
        [
            "--num-experts",
            "8",
            "--moe-shared-expert-intermediate-size",
            "512",
            "--moe-shared-expert-overlap",
            "--moe-token-dispatcher-type",
            "allgather",
        ],
        same(err(C, "moe_shared_expert_overlap only works with alltoall")),
    )
    row(
        "A23",
        "--overlap-moe-expert-parallel-comm without EP",
        ["--num-experts", "8", "--overlap-moe-expert-parallel-comm"],
        same(
            err(C, "overlap_moe_expert_parallel_comm is only supported with expert model parallelism"),
            err(C, "overlap_moe_expert_parallel_comm is only supported with expert model parallelism"),
            err(P, "unrecognized arguments"),
        ),
    )
    row(
        "A24",
        "--moe-enable-deepep + alltoall",
        ["--num-experts", "8", "--moe-enable-deepep", "--moe-token-dispatcher-type", "alltoall"],
        same(err(C, "DeepEP backend is only supported with flex token dispatcher")),
    )
    row(
        "A25",
        "dispatcher alltoall_seq",
        ["--num-experts", "8", "--moe-token-dispatcher-type", "alltoall_seq"],
        same(err(P, "invalid choice: 'alltoall_seq'"), err(P, "invalid choice: 'alltoall_seq'"), ok()),
    )
    row(
        "A26",
        "selective + --recompute-method uniform",
        ["--recompute-granularity", "selective", "--recompute-method", "uniform"],
        same(err(V, "recompute method is not yet supported for selective recomputing granularity")),
    )
    row("A27", "full without method", ["--recompute-granularity", "full"], same(err(C, "recompute_method must be")))
    row(
        "A28",
        "full without num-layers",
        ["--recompute-granularity", "full", "--recompute-method", "uniform"],
        same(err(C, "recompute_num_layers must be between 1 and num_layers_per_pipeline_rank")),
    )
    row(
        "A29",
        "--distribute-saved-activations at TP=1",
        ["--distribute-saved-activations"],
        same(err(V, "can distribute recomputed activations only across tensor model parallel groups")),
    )
    row(
        "A30",
        "--fp8-format hybrid --transformer-impl local",
        ["--fp8-format", "hybrid", "--transformer-impl", "local"],
        same(ok()),
    )
    row(
        "A31",
        "--fp8-format hybrid --fp8-param-gather without distopt",
        ["--fp8-format", "hybrid", "--fp8-param-gather"],
        same(err(V, "--fp8-param-gather only supported with distributed optimizer")),
    )
    row(
        "A32",
        "--fp8-param-gather --use-distributed-optimizer without fp8",
        ["--fp8-param-gather", "--use-distributed-optimizer"],
        same(err(C, "fp8_param must be used together with fp8 mode")),
    )
    row(
        "A33",
        "delayed + --first-last-layers-bf16",
        ["--fp8-format", "hybrid", "--fp8-recipe", "delayed", "--first-last-layers-bf16"],
        same(err(C, "Delayed scaling does not support first / last layer in BF16")),
    )
    row(
        "A34",
        "fp8 + fp4",
        ["--fp8-format", "hybrid", "--fp4-format", "e2m1"],
        same(
            err(V, "--fp4-format and --fp8-format cannot be used simultaneously", "ValueError"),
            err(V, "--fp4-format and --fp8-format cannot be used simultaneously", "ValueError"),
            err(P, "unrecognized arguments"),
        ),
    )
    row(
        "A35",
        "--tp-comm-overlap at TP=2 without SP",
        ["--tensor-model-parallel-size", "2", "--tp-comm-overlap"],
        same(err(V, "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled")),
    )
    row("A36", "--use-mcore-models", ["--use-mcore-models"], same(ok()))
    row(
        "A37",
        "--use-legacy-models",
        ["--use-legacy-models"],
        same(
            err(P, "unrecognized arguments"), err(V, "legacy model format only supports the 'torch' checkpoint format")
        ),
    )
    row(
        "A38",
        "--no-async-tensor-model-parallel-allreduce",
        ["--no-async-tensor-model-parallel-allreduce"],
        same(err(P, "unrecognized arguments"), ok()),
    )
    row("A39", "--checkpoint-activations", ["--checkpoint-activations"], same(exit0()))
    row("A40", "--batch-size 4", ["--batch-size", "4"], same(err(V, "--batch-size argument is no longer valid")))
    row(
        "A41",
        "--model-parallel-size 2",
        ["--model-parallel-size", "2"],
        same(err(V, "--model-parallel-size is no longer valid")),
    )
    row("A42", "--warmup 0.01", ["--warmup", "0.01"], same(err(P, "invalid int value")))
    row(
        "A43",
        "PP=2, layers-per-VP-stage 3",
        ["--pipeline-model-parallel-size", "2", "--num-layers-per-virtual-pipeline-stage", "3"],
        same(
            err(V, "number of layers per pipeline stage must be divisible number of layers per virtual pipeline stage")
        ),
    )
    row(
        "A44",
        "PP=2, layers-per-VP-stage 2 (default overlap)",
        ["--pipeline-model-parallel-size", "2", "--num-layers-per-virtual-pipeline-stage", "2"],
        same(ok()),
    )
    row(
        "A45",
        "PP=2, layers-per-VP-stage 2, --no-overlap-p2p-communication",
        [
            "--pipeline-model-parallel-size",
            "2",
            "--num-layers-per-virtual-pipeline-stage",
            "2",
            "--no-overlap-p2p-communication",
        ],
        same(err(V, "pipeline-model-parallel size should be greater than 2")),
    )
    row(
        "A46",
        "both VPP flags",
        [
            "--pipeline-model-parallel-size",
            "2",
            "--num-layers-per-virtual-pipeline-stage",
            "2",
            "--num-virtual-stages-per-pipeline-rank",
            "2",
        ],
        same(
            err(V, "No more than one of the following arguments can be set at the same time"),
            err(V, "No more than one of the following arguments can be set at the same time"),
            err(V, "cannot be set at the same time"),
        ),
    )
    row(
        "A47",
        "PP=4, first-stage 3 layers",
        ["--pipeline-model-parallel-size", "4", "--decoder-first-pipeline-num-layers", "3"],
        same(err(C, "number of layers at middle stage: 5 must be divisible by")),
    )
    row(
        "A48",
        "PP=4 with layers-per-VP-stage and first-stage",
        [
            "--pipeline-model-parallel-size",
            "4",
            "--num-layers-per-virtual-pipeline-stage",
            "1",
            "--decoder-first-pipeline-num-layers",
            "2",
        ],
        same(err(V, "please use --num-virtual-stages-per-pipeline-rank")),
    )
    row(
        "A49",
        "layout Et*4|t*4L, PP=2",
        ["--pipeline-model-parallel-size", "2", "--pipeline-model-parallel-layout", "Et*4|t*4L"],
        same(ok(), ok(), err(P, "unrecognized arguments")),
    )
    row(
        "A50",
        "layout Et*3|t*4L, PP=2",
        ["--pipeline-model-parallel-size", "2", "--pipeline-model-parallel-layout", "Et*3|t*4L"],
        same(err(C, "Number of decoder layers 7"), err(C, "Number of decoder layers 7"), NA),
    )
    row(
        "A51",
        "PP=4 + account-for-embedding (9 layers)",
        ["--pipeline-model-parallel-size", "4", "--account-for-embedding-in-pipeline-split"],
        same(err(V, "divisible")),
    )
    row("A52", "hidden 500, heads 8", ["--hidden-size", "500"], same(err(V, "", "AssertionError")))
    row("A53", "hidden 500, heads 8, --kv-channels 64", ["--hidden-size", "500", "--kv-channels", "64"], same(ok()))
    row(
        "A54",
        "MLA + GQA",
        ["--multi-latent-attention", "--group-query-attention", "--num-query-groups", "2"],
        same(err(V, "Group query attention is mutually exclusive with multi latent attention"), ok()),
    )
    row(
        "A55",
        "--mtp-num-layers 1 (learned_absolute)",
        ["--mtp-num-layers", "1"],
        same(err(V, "Multi-Token Prediction (MTP) is not supported with learned_absolute")),
    )
    row(
        "A56",
        "--position-embedding-type mrope",
        ["--position-embedding-type", "mrope"],
        same(err(V, "--mrope-section should be set when using --position-embedding-type mrope")),
    )
    row(
        "A57",
        "--attention-backend local",
        ["--attention-backend", "local"],
        same(err(V, "'NoneType' object is not subscriptable", "TypeError")),
    )
    row("A58", "--hidden_size 512", ["--hidden_size", "512"], same(err(P, "unrecognized arguments")), keep_base=True)
    row("A59", "--hidden 512", ["--hidden", "512"], same(err(P, "unrecognized arguments")), keep_base=True)
    row(
        "A60",
        "FSDP2 + distopt",
        ["--use-torch-fsdp2", "--use-distributed-optimizer"],
        same(err(V, "--use-torch-fsdp2 is not supported with MCore's distributed optimizer")),
    )
    row(
        "A61",
        "Megatron-FSDP, CUDA_DEVICE_MAX_CONNECTIONS=1",
        ["--use-megatron-fsdp", "--ckpt-format", "fsdp_dtensor"],
        same(
            err(V, "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1"),
            err(V, "value large than one"),
            err(P, "invalid choice"),
        ),
    )
    row(
        "A62",
        "--fp32-residual-connection without bf16",
        ["--fp32-residual-connection"],
        same(err(V, "residual connection in fp32 only supported when using fp16 or bf16")),
        drop=("--bf16",),
    )
    row("A63", "--save without interval", ["--save", "/tmp/oracle-ckpt"], same(err(V, "", "AssertionError")))
    row("A64", "--min-lr 1e-3", ["--min-lr", "1e-3"], same(err(V, "", "AssertionError")))
    row(
        "A65",
        "--train-samples with --train-iters",
        ["--train-samples", "1000"],
        same(err(V, "expected iteration-based training")),
    )
    row(
        "A66",
        "distopt + --disable-gloo-process-groups + torch ckpt",
        ["--use-distributed-optimizer", "--disable-gloo-process-groups", "--ckpt-format", "torch"],
        same(err(V, "", "AssertionError")),
    )
    row(
        "A67",
        "--cpu-offloading-num-layers 2 + PP=2",
        ["--cpu-offloading-num-layers", "2", "--pipeline-model-parallel-size", "2"],
        same(
            err(C, "Currently there is no support for Pipeline parallelism with CPU offloading"),
            err(P, "unrecognized arguments"),
        ),
    )
    row(
        "A68",
        "--rampup-batch-size 16 16 1000",
        ["--rampup-batch-size", "16", "16", "1000"],
        same(ok(), err(V, "expected no batch-size rampup for iteration-based training")),
    )
    row(
        "A69",
        "--hybrid-layer-pattern M*M*",
        ["--hybrid-layer-pattern", "M*M*"],
        same(ok(num_layers=4), err(P, "unrecognized arguments")),
    )
    row("A70", "32 experts", ["--num-experts", "32"], same(ok(warns="without fp32 routing")))
    row(
        "A71",
        "--enable-cuda-graph",
        ["--enable-cuda-graph"],
        same(ok(cuda_graph_impl="local"), ok(cuda_graph_impl="local"), ok()),
    )
    row(
        "A72",
        "--num-distributed-optimizer-instances 3 (DP=8)",
        ["--num-distributed-optimizer-instances", "3"],
        same(ok(later="parallel_state"), ok(later="parallel_state"), ok(later="parallel_state")),
    )
    return ROWS


def main() -> int:
    rows = build()
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "..", "..", "tests", "data", "oracle", "scenarios", "appendix_a.json")
    out = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    doc = {
        "source": "megatron-constraints.md (research notes), Appendix A",
        "base_argv": BASE,
        "base_env": ENV,
        "note": "doc[version] is the outcome the research notes recorded; null = not recorded",
        "scenarios": rows,
    }
    with open(out, "w") as fh:
        head = {k: v for k, v in doc.items() if k != "scenarios"}
        fh.write(json.dumps(head)[:-1] + ',\n "scenarios": [\n')
        fh.write(",\n".join(json.dumps(r, separators=(",", ":")) for r in rows))
        fh.write("\n]}\n")
    print(f"{len(rows)} scenarios -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
