"""The memory estimate as rules and the `megalint memory` command see it.

`context_view` turns a MemoryEstimate into the plain dict of the rule context's `memory`
root: the estimate itself, the usable memory of the GPU, the worst stage with its largest
terms, the headroom, and, when the job does not fit comfortably, re-estimated suggestions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .breakdown import MemoryEstimate, StageEstimate
from .calibration import WARN_FRACTION
from .suggest import Suggestion, plan, suggest

if TYPE_CHECKING:
    from megalint.hardware.profiles import GpuProfile

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


def usable_memory(profile: Any) -> tuple[int | None, bool]:
    """(bytes the allocator can use, whether that is only the largest of a family's models).

    A family named without its memory size (`a100`) holds models of different sizes: a job
    that does not fit the largest one fits none of them.
    """
    if profile is None:
        return None, False
    if profile.memory_bytes is not None:
        return int(profile.memory_bytes), False
    rng = getattr(profile, "memory_range", None)
    if rng:
        return int(rng[1]), True
    bounds = [_upper(v) for v in _variants(profile)]
    known = [b for b in bounds if b is not None]
    if known and len(known) == len(bounds):
        return max(known), True
    return None, False


def usable_min(profile: Any) -> int | None:
    rng = getattr(profile, "memory_range", None)
    if rng:
        return int(rng[0])
    sizes = [v.memory_bytes for v in _variants(profile)]
    known = [k for k in sizes if k is not None]
    return min(known) if known and len(known) == len(sizes) else None


def _variants(profile: Any) -> list[GpuProfile]:
    from megalint.hardware.profiles import get_profile

    out = []
    for vid in getattr(profile, "variants", ()) or ():
        v = get_profile(vid)
        if v is not None:
            out.append(v)
    return out


def _upper(variant: Any) -> int | None:
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


def top_terms(stage: StageEstimate, overhead: Mapping[str, int], n: int = 3) -> list[dict[str, Any]]:
    items = list(stage.peak_terms.items()) + list(overhead.items())
    items.sort(key=lambda kv: -kv[1])
    return [{"name": TERM_LABELS.get(k, k), "term": k, "bytes": int(v)} for k, v in items[:n] if v > 0]


def context_view(
    est: MemoryEstimate,
    args: Mapping[str, Any],
    profile: Any = None,
    not_counted: Mapping[str, str] | None = None,
    gpus_per_node: int | None = None,
    with_suggestions: bool = True,
) -> dict[str, Any]:
    data = est.to_json()
    data["args"] = dict(args)
    data["lower_bound"] = bool(not_counted)
    data["not_counted"] = dict(not_counted or {})
    w = worst_stage(est)
    pt = w.peak_terms
    data["worst"] = {
        "stage": w.stage,
        "pp_rank": w.pp_rank,
        "peak_bytes": w.peak_bytes,
        "device_bytes": w.peak_bytes + est.overhead_bytes,
        "peak_event": w.peak_event,
        "model_state_bytes": sum(pt.get(k, 0) for k in MODEL_STATE_TERMS),
        "activation_bytes": sum(pt.get(k, 0) for k in ACTIVATION_TERMS),
        "top_terms": top_terms(w, est.overhead_terms),
    }
    data["warn_fraction"] = WARN_FRACTION
    usable, upper = usable_memory(profile)
    if usable is None:
        return data
    device = est.device_bytes
    assert device is not None  # a view is made of complete estimates only
    data["usable_bytes"] = usable
    data["usable_is_largest_variant"] = upper
    if upper and usable_min(profile) is not None:
        data["usable_min_bytes"] = usable_min(profile)
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
