"""Which GPU a script runs on: the hints its facts carry, and the choice between the GPU the
user names and the one the hints name.

The hints are read here from what the shell front end found (scheduler headers, Slurm command
lines, the file name, comments); how they are weighed against each other is `weigh_hints`'s, in
profiles.py. The script's own hints win over `--gpu` and the configuration's `gpu`, which only
fill in a GPU the script does not name (or names only in passing, in a comment of its body).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from megalint.hardware.profiles import (
    PASSING,
    Detection,
    GpuHint,
    GpuProfile,
    find_gpu,
    is_model_of,
    weigh_hints,
)
from megalint.launch.model import SchedulerHeader
from megalint.shell.facts import ScriptFacts
from megalint.shell.values import Word
from megalint.source import Span

_GPU_COUNT_KEYS = ("--gpus", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket")
# Slurm commands whose own options request the hardware (`srun --gres=gpu:h100:8 …`).
_SLURM_COMMANDS = frozenset({"srun", "salloc", "sbatch"})
_COMMAND_KINDS = {"--gres": "command-gres", "--constraint": "command-constraint", "-C": "command-constraint"}


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


def _tail_span(span: Span, text: str, start: int) -> Span:
    """The span of `text[start:]` when `span` covers exactly `text` on one line, else `span`."""
    if span.start_line != span.end_line or span.end - span.start != len(text):
        return span
    return Span(
        span.path, span.start_line, span.start_col + start, span.end_line, span.end_col, span.start + start, span.end
    )


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


def _word_site(word: Word) -> tuple[str, Span] | None:
    """A word written as one literal, with where it is written."""
    text = word.text
    if text is None or len(word.segments) != 1 or word.segments[0].site is None:
        return None
    return text, word.segments[0].site


def _command_hints(facts: ScriptFacts) -> list[GpuHint]:
    """`--gres`/`--constraint` on an `srun`, `salloc` or `sbatch` command line."""
    out: list[GpuHint] = []
    seen: set[Span] = set()
    for path in facts.paths:
        for rec in path.commands:
            for words in (rec.words, *rec.wrappers):
                if not words or words[0].text not in _SLURM_COMMANDS:
                    continue
                sites = [_word_site(w) for w in words[1:]]
                for i, site in enumerate(sites):
                    if site is None:
                        continue
                    text, span = site
                    key, eq, value = text.partition("=")
                    if key not in _COMMAND_KINDS or span in seen:
                        continue
                    following = sites[i + 1] if i + 1 < len(sites) else None
                    if eq:
                        hint = GpuHint(_COMMAND_KINDS[key], value, _tail_span(span, text, len(key) + 1))
                    elif following is not None:
                        hint = GpuHint(_COMMAND_KINDS[key], *following)
                    else:
                        continue
                    seen.add(span)
                    out.append(hint)
    return out


def _header_end(text: str) -> int:
    """The line of the script's first command: the comments above it are its header."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number
    return len(text.splitlines()) + 1


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
    hints.extend(_command_hints(facts))
    src = facts.sources.get(facts.path)
    if src is None:
        return hints
    hints.append(GpuHint("path", os.path.basename(facts.path), None))
    header_end = _header_end(src.text)
    for text, span in facts.comments:
        if text.startswith("#!") or text.startswith("#SBATCH") or text.startswith("#PBS"):
            continue
        hints.append(GpuHint("header-comment" if span.start_line < header_end else "comment", text, span))
    return hints


@dataclass(frozen=True)
class GpuChoice:
    """The GPU a script's launches are checked on, and how it was chosen."""

    profile: GpuProfile | None
    detection: Detection | None  # the script's hint that decided, when the script decided
    unknown: str | None = None  # why no GPU is known
    option: str | None = None  # the GPU `--gpu` or the configuration's `gpu` gave
    option_note: str | None = None  # the option named another GPU, and the script's own hint won
    conflict: tuple[tuple[GpuHint, str], ...] = ()  # the script's hints that disagree
    outweighed: Detection | None = None  # a passing mention the option outweighed

    @property
    def source(self) -> str:
        """Where the GPU came from: `script`, `option` or `unknown`."""
        if self.detection is not None:
            return "script"
        return "option" if self.profile is not None else "unknown"


def hint_place(hint: GpuHint, span: Span | None = None) -> str:
    """A hint as a reader finds it: what it is and where (`line:column`), for messages."""
    where = span or hint.span
    if hint.kind == "path":
        return f"the file name `{hint.text}`"
    what = {
        "header-comment": "the header comment",
        "comment": "a comment",
        "sbatch-partition": "the partition",
        "value": "a value",
        "pbs": "the #PBS line",
        "command-gres": "the Slurm command's --gres",
        "command-constraint": "the Slurm command's --constraint",
    }.get(hint.kind, "the #SBATCH line")
    return f"{what} at {where.start_line}:{where.start_col}" if where is not None else what


def choose_gpu(facts: ScriptFacts, configured: str | None) -> GpuChoice:
    """The GPU: named by the script's heaviest hints, else by the user, else unknown."""
    option = find_gpu(configured) if configured else None
    if configured and option is None:
        raise ValueError(f"unknown GPU `{configured}`")
    weighing = weigh_hints(gpu_hints(facts))
    det = weighing.detection
    if det is not None and (option is None or det.weight < PASSING):
        if option is not None and is_model_of(option, det.profile):
            # The option agrees with the script and may say more (h100-sxm5-80gb where the
            # script asks for `gpu:h100`): its model is taken, as the script's.
            return GpuChoice(option, det, option=configured)
        note = None
        if option is not None:
            at = f" ({det.span.start_line}:{det.span.start_col})" if det.span is not None else ""
            note = (
                f"the GPU `{configured}` given to megalint was not used: "
                f"the script names {det.profile.name}, {det.reason}{at}"
            )
        return GpuChoice(det.profile, det, option=configured, option_note=note)
    if option is not None:
        # The script names no GPU, or only in passing in a comment, or its hints disagree.
        return GpuChoice(option, None, option=configured, conflict=weighing.conflict, outweighed=det)
    if weighing.conflict:
        named = ", ".join(f"{pid} ({hint_place(h)})" for h, pid in weighing.conflict)
        return GpuChoice(
            None,
            None,
            f"the script's hints of the same weight disagree: {named}; "
            "give the GPU with --gpu NAME or `gpu` in the configuration",
            conflict=weighing.conflict,
        )
    return GpuChoice(
        None,
        None,
        "no GPU model is named in the script (#SBATCH --constraint/--gres, its name, "
        "a comment); give one with --gpu NAME or `gpu` in the configuration",
    )
