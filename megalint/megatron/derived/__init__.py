"""Values Megatron-LM computes from its arguments before training, per version.

Each rule is Megatron's own, with the line it comes from as `file:line@version` (version = the
git tag, HEAD = main@d98e8a64). A value is known, or Unknown with the reason: an input that is
unknown, or a check Megatron would fail (then `error` says which, and the value is Unknown,
because Megatron never gets to compute it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from megalint.megatron.bound import BoundArgs
from megalint.megatron.derived import batches, experts, model_shape, parallel, pipeline_parallel, precision, vocab
from megalint.megatron.derived.deriver import Derived, Deriver
from megalint.shell.values import Unknown

__all__ = ["Derived", "derive", "derived_values"]

# In Megatron's order: each rule reads only the values derived before it.
_RULES: tuple[Callable[[Deriver], None], ...] = (
    parallel.parallel_sizes,
    parallel.data_parallel,
    pipeline_parallel.pipeline_layout,
    pipeline_parallel.virtual_pipeline,
    model_shape.model_shape,
    experts.experts,
    batches.batches,
    vocab.vocab,
    precision.precision,
)


def derive(bound: BoundArgs, world_size: int | Unknown | None, version: str | None = None) -> dict[str, Derived]:
    """Megatron's derived values for a binding; `version` defaults to the binding's own."""
    d = Deriver(bound, world_size, version or bound.version)
    for rule in _RULES:
        rule(d)
    return d.out


def derived_values(derived: dict[str, Derived]) -> dict[str, Any]:
    """name -> value (Unknown kept), for rule contexts."""
    return {k: d.value for k, d in derived.items()}
