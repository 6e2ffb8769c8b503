"""The memory estimate as rules and the `megalint memory` command see it.

`context_view` turns a MemoryEstimate into the plain dict of the rule context's `memory`
root: the estimate itself, the usable memory of the GPU, the worst stage with its largest
terms, the headroom, and, when the job does not fit comfortably, re-estimated suggestions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from .breakdown import MemoryEstimate, MemoryEstimateJson, StageEstimate
from .calibration import WARN_FRACTION
from .suggest import Suggestion, SuggestionJson, plan, suggest

if TYPE_CHECKING:
    from megalint.hardware.profiles import GpuProfile


class TermJson(TypedDict):
    name: str  # the term as the user reads it
    term: str
    bytes: int


class WorstStageJson(TypedDict):
    stage: str
    pp_rank: int
    peak_bytes: int
    device_bytes: int
    peak_event: str
    model_state_bytes: int
    activation_bytes: int
    top_terms: list[TermJson]


class _MemoryViewBase(MemoryEstimateJson):
    args: dict[str, Any]  # the estimator's input, as argparse dests
    lower_bound: bool
    not_counted: dict[str, str]  # what the estimate leaves out -> why
    worst: WorstStageJson
    warn_fraction: float


class MemoryView(_MemoryViewBase, total=False):
    """The rule context's `memory`. The keys below are there only when the GPU's memory is
    known: `usable_min_bytes` for a family of models, `suggestions` when the job does not fit
    comfortably."""

    usable_bytes: int
    usable_is_largest_variant: bool
    usable_min_bytes: int
    gpu_name: str
    headroom_bytes: int
    used_fraction: float
    suggestions: list[SuggestionJson]


TERM_LABELS = {
    "params": "parameters",
    "grads": "gradients",
    "optimizer_state": "optimizer state",
    "workspace": "workspaces",
    "attention_buffers": "attention buffers",
    "cuda_graph_buffers": "CUDA-graph static buffers",
    "deferred_embedding_wgrad": "deferred output-layer wgrad inputs",
    "activations": "activations",
    "embedding_and_final_norm_activations": "embedding/final-norm activations",
    "logits_and_loss": "logits and loss",
    "backward_transient": "backward transient",
    "optimizer_step_transient": "optimizer-step transient",
    "cuda_context": "CUDA context",
    "nccl": "NCCL buffers",
    "fragmentation": "allocator fragmentation",
}
MODEL_STATE_TERMS = ("params", "grads", "optimizer_state")
ACTIVATION_TERMS = (
    "activations",
    "embedding_and_final_norm_activations",
    "logits_and_loss",
    "backward_transient",
    "attention_buffers",
    "cuda_graph_buffers",
    "deferred_embedding_wgrad",
)
MAX_SUGGESTIONS = 5


def usable_memory(profile: GpuProfile | None) -> tuple[int | None, bool]:
    """(bytes the allocator can use, whether that is only the largest of a family's models).

    A family named without its memory size (`a100`) holds models of different sizes: a job
    that does not fit the largest one fits none of them.
    """
    if profile is None:
        return None, False
    if profile.memory_bytes is not None:
        return int(profile.memory_bytes), False
    rng = profile.memory_range
    if rng:
        return int(rng[1]), True
    bounds = [_upper(v) for v in _variants(profile)]
    known = [b for b in bounds if b is not None]
    if known and len(known) == len(bounds):
        return max(known), True
    return None, False


def usable_min(profile: GpuProfile) -> int | None:
    rng = profile.memory_range
    if rng:
        return int(rng[0])
    sizes = [v.memory_bytes for v in _variants(profile)]
    known = [k for k in sizes if k is not None]
    return min(known) if known and len(known) == len(sizes) else None


def _variants(profile: GpuProfile) -> list[GpuProfile]:
    from megalint.hardware.profiles import get_profile

    out = []
    for vid in profile.variants:
        v = get_profile(vid)
        if v is not None:
            out.append(v)
    return out


def _upper(variant: GpuProfile) -> int | None:
    """Usable memory of a model, or a bound above it: the marketed capacity, which is in
    GiB for HBM parts (A100 80GB: 80 GiB of which 79.1 usable; H100 NVL 94GB: 93.6 GiB by
    nvidia-smi), and the usable memory is always less than the capacity."""
    if variant.memory_bytes is not None:
        return int(variant.memory_bytes)
    if variant.nominal_memory_gb:
        return int(variant.nominal_memory_gb * 2**30)
    return None


def worst_stage(est: MemoryEstimate) -> StageEstimate:
    return max(est.stages, key=lambda s: s.peak_bytes)


def top_terms(stage: StageEstimate, overhead: Mapping[str, int], n: int = 3) -> list[TermJson]:
    items = list(stage.peak_terms.items()) + list(overhead.items())
    items.sort(key=lambda kv: -kv[1])
    return [{"name": TERM_LABELS.get(k, k), "term": k, "bytes": int(v)} for k, v in items[:n] if v > 0]


def context_view(
    est: MemoryEstimate,
    args: Mapping[str, Any],
    profile: GpuProfile | None = None,
    not_counted: Mapping[str, str] | None = None,
    gpus_per_node: int | None = None,
    with_suggestions: bool = True,
) -> MemoryView:
    w = worst_stage(est)
    pt = w.peak_terms
    view: _MemoryViewBase = {
        **est.to_json(),
        "args": dict(args),
        "lower_bound": bool(not_counted),
        "not_counted": dict(not_counted or {}),
        "worst": {
            "stage": w.stage,
            "pp_rank": w.pp_rank,
            "peak_bytes": w.peak_bytes,
            "device_bytes": w.peak_bytes + est.overhead_bytes,
            "peak_event": w.peak_event,
            "model_state_bytes": sum(pt.get(k, 0) for k in MODEL_STATE_TERMS),
            "activation_bytes": sum(pt.get(k, 0) for k in ACTIVATION_TERMS),
            "top_terms": top_terms(w, est.overhead_terms),
        },
        "warn_fraction": WARN_FRACTION,
    }
    # A view without the GPU's keys, which are added below when its memory is known.
    data = cast(MemoryView, view)
    usable, upper = usable_memory(profile)
    if profile is None or usable is None:  # usable_memory knows no memory without a profile
        return data
    device = est.device_bytes
    assert device is not None  # a view is made of complete estimates only
    data["usable_bytes"] = usable
    data["usable_is_largest_variant"] = upper
    usable_least = usable_min(profile) if upper else None
    if usable_least is not None:
        data["usable_min_bytes"] = usable_least
    data["gpu_name"] = profile.name
    data["headroom_bytes"] = usable - device
    data["used_fraction"] = device / usable
    if with_suggestions and device > WARN_FRACTION * usable:
        data["suggestions"] = [
            s.to_json() for s in suggestions(args, est.world_size, int(WARN_FRACTION * usable), gpus_per_node)
        ]
    return data


def suggestions(args: Mapping[str, Any], world: int, budget: int, gpus_per_node: int | None) -> list[Suggestion]:
    """Single changes and the cheapest fitting combination, fitting ones first.

    `budget` is what a suggestion must stay under to count as fitting: the warning
    threshold, so that a suggestion never lands in the warning band itself.
    """
    singles = suggest(args, world, budget)
    best = plan(args, world, budget, gpus_per_node)
    out = [s for s in singles if s.fits]
    if best is not None and not any(s.changes == best.changes for s in out):
        out.append(best)
    out.sort(key=lambda s: (s.cost_rank, len(s.changes), s.device_bytes))
    out += sorted((s for s in singles if not s.fits), key=lambda s: s.device_bytes)
    return out[:MAX_SUGGESTIONS]
