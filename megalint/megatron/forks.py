"""Telling a launch of a Megatron fork from a launch of Megatron-LM."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from megalint.shell.values import Word

MEGATRON_DEEPSPEED = "megatron-deepspeed"


@dataclass(frozen=True)
class Fork:
    """A Megatron fork a launch runs: its name, as rules name it in `forks:`, and why it was
    told from Megatron-LM."""

    name: str
    reason: str


def megatron_fork(argv: Sequence[Word]) -> Fork | None:
    """The Megatron fork a launch with these entry point arguments runs, or None for Megatron-LM.

    `--deepspeed` belongs to Megatron-DeepSpeed (microsoft, bigscience, argonne-lcf): its flags
    and checks differ (the DeepSpeed pipeline engine partitions layers itself), so Megatron-LM's
    argument rules would be false alarms there."""
    for w in argv:
        if w.text in ("--deepspeed", "--deepspeed_config", "--deepspeed-config") or (w.text or "").startswith(
            "--deepspeed_config="
        ):
            return Fork(
                MEGATRON_DEEPSPEED,
                "this launch passes --deepspeed: it runs Megatron-DeepSpeed, whose arguments and "
                "checks differ from Megatron-LM's",
            )
    return None
