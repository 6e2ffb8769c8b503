"""Megatron-LM's own entry points, and binding a launch's arguments as its entry point would.

An entry point's parser is Megatron-LM's `add_megatron_arguments` for the stock scripts only;
any other script adds flags through `extra_args_provider` and may vendor any Megatron, so the
problems that depend on the parser are not Megatron-LM's to report there.
"""

from __future__ import annotations

from collections.abc import Sequence

from megalint.megatron.bind import bind
from megalint.megatron.bound import BoundArgs, Problem, ProblemKind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.supplied import supplied_args
from megalint.shell.values import Word

# Megatron-LM's own entry points whose parser is `add_megatron_arguments` alone, and the flags
# each may add. pretrain_gpt.py/pretrain_hybrid.py add the ModelOpt flags only when
# nvidia-modelopt is importable (pretrain_gpt.py:526@d98e8a64, pretrain_hybrid.py:543@d98e8a64),
# which cannot be told from the script: those flags are neither known nor unknown.
_MODELOPT_FLAGS = frozenset(
    {
        "--enable-gpt-oss",
        "--export-default-te-spec",
        "--export-force-local-attention",
        "--export-kd-cfg",
        "--export-kd-teacher-ckpt-format",
        "--export-kd-teacher-load",
        "--export-kd-teacher-model-config",
        "--export-kv-cache-quant",
        "--export-legacy-megatron",
        "--export-model-type",
        "--export-moe-apply-probs-on-input",
        "--export-offline-model",
        "--export-qk-l2-norm",
        "--export-quant-cfg",
        "--export-real-quant-cfg",
        "--export-te-mcore-model",
        "--finetune-data-files",
        "--finetune-data-split",
        "--finetune-hf-dataset",
        "--freeze-base-for-mtp",
        "--modelopt-enabled",
        "--qad-train-target",
    }
)  # megatron/post_training/arguments.py@d98e8a64
STOCK_ENTRY_POINTS = {
    "pretrain_gpt.py": _MODELOPT_FLAGS,
    "pretrain_hybrid.py": _MODELOPT_FLAGS,
    "pretrain_mamba.py": frozenset(),
    "pretrain_bert.py": frozenset(),
    "pretrain_t5.py": frozenset(),
    "pretrain_retro.py": frozenset(),
    "pretrain_ict.py": frozenset(),
    "pretrain_vision_classify.py": frozenset(),
    "pretrain_vision_dino.py": frozenset(),
    "pretrain_vision_inpaint.py": frozenset(),
}
# What an entry point's own parser may accept beyond Megatron-LM's: a flag it adds, a word
# that is the value of such a flag, a positional of its own, or another version's choices.
ENTRY_DEPENDENT = frozenset(
    {ProblemKind.UNKNOWN_FLAG, ProblemKind.OTHER_VERSION, ProblemKind.POSITIONAL, ProblemKind.INVALID_CHOICE}
)


def stock_entry(entry: str | None) -> frozenset[str] | None:
    """The flags a stock Megatron-LM entry point may add, or None when the entry point is not
    one (a script of `examples/`, a fork's or a toolkit's own `pretrain_*.py`, an unknown
    path): such a script adds flags through `extra_args_provider` and may vendor any Megatron."""
    if entry is None:
        return None
    parts = entry.replace("\\", "/").split("/")
    if any(p in ("examples", "toolkits", "tasks", "tools") for p in parts[:-1]):
        return None
    return STOCK_ENTRY_POINTS.get(parts[-1])


def entry_problems(entry: str | None, problems: list[Problem]) -> list[Problem]:
    extra = stock_entry(entry)
    if extra is None:
        return [p for p in problems if p.kind not in ENTRY_DEPENDENT]
    return [
        p
        for p in problems
        if not (p.kind in (ProblemKind.UNKNOWN_FLAG, ProblemKind.OTHER_VERSION) and p.option in extra)
    ]


def bind_entry_point(argv: Sequence[Word], entry: str | None, catalogue: Catalogue, version: str) -> BoundArgs:
    """`argv` bound as the entry point `entry` (its path as written, None when not known) would
    parse it: the problems its own parser may not have left out, the values it takes from
    elsewhere (a checkpoint, a converter's placeholder shape) unknown."""
    bound = bind(argv, catalogue)
    bound.problems = entry_problems(entry, bound.problems)
    return supplied_args(bound, version, stock_entry(entry) is not None, entry)
