"""How the GPU of a script was chosen, as `megalint explain` and `megalint model` show it: the
hint that won and why, the hints it outweighed, the hints that disagree, and what became of the
GPU given with `--gpu` or the configuration."""

from __future__ import annotations

from typing import TypedDict

from megalint.hardware.detect import GpuChoice, hint_place
from megalint.hardware.profiles import GpuHint
from megalint.source import Span


class HintJson(TypedDict):
    kind: str
    text: str
    at: str | None  # path:line:column; None for the file name
    gpu: str  # the GPU id it names
    where: str  # what a reader looks for: "the #SBATCH line at 4:20"


class GpuJson(TypedDict):
    name: str | None
    id: str | None
    source: str  # script | option | unknown
    hint: HintJson | None  # the hint that won
    why: str | None  # why it outweighs the others
    outweighed: list[HintJson]  # lighter hints that name another GPU
    conflict: list[HintJson]  # hints of the same, heaviest weight that disagree
    option: str | None  # --gpu or the configuration's `gpu`
    option_note: str | None  # the option was given and the script's hint won
    unknown: str | None


def _hint(hint: GpuHint, gpu: str, span: Span | None = None) -> HintJson:
    at = span or hint.span
    return {
        "kind": hint.kind,
        "text": hint.text.strip(),
        "at": str(at) if at is not None else None,
        "gpu": gpu,
        "where": hint_place(hint, span),
    }


def gpu_json(choice: GpuChoice) -> GpuJson:
    det = choice.detection
    outweighed = [_hint(h, pid) for h, pid in det.ignored] if det is not None else []
    if choice.outweighed is not None:
        passing = choice.outweighed
        outweighed.append(_hint(passing.hint, passing.profile.id, passing.span))
    return {
        "name": choice.profile.name if choice.profile is not None else None,
        "id": choice.profile.id if choice.profile is not None else None,
        "source": choice.source,
        "hint": _hint(det.hint, det.profile.id, det.span) if det is not None else None,
        "why": det.why if det is not None else None,
        "outweighed": outweighed,
        "conflict": [_hint(h, pid) for h, pid in choice.conflict],
        "option": choice.option,
        "option_note": choice.option_note,
        "unknown": choice.unknown,
    }


def _named_by(h: HintJson) -> str:
    return h["where"] if h["kind"] == "path" else f"{h['where']} (`{h['text']}`)"


def gpu_lines(gpu: GpuJson) -> list[str]:
    """The GPU's story in a few indented lines of text."""
    lines: list[str] = []
    hint = gpu["hint"]
    if hint is not None:
        lines.append(f"  GPU: {gpu['name']}, named by {_named_by(hint)}: {gpu['why']}")
        if gpu["option"] is not None and gpu["id"] != hint["gpu"]:
            lines.append(f"    the model is the one given with --gpu or the configuration ({gpu['option']})")
    elif gpu["name"] is not None:
        lines.append(f"  GPU: {gpu['name']}, given with --gpu or the configuration's `gpu` ({gpu['option']})")
    else:
        lines.append(f"  GPU unknown: {gpu['unknown']}")
    for h in gpu["outweighed"]:
        lines.append(f"    outweighed: {_named_by(h)} names {h['gpu']}")
    for h in gpu["conflict"]:
        lines.append(f"    disagrees: {_named_by(h)} names {h['gpu']}")
    if gpu["option_note"]:
        lines.append(f"    note: {gpu['option_note']}")
    return lines
