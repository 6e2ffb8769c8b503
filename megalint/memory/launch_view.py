"""The memory estimate of one launch: its bound arguments → the estimator's input → the rule
context's `memory` view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from megalint.hardware.profiles import GpuProfile
from megalint.megatron.bound import BoundArgs
from megalint.megatron.derived import Derived
from megalint.megatron.plain import plain

from .arg_values import InvalidConfig
from .defaults import DEFAULTS
from .estimator import estimate
from .report import MemoryView, context_view

# Arguments the estimator reads that have no entry in its defaults table.
_MEMORY_EXTRA = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "seq_length",
    "micro_batch_size",
    "global_batch_size",
    "max_position_embeddings",
    "recompute_activations",
    "num_layers_in_first_pipeline_stage",
    "num_layers_in_last_pipeline_stage",
    "virtual_pipeline_model_parallel_size",
    "cuda_graph_impl",
    "enable_cuda_graph",
    "external_cuda_graph",
    "fine_grained_activation_offloading",
    "cpu_offloading",
)


def launch_memory(
    bound: BoundArgs,
    world: int | None,
    derived: Mapping[str, Derived] | None = None,
    profile: GpuProfile | None = None,
    gpus_per_node: int | None = None,
) -> tuple[MemoryView | None, str | None]:
    """The memory estimate as the rule context holds it, or (None, why not).

    The vocabulary is the one input that often stays unknown (it comes from the tokenizer's
    files): the estimate is then made without embedding and output layer and marked as a
    lower bound, which still proves an OOM when the rest alone does not fit.
    """
    if world is None:
        return None, "the world size is not known"
    args: dict[str, Any] = {}
    for dest in (*DEFAULTS, *_MEMORY_EXTRA):
        arg = bound.get(dest)
        if arg is None:
            continue
        unknown = arg.unknown
        if unknown is not None:
            return None, f"--{dest.replace('_', '-')}: {unknown.reason}"
        args[dest] = plain(arg.value)
    not_counted: dict[str, str] = {}
    pv = (derived or {}).get("padded_vocab_size")
    if pv is not None and pv.known and pv.value is not None:
        args["padded_vocab_size"] = int(pv.value)
    else:
        reason = pv.value.reason if pv is not None and not pv.known else "the padded vocabulary size is not known"
        args["padded_vocab_size"] = 0
        not_counted["embedding_and_output_layer"] = reason
    try:
        est = estimate(args, world)
    except InvalidConfig as exc:
        return None, f"the layout is invalid: {exc}"
    except (ValueError, TypeError, ArithmeticError, KeyError) as exc:
        return None, f"the estimate could not be made: {exc}"
    if not est.complete:
        return None, "the estimate needs " + ", ".join(est.missing)
    return context_view(est, args, profile, not_counted, gpus_per_node), None
