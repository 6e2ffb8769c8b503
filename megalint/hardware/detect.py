"""Which GPU a script runs on: the hints its facts carry, and the choice between the GPU the
user names and the one the hints name.

The hints are read here from what the shell front end found (scheduler headers, the file name,
comments); how they are ranked against each other is `detect_gpu`'s, in profiles.py.
"""

from __future__ import annotations

import os
import re

from megalint.hardware.profiles import Detection, GpuHint, GpuProfile, detect_gpu, find_gpu
from megalint.launch.model import SchedulerHeader
from megalint.shell.facts import ScriptFacts
from megalint.source import Span

_GPU_COUNT_KEYS = ("--gpus", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket")
_SCHEDULER_HINTS = frozenset({"sbatch-constraint", "sbatch-gres", "pbs"})


def _all_headers(facts: ScriptFacts) -> list[SchedulerHeader]:
    """The script's own headers and those of the `sbatch <<EOF` scripts it submits."""
    out: list[SchedulerHeader] = []
    seen: set[tuple[str, str, Span]] = set()
    for h in list(facts.headers) + [h for p in facts.paths for rec in p.commands for h in rec.headers]:
        key = (h.key, h.value, h.span)
        if key not in seen:
            seen.add(key)
            out.append(h)
    return out


def _gpu_type_hint(value: str, span: Span) -> GpuHint | None:
    """`--gpus-per-node=h100:8` is `[type:]count`, unlike `--gres=gpu[:type]:count`: the type
    is the first field. It is as strong a hint as a constraint, and scanned as one."""
    m = re.fullmatch(r"([^:,]+):(\d+)", value)
    if m is None:
        return None
    sub = span
    if span.start_line == span.end_line and span.end - span.start == len(value):
        sub = Span(
            span.path,
            span.start_line,
            span.start_col,
            span.end_line,
            span.start_col + len(m.group(1)),
            span.start,
            span.start + len(m.group(1)),
        )
    return GpuHint("sbatch-constraint", m.group(1), sub)


def gpu_hints(facts: ScriptFacts) -> list[GpuHint]:
    hints: list[GpuHint] = []
    kinds = {"--constraint": "sbatch-constraint", "--gres": "sbatch-gres", "--partition": "sbatch-partition"}
    for h in _all_headers(facts):
        if h.scheduler == "slurm" and h.key in kinds:
            hints.append(GpuHint(kinds[h.key], h.value, h.span))
        elif h.scheduler == "slurm" and h.key in _GPU_COUNT_KEYS:
            hint = _gpu_type_hint(h.value, h.span)
            if hint is not None:
                hints.append(hint)
        elif h.scheduler == "pbs":
            hints.append(GpuHint("pbs", h.value, h.span))
    src = facts.sources.get(facts.path)
    if src is not None:
        name = os.path.basename(facts.path)
        hints.append(GpuHint("path", name, None))
    for text, span in facts.comments:
        if text.startswith("#!") or text.startswith("#SBATCH") or text.startswith("#PBS"):
            continue
        hints.append(GpuHint("comment", text, span))
    return hints


def choose_gpu(facts: ScriptFacts, configured: str | None) -> tuple[GpuProfile | None, Detection | None, str | None]:
    """The GPU: named by the user, else detected from the script's hints, else unknown."""
    if configured:
        profile = find_gpu(configured)
        if profile is None:
            raise ValueError(f"unknown GPU `{configured}`")
        return profile, None, None
    det = detect_gpu(gpu_hints(facts))
    if det is None:
        return (
            None,
            None,
            (
                "no GPU model is named in the script (#SBATCH --constraint/--gres, its name, "
                "a comment), or its hints disagree; give one with --gpu NAME or `gpu` in the configuration"
            ),
        )
    if det.ignored and det.hint.kind not in _SCHEDULER_HINTS:
        # A comment or a file name decided, and another weak hint names another GPU: the script
        # contradicts itself, and hardware rules must not pick a side. A scheduler line is not
        # a hint of the same kind: the job gets the GPU it requests, whatever a comment says.
        others = ", ".join(sorted({pid for _, pid in det.ignored}))
        return (
            None,
            None,
            (
                f"the script names {det.profile.id} ({det.reason.removeprefix('taken from ')}) "
                f"but also {others}; give the GPU with --gpu NAME or `gpu` in the configuration"
            ),
        )
    return det.profile, det, None
