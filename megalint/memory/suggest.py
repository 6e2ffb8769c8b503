"""Configuration changes that lower per-GPU memory, each re-estimated.

Every candidate is a set of argument changes that stays valid for the world size
(divisibility of heads, layers, world and global batch is checked by re-running the
estimator, which raises InvalidConfig otherwise). Results: those that fit the usable
memory first, then by throughput cost (a fixed order from cheapest to dearest:
sharding the optimizer costs almost nothing, selective recompute a few percent,
parallelism changes more, full recompute ~30 %, smaller micro-batches lose GEMM
efficiency), then by predicted device memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .calibration import DEFAULT_CALIBRATION, Calibration
from .defaults import with_defaults
from .estimator import InvalidConfig, estimate


@dataclass(frozen=True)
class Suggestion:
    flags: tuple[str, ...]  # command-line text to add or replace, e.g. "--tensor-model-parallel-size 4"
    changes: dict[str, Any]  # the same as argparse dest -> new value
    peak_bytes: int  # predicted max_memory_allocated of the most loaded stage
    device_bytes: int  # peak plus overhead outside the allocator
    fits: bool
    cost_rank: int  # 0 = cheapest in throughput
    note: str

    def to_json(self) -> dict[str, Any]:
        return {"flags": list(self.flags), "changes": dict(self.changes), "peak_bytes": self.peak_bytes,
                "device_bytes": self.device_bytes, "fits": self.fits, "cost_rank": self.cost_rank,
                "note": self.note}


def _candidates(a: Mapping[str, Any]) -> list[tuple[int, str, Callable[[dict], dict | None]]]:
    tp = int(a["tensor_model_parallel_size"])
    pp = int(a["pipeline_model_parallel_size"])

    def dist_opt(x):
        return None if x.get("use_distributed_optimizer") else {"use_distributed_optimizer": True}

    def selective(x):
        if x.get("recompute_granularity") in ("selective", "full"):
            return None
        return {"recompute_granularity": "selective"}

    def sp(x):
        if tp <= 1 or x.get("sequence_parallel"):
            return None
        return {"sequence_parallel": True}

    def tp2(x):
        return {"tensor_model_parallel_size": tp * 2}

    def pp2(x):
        return {"pipeline_model_parallel_size": pp * 2}

    def full(x):
        if x.get("recompute_granularity") == "full" and x.get("recompute_num_layers") == 1 and x.get("recompute_method") == "uniform":
            return None
        return {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}

    def mbs1(x):
        if int(x["micro_batch_size"]) <= 1:
            return None
        return {"micro_batch_size": 1}

    return [
        (0, "distributed optimizer shards fp32 states over DP x CP", dist_opt),
        (1, "sequence parallelism splits norm/dropout activations over TP", sp),
        (2, "selective recompute of core attention", selective),
        (3, "tensor parallelism x2", tp2),
        (4, "pipeline parallelism x2", pp2),
        (5, "full recompute, one layer per checkpoint (~30 % more compute)", full),
        (6, "micro-batch size 1 (same global batch, more micro-batches)", mbs1),
    ]


_FLAG = {
    "use_distributed_optimizer": "--use-distributed-optimizer",
    "sequence_parallel": "--sequence-parallel",
    "recompute_granularity": "--recompute-granularity",
    "recompute_method": "--recompute-method",
    "recompute_num_layers": "--recompute-num-layers",
    "tensor_model_parallel_size": "--tensor-model-parallel-size",
    "pipeline_model_parallel_size": "--pipeline-model-parallel-size",
    "micro_batch_size": "--micro-batch-size",
}


def _flags(changes: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for k, v in changes.items():
        flag = _FLAG[k]
        out.append(flag if v is True else f"{flag} {v}")
    return tuple(out)


def suggest(args: Mapping[str, Any], world_size: int, usable_bytes: int,
            calibration: Calibration = DEFAULT_CALIBRATION) -> list[Suggestion]:
    """Re-estimate the configuration under each single memory-saving change."""
    a = with_defaults(args)
    out: list[Suggestion] = []
    for cost, note, make in _candidates(a):
        changes = make(a)
        if not changes:
            continue
        new = dict(args)
        new.update(changes)
        try:
            e = estimate(new, world_size, calibration)
        except InvalidConfig:
            continue
        if not e.complete:
            continue
        n_heads = int(a["num_attention_heads"])
        tp = int(new.get("tensor_model_parallel_size", a["tensor_model_parallel_size"]))
        if n_heads % tp:
            continue  # Megatron asserts heads divisible by TP
        if a.get("num_query_groups") and a.get("group_query_attention") and int(a["num_query_groups"]) % tp:
            continue
        pp = int(new.get("pipeline_model_parallel_size", a["pipeline_model_parallel_size"]))
        if int(a["num_layers"]) % pp and not (a.get("num_layers_in_first_pipeline_stage") or a.get("num_layers_in_last_pipeline_stage")):
            continue
        out.append(Suggestion(flags=_flags(changes), changes=changes, peak_bytes=e.peak_bytes,
                              device_bytes=e.device_bytes, fits=e.device_bytes <= usable_bytes,
                              cost_rank=cost, note=note))
    out.sort(key=lambda s: (not s.fits, s.cost_rank, s.device_bytes))
    return out
