"""Arguments a job takes from somewhere other than its command line.

Two cases are read from the launch alone:

* `--use-checkpoint-args` with `--load` (or `--pretrained-checkpoint`): before validate_args,
  `load_args_from_checkpoint` copies the model's shape and other settings from the arguments
  saved in the checkpoint (megatron/training/arguments.py:91-101@d98e8a64,
  megatron/training/checkpointing.py:2256-2368@d98e8a64). Whether the checkpoint holds them is
  not known before the job reads it, so each argument it may set is unknown: those it sets with
  `force=True` whatever the command line says, the others only when the command line left them
  None.
* A launch of a script other than Megatron-LM's own entry points with the model shape given as
  one layer, one hidden unit and one head: checkpoint converters (hf2mcore.py and the like)
  pass that placeholder to get through validate_args and then set the real shape from the
  checkpoint they convert before they build a model. A model of hidden size 1 is never trained.

What is unknown here makes the rules that need it undecided, never wrong.
"""

from __future__ import annotations

from dataclasses import replace

from megalint.megatron.bind import default_index
from megalint.megatron.bound import BoundArg, BoundArgs
from megalint.megatron.versions import version_key
from megalint.shell.values import Unknown

__all__ = ["FROM_CHECKPOINT", "PLACEHOLDER_SHAPE", "supplied_args"]

_MP = "use_mp_args_from_checkpoint_args"
_TOK = "use_tokenizer_model_from_checkpoint_args"

# (dest, force, first release that sets it or None for 0.8 and before, first release that no
# longer does or None, the flag that must be set for it). Read from load_args_from_checkpoint
# at each core_v0.X.0 tag from 0.8 to 0.19 and at d98e8a64 (megatron/training/checkpointing.py:
# 645-718@core_v0.8.0, 1060-1146@core_v0.12.0, 1234-1324@core_v0.15.0, 1894-1982@core_v0.19.0,
# 2272-2368@d98e8a64). `apply_layernorm_1p` is left out: --apply-layernorm-1p stores into
# layernorm_zero_centered_gamma, so what the checkpoint sets there is read by nothing.
FROM_CHECKPOINT: tuple[tuple[str, bool, str | None, str | None, str | None], ...] = (
    ("num_layers", False, None, None, None),
    ("hidden_size", False, None, None, None),
    ("ffn_hidden_size", False, None, None, None),
    ("seq_length", False, None, None, None),
    ("num_attention_heads", False, None, None, None),
    ("num_query_groups", True, None, None, None),
    ("group_query_attention", True, None, None, None),
    ("kv_channels", False, None, None, None),
    ("max_position_embeddings", False, None, None, None),
    ("position_embedding_type", True, None, None, None),
    ("add_position_embedding", True, None, None, None),
    ("use_rotary_position_embeddings", True, None, None, None),
    ("rotary_base", True, "0.10", None, None),
    ("rotary_percent", True, None, None, None),
    ("rotary_interleaved", True, None, None, None),
    ("add_bias_linear", True, None, None, None),
    ("add_qkv_bias", True, None, None, None),
    ("squared_relu", True, "0.10", None, None),
    ("swiglu", True, None, None, None),
    ("untie_embeddings_and_output_weights", True, None, None, None),
    ("normalization", True, None, None, None),
    ("apply_query_key_layer_scaling", True, None, None, None),
    ("attention_dropout", True, "0.10", None, None),
    ("hidden_dropout", True, "0.10", None, None),
    ("hybrid_override_pattern", True, "0.10", "0.17", None),
    ("hybrid_attention_ratio", True, "0.10", "0.17", None),
    ("hybrid_mlp_ratio", True, "0.10", "0.17", None),
    ("is_hybrid_model", True, "0.12", "0.17", None),
    ("hybrid_layer_pattern", False, "0.17", None, None),
    ("mtp_hybrid_override_pattern", True, "0.17", None, None),
    ("mtp_num_layers", True, "0.17", None, None),
    ("mtp_use_repeated_layer", True, "0.17", None, None),
    ("spec", True, "0.10", None, None),
    ("num_experts", True, "0.10", None, None),
    ("moe_layer_freq", True, "0.10", None, None),
    ("moe_ffn_hidden_size", True, "0.10", None, None),
    ("moe_router_topk", True, "0.10", None, None),
    ("moe_token_dispatcher_type", True, "0.10", "0.15", None),
    ("moe_token_dispatcher_type", False, "0.15", None, None),
    ("moe_router_pre_softmax", True, "0.10", None, None),
    ("moe_grouped_gemm", True, "0.10", None, None),
    ("moe_single_grouped_weight", True, "0.18", None, None),
    ("moe_single_grouped_bias", True, "0.18", None, None),
    ("moe_shared_expert_intermediate_size", True, "0.10", None, None),
    ("moe_router_score_function", True, "0.16", None, None),
    ("moe_router_enable_expert_bias", True, "0.16", None, None),
    ("moe_router_topk_scaling_factor", True, "0.16", None, None),
    ("moe_latent_size", True, "0.16", None, None),
    ("mamba_state_dim", True, "0.12", None, None),
    ("mamba_head_dim", True, "0.12", None, None),
    ("mamba_num_groups", True, "0.12", None, None),
    ("mamba_num_heads", True, "0.13", None, None),
    ("gdp_num_householder", True, "HEAD", None, None),
    ("heterogeneous_layers_config_path", True, "0.12", None, None),
    ("heterogeneous_layers_config_encoded_json", True, "0.12", None, None),
    ("tokenizer_type", False, None, "0.10", None),
    ("tokenizer_type", True, "0.10", "0.16", None),
    ("tokenizer_type", True, "0.16", None, _TOK),
    ("tokenizer_model", True, "0.10", None, _TOK),
    ("tiktoken_pattern", True, "0.10", None, None),
    ("padded_vocab_size", False, None, None, None),
    ("ckpt_format", False, "0.10", None, None),
    # The parallel layout: always before 0.10, then only with --use-mp-args-from-checkpoint-args.
    ("tensor_model_parallel_size", True, None, "0.10", None),
    ("pipeline_model_parallel_size", True, None, "0.10", None),
    ("num_layers_per_virtual_pipeline_stage", False, None, "0.10", None),
    ("tensor_model_parallel_size", True, "0.10", None, _MP),
    ("pipeline_model_parallel_size", True, "0.10", None, _MP),
    ("num_layers_per_virtual_pipeline_stage", False, "0.10", None, _MP),
    ("expert_model_parallel_size", True, "0.10", None, _MP),
)

# What the converters that take the placeholder set from the checkpoint before building.
PLACEHOLDER_SHAPE = (
    "num_layers",
    "hidden_size",
    "ffn_hidden_size",
    "num_attention_heads",
    "num_query_groups",
    "kv_channels",
)
_PLACEHOLDER_ONES = ("num_layers", "hidden_size", "num_attention_heads")
_PLACEHOLDER_ALSO = ("seq_length", "max_position_embeddings")  # when also given as 1


def _in_range(version: str, since: str | None, until: str | None) -> bool:
    key = version_key(version)
    return (since is None or key >= version_key(since)) and (until is None or key < version_key(until))


def _is_set(bound: BoundArgs, dest: str) -> bool | None:
    """Whether a switch or value is set: None when unknown."""
    arg = bound.get(dest)
    if arg is None:
        return False
    if isinstance(arg.value, Unknown):
        return None
    return bool(arg.value) if isinstance(arg.value, bool) else arg.value is not None


def _checkpoint_dir(bound: BoundArgs, version: str) -> str | None:
    """The flag naming the checkpoint whose arguments are read, or None."""
    names = ["load"] + (["pretrained_checkpoint"] if _in_range(version, "0.16", None) else [])
    for dest in names:
        if _is_set(bound, dest) is not False:
            return "--" + dest.replace("_", "-")
    return None


def _from_checkpoint(bound: BoundArgs, version: str) -> dict[str, str]:
    use = _is_set(bound, "use_checkpoint_args")
    if use is False:
        return {}
    source = _checkpoint_dir(bound, version)
    if source is None:
        return {}
    out: dict[str, str] = {}
    for dest, force, since, until, needs in FROM_CHECKPOINT:
        arg = bound.get(dest)
        if arg is None or dest in out or not _in_range(version, since, until):
            continue
        if needs is not None and _is_set(bound, needs) is False:
            continue
        if not force and arg.value is not None and not isinstance(arg.value, Unknown):
            continue  # kept: only an argument left None is filled from the checkpoint
        out[dest] = (
            f"--use-checkpoint-args: the job takes {dest} from the arguments saved in the "
            f"checkpoint at {source} when it has them"
        )
    return out


def _placeholder(bound: BoundArgs, entry: str | None) -> dict[str, str]:
    for dest in _PLACEHOLDER_ONES:
        arg = bound.get(dest)
        if arg is None or not arg.given or arg.value != 1:
            return {}
    who = entry or "the entry point"
    reason = (
        f"the launch gives the placeholder model shape (one layer, hidden size 1, one head): "
        f"{who} is not a Megatron-LM entry point and sets the real {{}} itself"
    )
    dests = list(PLACEHOLDER_SHAPE) + [d for d in _PLACEHOLDER_ALSO if bound.get(d) is not None and bound[d].value == 1]
    return {d: reason.format(d) for d in dests if bound.get(d) is not None}


def supplied_args(bound: BoundArgs, version: str, stock_entry: bool, entry: str | None = None) -> BoundArgs:
    """`bound` with the arguments the job takes from elsewhere made unknown (a new object when
    any is; `bound` itself is not changed)."""
    reasons = _from_checkpoint(bound, version)
    if not stock_entry:
        for dest, reason in _placeholder(bound, entry).items():
            reasons.setdefault(dest, reason)
    if not reasons:
        return bound
    args: dict[str, BoundArg] = dict(bound.args)
    for dest, reason in reasons.items():
        arg = args[dest]
        span = arg.span
        args[dest] = replace(arg, value=Unknown(reason, span))
    own = bound.own
    if own is not None:
        index = default_index(bound.catalogue)
        own = tuple(sorted({*own, *reasons}, key=index.__getitem__))
    return replace(bound, args=args, own=own)
