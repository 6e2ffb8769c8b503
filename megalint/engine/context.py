"""The vocabulary of the rule context, and lookups in it.

A context is a plain nested dict built per launch and per path through the script. A value
megalint could not determine is absent from it; `unknown` maps a dotted path (or a prefix of
it) to the reason, so that `megalint explain` can say why a rule was left undecided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Root name -> the fields a rule may read under it, or None when the keys are open (Megatron
# dests, environment variable names ...). A misspelt field under a closed root is a load error
# rather than a rule that is silently never decided.
ROOTS: dict[str, frozenset[str] | None] = {
    "args": None,  # dest -> value, Megatron defaults applied
    "given": None,  # dest -> bool: written in the script (not a default)
    "derived": None,  # data_parallel_size, num_microbatches, ffn_hidden_size ...
    "env": None,  # name -> string, only values known statically
    "env_set": None,  # list of names set, known value or not
    "launch": frozenset(
        {
            "launcher",
            "nnodes",
            "nproc_per_node",
            "world_size",
            "entry",
            "multi_node",
        }
    ),
    "gpu": frozenset(
        {
            "name",
            "compute_capability",
            "memory_bytes",
            "bf16",
            "fp8",
            "fp4",
            "arch",
        }
    ),
    "megatron": None,  # the version string, e.g. "0.15" or "HEAD"
    "memory": None,  # the estimate, fields owned by the estimator
    "problems": None,  # list of dicts from binding: {kind, flag, index, suggestions ...}
    "shell": None,  # list of shell-level findings dicts
    "unknown": None,  # dotted path -> reason
}

# Roots keyed by Megatron dests: a rule may read only dests some shipped catalogue defines.
DEST_ROOTS = frozenset({"args", "given"})

# Roots whose value is a mapping; when absent from a context they read as an empty mapping, so
# that `has(gpu.name)` is false rather than an error. Other roots stay undefined when absent.
MAPPING_ROOTS = frozenset({"args", "given", "derived", "env", "launch", "gpu", "memory", "unknown"})

_MISSING = object()


def lookup(ctx: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path, or `MISSING` when any step is absent."""
    node: Any = ctx
    for part in path.split("."):
        # dict first: the ABC check of Mapping costs more than the rest of a rule's decision.
        if (type(node) is dict or isinstance(node, Mapping)) and part in node:
            node = node[part]
        else:
            return _MISSING
    return node


MISSING = _MISSING


def has_path(ctx: Mapping[str, Any], path: str) -> bool:
    return lookup(ctx, path) is not _MISSING


def unknown_reason(ctx: Mapping[str, Any], path: str) -> str | None:
    """Why `path` is unknown: the reason recorded for it or for its nearest recorded prefix."""
    reasons = ctx.get("unknown")
    if not isinstance(reasons, Mapping):
        return None
    while True:
        reason = reasons.get(path)
        if reason is not None:
            return str(reason)
        cut = path.rfind(".")
        if cut < 0:
            return None
        path = path[:cut]
