"""Telling a launch of a Megatron fork from a launch of Megatron-LM."""

from __future__ import annotations

from collections.abc import Sequence

from megalint.shell.values import Word


def megatron_fork(argv: Sequence[Word]) -> str | None:
    """Why a launch with these entry point arguments runs a Megatron fork rather than
    Megatron-LM, or None.

    `--deepspeed` belongs to Megatron-DeepSpeed (microsoft, bigscience, argonne-lcf): its flags
    and checks differ (the DeepSpeed pipeline engine partitions layers itself), so Megatron-LM's
    argument rules would be false alarms there."""
    for w in argv:
        if w.text in ("--deepspeed", "--deepspeed_config", "--deepspeed-config") or (w.text or "").startswith(
            "--deepspeed_config="
        ):
            return (
                "this launch passes --deepspeed: it runs Megatron-DeepSpeed, whose arguments and "
                "checks differ from Megatron-LM's"
            )
    return None
