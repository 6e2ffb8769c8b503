"""What an estimate holds: per pipeline stage the bytes of each term and the moment of the peak,
and outside the allocator the overhead every GPU carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


class StageEstimateJson(TypedDict):
    stage: str
    pp_rank: int
    num_layers: int
    params: int
    expert_params: int
    terms: dict[str, int]
    peak_bytes: int
    peak_event: str
    peak_terms: dict[str, int]


class MemoryEstimateJson(TypedDict):
    complete: bool
    missing: list[str]
    world_size: int
    layout: dict[str, int]
    peak_bytes: int | None
    overhead_bytes: int
    overhead_terms: dict[str, int]
    device_bytes: int | None
    stages: list[StageEstimateJson]
    assumptions: list[str]


@dataclass(frozen=True)
class StageEstimate:
    """The memory of one pipeline stage's GPU, part by part."""

    stage: str  # "first", "middle" or "last" ("only" when PP = 1)
    pp_rank: int
    num_layers: int
    params: int  # parameters held by this GPU (dense + local experts)
    expert_params: int
    terms: dict[str, int]  # bytes
    peak_bytes: int  # predicted torch.cuda.max_memory_allocated()
    peak_event: str

    @property
    def peak_terms(self) -> dict[str, int]:
        """The terms alive together at the peak event; they add up to peak_bytes."""
        keep = STATIC_TERMS + EVENT_TERMS.get(self.peak_event, ())
        return {k: v for k, v in self.terms.items() if k in keep}

    def to_json(self) -> StageEstimateJson:
        return {
            "stage": self.stage,
            "pp_rank": self.pp_rank,
            "num_layers": self.num_layers,
            "params": self.params,
            "expert_params": self.expert_params,
            "terms": dict(self.terms),
            "peak_bytes": self.peak_bytes,
            "peak_event": self.peak_event,
            "peak_terms": self.peak_terms,
        }


# Which terms each moment of a step holds besides the static ones (see `estimate`).
STATIC_TERMS = ("params", "grads", "optimizer_state", "workspace", "attention_buffers", "cuda_graph_buffers")
EVENT_TERMS = {
    "loss": ("activations", "embedding_and_final_norm_activations", "deferred_embedding_wgrad", "logits_and_loss"),
    "backward": (
        "activations",
        "embedding_and_final_norm_activations",
        "deferred_embedding_wgrad",
        "backward_transient",
    ),
    "optimizer_step": ("optimizer_step_transient",),
}


@dataclass(frozen=True)
class MemoryEstimate:
    """The memory of a launch's GPUs: each pipeline stage, and what lies outside PyTorch."""

    stages: tuple[StageEstimate, ...]
    overhead_bytes: int  # outside PyTorch's allocator: context, NCCL, fragmentation
    overhead_terms: dict[str, int]
    world_size: int
    layout: dict[str, int]
    assumptions: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # required arguments that were not known

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def peak_bytes(self) -> int | None:
        """Largest predicted max_memory_allocated over the pipeline stages."""
        return max((s.peak_bytes for s in self.stages), default=None) if self.complete else None

    @property
    def device_bytes(self) -> int | None:
        """peak_bytes plus overhead: what the GPU must hold."""
        p = self.peak_bytes
        return None if p is None else p + self.overhead_bytes

    def stage(self, name: str) -> StageEstimate | None:
        for s in self.stages:
            if s.stage == name or (s.stage == "only" and name in ("first", "last")):
                return s
        return None

    def fits(self, usable_bytes: int) -> bool | None:
        d = self.device_bytes
        return None if d is None else d <= usable_bytes

    def to_json(self) -> MemoryEstimateJson:
        return {
            "complete": self.complete,
            "missing": list(self.missing),
            "world_size": self.world_size,
            "layout": dict(self.layout),
            "peak_bytes": self.peak_bytes,
            "overhead_bytes": self.overhead_bytes,
            "overhead_terms": dict(self.overhead_terms),
            "device_bytes": self.device_bytes,
            "stages": [s.to_json() for s in self.stages],
            "assumptions": list(self.assumptions),
        }
