#!/usr/bin/env python3
"""Ask Megatron-LM itself which launch configurations it rejects.

This script runs outside megalint, in a separate virtual environment that has a CPU
build of torch and an unpacked Megatron-LM source tree on its path. For each scenario
(argv, environment, world size, emulated GPU) it runs the same calls a real
`pretrain_gpt.py` launch makes before training starts:

    parse_args -> validate_args -> microbatch calculator -> parallel_state
    -> core_transformer_config_from_args (TransformerConfig.__post_init__)

and writes one JSON object per scenario: where it stopped, the exception, the first
line of its message, the innermost megatron/ frame of the traceback, the warnings
Megatron emitted and the values validate_args silently changed.

Nothing here is imported by megalint; tests only read the JSON lines it produced.
See tests/data/oracle/README.md for the exact setup.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import multiprocessing
import os
import re
import sys
import traceback
import types
import typing
import warnings

# Stages in the order a real launch reaches them (megatron/training/initialize.py:
# validate_args, then set_global_variables builds the microbatch calculator, then
# _initialize_distributed builds parallel_state; the TransformerConfig is built with
# the model afterwards).
STAGES = ("parse_args", "validate_args", "microbatches", "parallel_state", "transformer_config")

# argparse dests whose value validate_args may rewrite without failing; recorded as
# [before, after] when they differ.
TRACKED_DESTS = (
    "sequence_parallel",
    "global_batch_size",
    "micro_batch_size",
    "num_layers",
    "ffn_hidden_size",
    "kv_channels",
    "num_query_groups",
    "virtual_pipeline_model_parallel_size",
    "overlap_p2p_comm",
    "align_param_gather",
    "recompute_granularity",
    "recompute_method",
    "expert_tensor_parallel_size",
    "check_for_nan_in_loss_and_grad",
    "accumulate_allreduce_grads_in_fp32",
    "apply_rope_fusion",
    "use_distributed_optimizer",
    "overlap_param_gather",
    "overlap_grad_reduce",
    "async_save",
    "te_rng_tracker",
    "cuda_graph_impl",
    "bias_gelu_fusion",
    "add_qkv_bias",
    "num_experts",
    "moe_ffn_hidden_size",
    "position_embedding_type",
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "expert_model_parallel_size",
    "fp8",
    "fp16",
    "bf16",
    "tokenizer_type",
    "split",
    "use_torch_fsdp2",
    "use_megatron_fsdp",
    "ckpt_format",
    "moe_router_dtype",
    "moe_token_dispatcher_type",
    "moe_flex_dispatcher_backend",
)

CONFIG_FIELDS = (
    "num_query_groups",
    "ffn_hidden_size",
    "kv_channels",
    "num_layers",
    "moe_ffn_hidden_size",
    "params_dtype",
)

# Environment variables a scenario controls; anything not named by the scenario is unset
# so the caller's shell cannot leak into the verdict.
CONTROLLED_ENV = (
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "NVTE_FLASH_ATTN",
    "NVTE_FUSED_ATTN",
    "NVTE_UNFUSED_ATTN",
    "NVTE_CPU_OFFLOAD_V1",
    "PYTORCH_CUDA_ALLOC_CONF",
    "NCCL_GRAPH_REGISTER",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NVTE_ALLOW_NONDETERMINISTIC_ALGO",
    "CUBLAS_WORKSPACE_CONFIG",
    "CUDA_GRAPHS_USE_NODE_PRIORITY",
)

# Warnings that come from this machine lacking optional packages (TE, Apex, absl), not from
# the configuration under test.
NOISE = re.compile(
    r"not installed|Failed to initialize NumPy|absl|falling back to|Transformer Engine|"
    r"TE is not|Apex|nvidia_resiliency|No module named",
    re.IGNORECASE,
)

GPU_NAMES = {
    (7, 0): "Tesla V100-SXM2-32GB",
    (8, 0): "NVIDIA A100-SXM4-80GB",
    (9, 0): "NVIDIA H100 80GB HBM3",
    (10, 0): "NVIDIA B200",
}

_MEGATRON_ROOT = ""
_GPU = [9, 0]
_WORLD = [8]


# --------------------------------------------------------------------------- emulation


def _install_shims() -> None:
    # Megatron >= 0.19 imports typing.override, which Python 3.11 lacks; the decorator is
    # an identity function at run time.
    if not hasattr(typing, "override"):
        typing.override = lambda f: f  # type: ignore[attr-defined]


def _emulate_gpu() -> None:
    """Make torch.cuda answer as if one GPU of capability _GPU were attached."""
    import torch

    def props(device=None):
        major, minor = _GPU
        return types.SimpleNamespace(
            major=major,
            minor=minor,
            name=GPU_NAMES.get(tuple(_GPU), f"sm_{major}{minor}"),
            total_memory=80 * 2**30,
            multi_processor_count=132,
            uuid="emulated",
        )

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: min(8, _WORLD[0])
    torch.cuda.current_device = lambda: 0
    torch.cuda.set_device = lambda device: None
    torch.cuda.get_device_capability = lambda device=None: tuple(_GPU)
    torch.cuda.get_device_properties = props
    torch.cuda.get_device_name = lambda device=None: props().name
    torch.cuda.is_bf16_supported = lambda *a, **k: _GPU[0] >= 8


def _fake_distributed(world_size: int) -> None:
    """A single-process 'fake' process group of the scenario's world size, so
    parallel_state.initialize_model_parallel runs its own factorisation checks."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not dist.is_initialized():
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    if not getattr(dist.new_group, "_oracle", False):
        original = dist.new_group

        def new_group(*args, **kwargs):
            # The fake backend stands in for NCCL/Gloo; their options cannot apply to it.
            kwargs.pop("backend", None)
            kwargs.pop("pg_options", None)
            return original(*args, **kwargs)

        new_group._oracle = True
        dist.new_group = new_group


# --------------------------------------------------------------------------- helpers


def _location(tb) -> str | None:
    """file:line of the innermost traceback frame inside the megatron/ tree."""
    where = None
    for frame, lineno in traceback.walk_tb(tb):
        fname = os.path.abspath(frame.f_code.co_filename)
        if fname.startswith(_MEGATRON_ROOT + os.sep):
            where = f"{os.path.relpath(fname, os.path.dirname(_MEGATRON_ROOT))}:{lineno}"
    return where


def _first_line(text: str) -> str:
    text = (text or "").strip()
    return text.splitlines()[0][:400] if text else ""


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)) and all(v is None or isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    if hasattr(value, "name") and type(value).__module__ != "builtins" and hasattr(type(value), "__members__"):
        return value.name  # enum member
    return repr(value)


# A failure whose message asks for a package the recording machine lacks says nothing about
# the configuration on a real cluster (e.g. "apply_rope_fusion is not available. Please
# install TE >= 1.4."); such verdicts are marked so consumers can set them aside.
MISSING_PACKAGE = re.compile(
    r"Transformer Engine|transformer-engine|transformer_engine|\bTE\b|Apex|apex|"
    r"nvidia_resiliency|is not available|please install|No module named",
    re.IGNORECASE,
)


def _failure(stage: str, exc: BaseException, stderr_text: str) -> dict:
    verdict = _failure_fields(stage, exc, stderr_text)
    if verdict["outcome"] == "error" and MISSING_PACKAGE.search(verdict["message"] or ""):
        verdict["missing_package"] = True
    return verdict


def _failure_fields(stage: str, exc: BaseException, stderr_text: str) -> dict:
    if isinstance(exc, SystemExit):
        code = exc.code
        if code in (None, 0):
            return {
                "outcome": "exit0",
                "stage": stage,
                "exception": "SystemExit",
                "message": "" if code is None else str(code),
                "check_location": _location(exc.__traceback__),
            }
        # argparse reports through parser.error(): usage + "prog: error: ..." on stderr.
        lines = [ln for ln in stderr_text.splitlines() if ": error: " in ln]
        msg = lines[-1].split(": error: ", 1)[1] if lines else _first_line(str(code))
        return {
            "outcome": "error",
            "stage": stage,
            "exception": f"SystemExit({code})",
            "message": msg[:400],
            "check_location": _location(exc.__traceback__),
        }
    return {
        "outcome": "error",
        "stage": stage,
        "exception": type(exc).__name__,
        "message": _first_line(str(exc)),
        "check_location": _location(exc.__traceback__),
    }


class _LogCollector(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        if record.name.startswith("megatron") or record.pathname.startswith(_MEGATRON_ROOT):
            self.records.append(record.getMessage())


def _collect_warnings(caught, logs, out_text) -> list[str]:
    seen, result = set(), []
    texts = []
    for w in caught:
        fname = os.path.abspath(w.filename or "")
        if fname.startswith(_MEGATRON_ROOT):
            texts.append(f"{w.category.__name__}: {w.message}")
    texts += [f"log: {m}" for m in logs]
    texts += [
        f"stdout: {ln.strip()}" for ln in out_text.splitlines() if re.match(r"\s*(WARNING|Warning:|warning:)", ln)
    ]
    for t in texts:
        t = _first_line(t)[:200]
        if not t or NOISE.search(t) or t in seen:
            continue
        seen.add(t)
        result.append(t)
    return result


# --------------------------------------------------------------------------- stages


def _call_with_known(fn, candidates: dict):
    import inspect

    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in candidates.items() if k in params})


def _stage_microbatches(args):
    from megatron.core import num_microbatches_calculator as nmc

    nmc.unset_num_microbatches_calculator() if hasattr(nmc, "unset_num_microbatches_calculator") else None
    gtp = getattr(args, "gtp_weight_remat_size", 1) or 1
    _call_with_known(
        nmc.init_num_microbatches_calculator,
        {
            "rank": args.rank,
            "rampup_batch_size": getattr(args, "rampup_batch_size", None),
            "global_batch_size": args.global_batch_size,
            "micro_batch_size": args.micro_batch_size,
            "data_parallel_size": args.data_parallel_size * gtp,
            "decrease_batch_size_if_needed": getattr(args, "decrease_batch_size_if_needed", False),
            "step_batch_size_schedule": getattr(args, "step_batch_size_schedule", None),
            "seq_length": getattr(args, "seq_length", None),
        },
    )


def _stage_parallel_state(args):
    _fake_distributed(args.world_size)
    from megatron.core import parallel_state as ps

    candidates = {
        name: getattr(args, name)
        for name in (
            "pipeline_model_parallel_split_rank",
            "pipeline_model_parallel_comm_backend",
            "use_sharp",
            "context_parallel_size",
            "hierarchical_context_parallel_sizes",
            "hybrid_context_parallel",
            "expert_model_parallel_size",
            "num_distributed_optimizer_instances",
            "expert_tensor_parallel_size",
            "distributed_timeout_minutes",
            "nccl_communicator_config_path",
            "encoder_tensor_model_parallel_size",
            "encoder_pipeline_model_parallel_size",
            "high_priority_stream_groups",
            "sharp_enabled_group",
        )
        if hasattr(args, name)
    }
    candidates.update(
        tensor_model_parallel_size=args.tensor_model_parallel_size,
        pipeline_model_parallel_size=args.pipeline_model_parallel_size,
        virtual_pipeline_model_parallel_size=args.virtual_pipeline_model_parallel_size,
        order="tp-cp-ep-pp-dp" if getattr(args, "use_tp_pp_dp_mapping", False) else "tp-cp-ep-dp-pp",
        create_gloo_process_groups=False,
    )
    if hasattr(args, "gtp_weight_remat_size"):
        candidates["gtp_remat_size"] = args.gtp_weight_remat_size
    if hasattr(args, "expert_gtp_weight_remat_size"):
        candidates["expert_gtp_remat_size"] = args.expert_gtp_weight_remat_size
    _call_with_known(ps.initialize_model_parallel, candidates)


def _stage_transformer_config(args):
    from megatron.training import arguments as arguments_mod

    fn = getattr(arguments_mod, "core_transformer_config_from_args", None)
    if fn is None:
        from megatron.training.argument_utils import core_transformer_config_from_args as fn
    return fn(args)


def run_scenario(scn: dict) -> dict:
    """Run one scenario in the current (forked) process and return its verdict."""
    _GPU[:] = list(scn.get("gpu_capability") or [9, 0])
    _WORLD[0] = int(scn["world_size"])
    for name in CONTROLLED_ENV:
        os.environ.pop(name, None)
    os.environ["WORLD_SIZE"] = str(scn["world_size"])
    os.environ["RANK"] = "0"
    os.environ["LOCAL_RANK"] = "0"
    for k, v in (scn.get("env") or {}).items():
        os.environ[k] = str(v)
    sys.argv = ["pretrain_gpt.py"] + list(scn["argv"])

    from megatron.training.arguments import parse_args, validate_args

    result = {"outcome": "ok", "stage": "complete", "exception": None, "message": None, "check_location": None}
    changed, config, later = {}, None, []
    out, err = io.StringIO(), io.StringIO()
    collector = _LogCollector()
    logging.getLogger().addHandler(collector)
    with (
        warnings.catch_warnings(record=True) as caught,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        warnings.simplefilter("always")
        stage = "parse_args"
        failed = None
        try:
            args = parse_args()
            before = {d: _jsonable(getattr(args, d)) for d in TRACKED_DESTS if hasattr(args, d)}
            stage = "validate_args"
            validate_args(args, {})
            for d in TRACKED_DESTS:
                if hasattr(args, d):
                    after = _jsonable(getattr(args, d))
                    if (before[d] != after) if d in before else after is not None:
                        changed[d] = [before.get(d), after]
            changed["data_parallel_size"] = [None, getattr(args, "data_parallel_size", None)]
        except BaseException as exc:  # SystemExit included: argparse and exit() use it
            failed = _failure(stage, exc, err.getvalue())
        if failed is None:
            for stage in STAGES[2:]:
                try:
                    value = globals()[f"_stage_{stage}"](args)
                    if stage == "transformer_config":
                        config = {f: _jsonable(getattr(value, f, None)) for f in CONFIG_FIELDS}
                except BaseException as exc:
                    later.append(_failure(stage, exc, err.getvalue()))
            if later:
                failed = later.pop(0)
        if failed is not None:
            result.update(failed)
    logging.getLogger().removeHandler(collector)
    result["warnings"] = _collect_warnings(caught, collector.records, out.getvalue() + "\n" + err.getvalue())
    result["changed"] = changed
    if config is not None:
        result["config"] = config
    if later:
        result["later_failures"] = later
    return result


def _worker(scn: dict) -> dict:
    try:
        verdict = run_scenario(scn)
    except BaseException as exc:  # harness fault, kept visible in the data
        verdict = {
            "outcome": "harness_error",
            "stage": None,
            "exception": type(exc).__name__,
            "message": _first_line(str(exc)),
            "check_location": None,
            "warnings": [],
            "changed": {},
        }
    row = {
        "id": scn["id"],
        "argv": scn["argv"],
        "env": scn.get("env") or {},
        "world_size": scn["world_size"],
        "gpu_capability": scn.get("gpu_capability") or [9, 0],
    }
    row.update(verdict)
    return row


def _warm_imports() -> None:
    """Import once in the parent so every forked scenario starts from the same state."""
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        import megatron.training.arguments  # noqa: F401
        from megatron.core import num_microbatches_calculator, parallel_state  # noqa: F401

        try:
            import megatron.training.argument_utils  # noqa: F401
        except ImportError:
            pass
        from megatron.core.transformer import transformer_config  # noqa: F401

        try:
            from megatron.core.transformer import MLATransformerConfig  # noqa: F401
        except ImportError:
            pass
        import torch.testing._internal.distributed.fake_pg  # noqa: F401


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--megatron-root", required=True, help="directory holding the megatron/ package of one Megatron-LM version"
    )
    ap.add_argument("--version", required=True, help="label written to the output, e.g. HEAD or 0.15.0")
    ap.add_argument("--scenarios", nargs="+", required=True, help="scenario JSON files")
    ap.add_argument("--out", required=True, help="JSON lines file to write")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=180, help="seconds per scenario")
    ap.add_argument("--only", nargs="*", help="scenario ids to run (default: all)")
    ns = ap.parse_args(argv)

    global _MEGATRON_ROOT
    root = os.path.abspath(ns.megatron_root)
    _MEGATRON_ROOT = os.path.join(root, "megatron")
    sys.path.insert(0, root)
    _install_shims()
    _emulate_gpu()
    _warm_imports()

    scenarios = []
    for path in ns.scenarios:
        with open(path) as fh:
            scenarios += json.load(fh)["scenarios"]
    if ns.only:
        wanted = set(ns.only)
        scenarios = [s for s in scenarios if s["id"] in wanted]
    ids = [s["id"] for s in scenarios]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate scenario ids")

    ctx = multiprocessing.get_context("fork")
    rows = []
    with ctx.Pool(ns.jobs, maxtasksperchild=1) as pool:
        pending = [(s, pool.apply_async(_worker, (s,))) for s in scenarios]
        for scn, fut in pending:
            try:
                row = fut.get(ns.timeout)
            except multiprocessing.TimeoutError:
                row = {
                    "id": scn["id"],
                    "argv": scn["argv"],
                    "env": scn.get("env") or {},
                    "world_size": scn["world_size"],
                    "gpu_capability": scn.get("gpu_capability") or [9, 0],
                    "outcome": "harness_error",
                    "stage": None,
                    "exception": "Timeout",
                    "message": f"no verdict within {ns.timeout}s",
                    "check_location": None,
                    "warnings": [],
                    "changed": {},
                }
            row = {"version": ns.version, **row}
            rows.append(row)
    with open(ns.out, "w") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=False, separators=(",", ":")) + "\n")
    counts = {}
    for row in rows:
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
    print(f"{ns.version}: {len(rows)} scenarios -> {ns.out} {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
