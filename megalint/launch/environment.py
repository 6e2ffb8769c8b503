"""Whether the environment a launch gets can be listed in full, from what the evaluator saw."""

from __future__ import annotations

import re

from megalint import lazy_re
from megalint.shell.facts import CommandRecord, ScriptFacts, UnreadReason

# Commands that load an environment: (command, subcommand), None for any subcommand.
_ENV_LOADERS = {
    ("module", "load"),
    ("module", "add"),
    ("module", "restore"),
    ("module", "swap"),
    ("ml", None),
    ("spack", "load"),
    ("conda", "activate"),
}


# A module named after the communication stack (`module load nccl/2.21-ib`, `aws-ofi-nccl`,
# `hpcx`) is loaded for the variables it sets: it stays opaque.
_SETS_NCCL = lazy_re.compile(r"nccl|ofi|efa|libfabric|hpcx|ucx|rccl|hccl|megatron", re.IGNORECASE)


def _loaders(facts: ScriptFacts) -> list[tuple[CommandRecord, list[str]]]:
    out = []
    for path in facts.paths:
        for rec in path.commands:
            t = [w.text for w in rec.words[:2]]
            if t and ((t[0], t[1] if len(t) > 1 else None) in _ENV_LOADERS or (t[0], None) in _ENV_LOADERS):
                out.append((rec, [w.text or "…" for w in rec.words]))
    return out


def environment_opaque(facts: ScriptFacts) -> str | None:
    """Why the environment a launch gets cannot be listed in full, or None when it can.

    A sourced file that was not read, or an environment module of the communication stack, may
    export anything: a rule that asks whether a variable is *absent* cannot be decided then."""
    for unread in facts.unread_sources:
        # A file already being sourced is read where it is sourced; one nested past the limit
        # was read up to the limit.
        if unread.reason not in (UnreadReason.CYCLE, UnreadReason.TOO_DEEP):
            return unread.note
    for rec, words in _loaders(facts):
        if any(_SETS_NCCL.search(w) for w in words[1:]) or "…" in words:
            return f"`{' '.join(words[:3])}` at {rec.span.path}:{rec.span.start_line} may export variables that are not known"
    return None


def environment_assumption(facts: ScriptFacts) -> str | None:
    """The assumption that lets the environment be listed in spite of the modules a script loads:
    each (`module load cuda/12.4`, `conda activate`) sets no Megatron, NCCL or CUDA tuning variable."""
    loaders = _loaders(facts)
    if not loaders:
        return None
    rec, words = loaders[0]
    more = f" (and {len(loaders) - 1} more)" if len(loaders) > 1 else ""
    return (
        f"assuming `{' '.join(words[:2])}` at {rec.span.path}:{rec.span.start_line}{more} sets no NCCL/CUDA "
        "tuning variables"
    )
