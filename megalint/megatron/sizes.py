"""Sizes Megatron-LM divides by or counts with: the least value each may take, and how Megatron
fails on a smaller one.

A size below its least value is a typo (`--tensor-model-parallel-size 0`), and Megatron stops on
it before training: a division by zero in `validate_args`, or a negative process-group size when
it builds the groups. Binding reports it and keeps the value unknown, so that no derivation or
memory estimate runs on it. An int beyond 64 bits is refused the same way: torch cannot hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

_ARGS = "megatron/training/arguments.py"


@dataclass(frozen=True)
class SizeLimit:
    """The least value Megatron accepts for a size argument, and why."""

    least: int
    why: str  # what Megatron does with a smaller value, with the line it does it at (HEAD)
    divisor: bool = False  # Megatron divides by it: 0 raises ZeroDivisionError


def _divides(where: str) -> SizeLimit:
    return SizeLimit(1, f"Megatron divides by it ({where})", divisor=True)


_PARALLEL = _divides(f"world size % (TP×PP×CP), {_ARGS}:432")
_EXPERT = _divides("world size % (ETP×EP×PP), megatron/core/parallel_state.py:881")
_COUNT = SizeLimit(0, "Megatron builds this many of them; a negative count is no model")

LIMITS: dict[str, SizeLimit] = {
    "tensor_model_parallel_size": _PARALLEL,
    "pipeline_model_parallel_size": _PARALLEL,
    "context_parallel_size": _PARALLEL,
    "expert_model_parallel_size": _EXPERT,
    "expert_tensor_parallel_size": _EXPERT,
    "num_layers_per_virtual_pipeline_stage": _divides(f"layers per stage % it, {_ARGS}:972"),
    "num_virtual_stages_per_pipeline_rank": _divides(f"layers per stage // it, {_ARGS}:953-983"),
    "make_vocab_size_divisible_by": _divides(
        "vocab size / (it × TP), megatron/core/tokenizers/utils/build_tokenizer.py:138"
    ),
    "num_attention_heads": _divides(f"hidden size % heads, {_ARGS}:1332"),
    "num_query_groups": _divides("heads % query groups, megatron/core/transformer/transformer_config.py:1461"),
    # --micro-batch-size and --decoder-first/last-pipeline-num-layers below 1 have rules of
    # their own (micro-batch-size-required, uneven-pipeline-split).
    "global_batch_size": _divides("global batch // (micro batch × DP), num_microbatches_calculator.py:381"),
    "num_distributed_optimizer_instances": _divides("DP × CP % it, megatron/core/parallel_state.py:922"),
    "num_layers": _COUNT,
    "encoder_num_layers": _COUNT,
    "decoder_num_layers": _COUNT,
    "mtp_num_layers": _COUNT,
    "num_experts": _COUNT,
    "hidden_size": _COUNT,
    "ffn_hidden_size": _COUNT,
    "kv_channels": _COUNT,
    "seq_length": _COUNT,
    "max_position_embeddings": _COUNT,
    "vocab_size": _COUNT,
    "padded_vocab_size": _COUNT,
}

# The model's shape written as -1 is a placeholder, not a typo: a program that takes the shape
# from the checkpoint it loads still has to get past argparse's required flags (Megatron-DeepSpeed's
# eval harness scripts pass `--num-layers -1 --hidden-size -1 …` and override them before
# validate_args, which passes -1 anyway). The value is unknown, and no finding is made.
PLACEHOLDER = -1
SHAPE_DESTS = frozenset(
    {
        "num_layers",
        "encoder_num_layers",
        "decoder_num_layers",
        "hidden_size",
        "ffn_hidden_size",
        "num_attention_heads",
        "kv_channels",
        "seq_length",
        "max_position_embeddings",
    }
)


def placeholder(dest: str, value: object) -> str | None:
    """Why a value is taken as a placeholder for a size given elsewhere (None: it is not one)."""
    if dest in SHAPE_DESTS and value == PLACEHOLDER and not isinstance(value, bool):
        return f"{value} is a placeholder: the program takes the model's shape from elsewhere (a checkpoint)"
    return None


# torch holds sizes in int64; Python's int has no bound, so a longer one is refused here.
INT64_MAX = 2**63 - 1


def size_problem(dest: str, option: str, value: object) -> str | None:
    """Why a converted value cannot be the size `dest` names (None: it can)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if abs(value) > INT64_MAX:
        digits = len(str(abs(value)))
        return f"argument {option}: a {digits}-digit value does not fit the 64-bit integers torch holds it in"
    limit = LIMITS.get(dest)
    if limit is None or value >= limit.least:
        return None
    bound = "a positive integer" if limit.least == 1 else f"at least {limit.least}"
    outcome = ""
    if limit.divisor:
        outcome = ": ZeroDivisionError" if value == 0 else ": a negative size it cannot build"
    return f"argument {option}: {value} is not {bound}; {limit.why}{outcome}"
