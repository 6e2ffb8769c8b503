"""Configuration changes that lower per-GPU memory, each re-estimated.

Every candidate is a set of argument changes that stays valid for the world size
(divisibility of heads, query groups, layers, world and global batch is checked, the
last two by re-running the estimator, which raises InvalidConfig otherwise).

`suggest` tries each change alone; `plan` searches combinations of them for the
cheapest one that fits. Throughput cost is a coarse ordinal score, not a measured
slowdown: sharding the optimizer costs almost nothing (its all-gather overlaps with
compute), sequence parallelism with TP > 1 is neutral to positive, selective
recompute of core attention a few percent, each doubling of TP inside a node or of
PP a bubble or communication step more, TP across nodes much more, a micro-batch of 1
loses GEMM efficiency, full recompute adds ~30 % compute (Megatron-Bridge,
docs/training/activation-recomputation.md). Results: those that fit first, then
cheapest, then fewest changes, then smallest predicted device memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from .arg_values import InvalidConfig
from .breakdown import MemoryEstimate
from .calibration import DEFAULT_CALIBRATION, Calibration
from .defaults import with_defaults
from .estimator import estimate


class SuggestionJson(TypedDict):
    flags: list[str]
    changes: dict[str, Any]
    peak_bytes: int
    device_bytes: int
    fits: bool | None
    cost_rank: int
    note: str


@dataclass(frozen=True)
class Suggestion:
    """A change of flags that makes a launch fit its GPUs' memory."""

    flags: tuple[str, ...]  # command-line text to add or replace, e.g. "--tensor-model-parallel-size 4"
    changes: dict[str, Any]  # the same as argparse dest -> new value
    peak_bytes: int  # predicted max_memory_allocated of the most loaded stage
    device_bytes: int  # peak plus overhead outside the allocator
    fits: bool | None  # None when the usable memory is not known
    cost_rank: int  # 0 = cheapest in throughput
    note: str

    def to_json(self) -> SuggestionJson:
        return {
            "flags": list(self.flags),
            "changes": dict(self.changes),
            "peak_bytes": self.peak_bytes,
            "device_bytes": self.device_bytes,
            "fits": self.fits,
            "cost_rank": self.cost_rank,
            "note": self.note,
        }


# ordinal throughput costs (see the module docstring)
COST_DIST_OPT = 0
COST_SP = 0
COST_SELECTIVE = 1
COST_TP_DOUBLING = 2
COST_TP_ACROSS_NODES = 6
COST_PP_DOUBLING = 2
COST_MBS1 = 3
COST_FULL_RECOMPUTE = 5


def _candidates(a: Mapping[str, Any]) -> list[tuple[int, str, Callable[[Mapping[str, Any]], dict[str, Any] | None]]]:
    tp = int(a["tensor_model_parallel_size"])
    pp = int(a["pipeline_model_parallel_size"])

    def dist_opt(x: Mapping[str, Any]) -> dict[str, Any] | None:
        return None if x.get("use_distributed_optimizer") else {"use_distributed_optimizer": True}

    def selective(x: Mapping[str, Any]) -> dict[str, Any] | None:
        if x.get("recompute_granularity") in ("selective", "full"):
            return None
        return {"recompute_granularity": "selective"}

    def sp(x: Mapping[str, Any]) -> dict[str, Any] | None:
        if tp <= 1 or x.get("sequence_parallel"):
            return None
        return {"sequence_parallel": True}

    def tp2(x: Mapping[str, Any]) -> dict[str, Any] | None:
        return {"tensor_model_parallel_size": tp * 2}

    def pp2(x: Mapping[str, Any]) -> dict[str, Any] | None:
        return {"pipeline_model_parallel_size": pp * 2}

    def full(x: Mapping[str, Any]) -> dict[str, Any] | None:
        if (
            x.get("recompute_granularity") == "full"
            and x.get("recompute_num_layers") == 1
            and x.get("recompute_method") == "uniform"
        ):
            return None
        return {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}

    def mbs1(x: Mapping[str, Any]) -> dict[str, Any] | None:
        if int(x["micro_batch_size"]) <= 1:
            return None
        return {"micro_batch_size": 1}

    return [
        (COST_DIST_OPT, "distributed optimizer shards fp32 states over DP x CP", dist_opt),
        (COST_SP, "sequence parallelism splits norm/dropout activations over TP", sp),
        (COST_SELECTIVE, "selective recompute of core attention", selective),
        (COST_TP_DOUBLING, "tensor parallelism x2", tp2),
        (COST_PP_DOUBLING, "pipeline parallelism x2", pp2),
        (COST_MBS1, "micro-batch size 1 (same global batch, more micro-batches)", mbs1),
        (COST_FULL_RECOMPUTE, "full recompute, one layer per checkpoint (~30 % more compute)", full),
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

_ORDER = list(_FLAG)


def _flags(changes: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for k in sorted(changes, key=_ORDER.index):
        v = changes[k]
        flag = _FLAG[k]
        out.append(flag if v is True else f"{flag} {v}")
    return tuple(out)


def _valid_split(a: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Divisibility Megatron asserts that the estimator does not check itself."""
    tp = int(new.get("tensor_model_parallel_size", a["tensor_model_parallel_size"]))
    if int(a["num_attention_heads"]) % tp:
        return False
    if a.get("group_query_attention") and a.get("num_query_groups") and int(a["num_query_groups"]) % tp:
        return False
    pp = int(new.get("pipeline_model_parallel_size", a["pipeline_model_parallel_size"]))
    uneven = a.get("num_layers_in_first_pipeline_stage") or a.get("num_layers_in_last_pipeline_stage")
    vpp = a.get("virtual_pipeline_model_parallel_size")
    per_vs = a.get("num_layers_per_virtual_pipeline_stage")
    if pp != int(a["pipeline_model_parallel_size"]):
        if uneven or vpp or per_vs:
            return False  # a changed PP would need a new uneven or virtual split as well
        if int(a["num_layers"]) % pp:
            return False
    return True


def _estimate(
    args: Mapping[str, Any], changes: Mapping[str, Any], world_size: int, calibration: Calibration
) -> MemoryEstimate | None:
    a = with_defaults(args)
    if not _valid_split(a, changes):
        return None
    new = dict(args)
    new.update(changes)
    if new.get("sequence_parallel") and int(new.get("tensor_model_parallel_size") or 1) <= 1:
        new["sequence_parallel"] = False
    try:
        e = estimate(new, world_size, calibration)
    except (InvalidConfig, ValueError, ZeroDivisionError):
        return None
    return e if e.complete else None


def _sizes(e: MemoryEstimate) -> tuple[int, int]:
    """(peak, device) bytes of an estimate `_estimate` made, which is complete."""
    peak, device = e.peak_bytes, e.device_bytes
    assert peak is not None and device is not None
    return peak, device


def suggest(
    args: Mapping[str, Any], world_size: int, usable_bytes: int | None, calibration: Calibration = DEFAULT_CALIBRATION
) -> list[Suggestion]:
    """Re-estimate the configuration under each single memory-saving change."""
    a = with_defaults(args)
    out: list[Suggestion] = []
    for cost, note, make in _candidates(a):
        changes = make(a)
        if not changes:
            continue
        e = _estimate(args, changes, world_size, calibration)
        if e is None:
            continue
        peak, device = _sizes(e)
        out.append(
            Suggestion(
                flags=_flags(changes),
                changes=changes,
                peak_bytes=peak,
                device_bytes=device,
                fits=None if usable_bytes is None else device <= usable_bytes,
                cost_rank=cost,
                note=note,
            )
        )
    out.sort(key=lambda s: (s.fits is not True, s.cost_rank, s.device_bytes))
    return out


def _powers(start: int, limit: int) -> list[int]:
    if start < 1:  # doubling a size below 1 never reaches the limit
        return []
    out, v = [start], start
    while v * 2 <= limit:
        v *= 2
        out.append(v)
    return out


def plan(
    args: Mapping[str, Any],
    world_size: int,
    usable_bytes: int,
    gpus_per_node: int | None = None,
    calibration: Calibration = DEFAULT_CALIBRATION,
    max_changes: int = 5,
) -> Suggestion | None:
    """The cheapest combination of the changes of `suggest` that fits, or None.

    TP and PP may be doubled several times; TP beyond the GPUs of one node costs more
    (its all-reduces then cross the inter-node network).
    """
    a = with_defaults(args)
    tp0 = int(a["tensor_model_parallel_size"])
    pp0 = int(a["pipeline_model_parallel_size"])
    cp = int(a["context_parallel_size"])
    tps = _powers(tp0, max(tp0, world_size // (pp0 * cp)))
    pps = _powers(pp0, max(pp0, min(int(a["num_layers"]), world_size // (tp0 * cp))))
    rg = a.get("recompute_granularity")
    rec_opts: list[str | None] = [None]
    if rg not in ("selective", "full"):
        rec_opts.append("selective")
    if not (rg == "full" and a.get("recompute_method") == "uniform" and a.get("recompute_num_layers") == 1):
        rec_opts.append("full")
    dist_opts = [False] if a.get("use_distributed_optimizer") else [False, True]
    mbs_opts = [False, True] if int(a["micro_batch_size"]) > 1 else [False]
    best: tuple[tuple[int, int, int], Suggestion] | None = None
    for tp, pp, rec, dist, mbs1 in itertools.product(tps, pps, rec_opts, dist_opts, mbs_opts):
        changes: dict[str, Any] = {}
        cost = 0
        if dist:
            changes["use_distributed_optimizer"] = True
            cost += COST_DIST_OPT
        if tp != tp0:
            changes["tensor_model_parallel_size"] = tp
            doublings = (tp // tp0).bit_length() - 1
            cost += COST_TP_DOUBLING * doublings
            if gpus_per_node and tp > gpus_per_node:
                cost += COST_TP_ACROSS_NODES
        if tp > 1 and not a.get("sequence_parallel"):
            changes["sequence_parallel"] = True
            cost += COST_SP
        if pp != pp0:
            changes["pipeline_model_parallel_size"] = pp
            cost += COST_PP_DOUBLING * ((pp // pp0).bit_length() - 1)
        if rec == "selective":
            changes["recompute_granularity"] = "selective"
            cost += COST_SELECTIVE
        elif rec == "full":
            changes.update(recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1)
            cost += COST_FULL_RECOMPUTE
        if mbs1:
            changes["micro_batch_size"] = 1
            cost += COST_MBS1
        if not changes or len(changes) > max_changes + 2:
            continue
        if best is not None and (cost, len(changes)) > best[0][:2]:
            continue
        e = _estimate(args, changes, world_size, calibration)
        if e is None:
            continue
        peak, device = _sizes(e)
        if device > usable_bytes:
            continue
        key = (cost, len(changes), device)
        if best is None or key < best[0]:
            best = (
                key,
                Suggestion(
                    flags=_flags(changes),
                    changes=changes,
                    peak_bytes=peak,
                    device_bytes=device,
                    fits=True,
                    cost_rank=cost,
                    note="cheapest combination that fits",
                ),
            )
    return best[1] if best else None
