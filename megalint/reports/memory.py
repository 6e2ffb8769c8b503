"""The memory breakdown of each Megatron launch of a script (`megalint memory`): per pipeline
stage the terms of the estimate, the memory outside PyTorch's allocator, and the GPU's usable
memory and headroom, in bytes."""

from __future__ import annotations

import os
from typing import Any

from megalint.engine import RuleSet
from megalint.errors import UsageError
from megalint.memory.report import usable_memory
from megalint.pipeline import Settings, lint_text

STAGE_ORDER = ("only", "first", "middle", "last")


def memory_report(
    path: str,
    text: str,
    gpu: str | None = None,
    megatron_version: str | None = None,
    assume: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Everything `megalint memory` shows of the script `text` (read from `path`, `-` for standard
    input), as plain JSON-able data; an unknown GPU or Megatron version is a UsageError."""
    settings = Settings(
        rules=RuleSet([]),
        megatron_version=megatron_version,
        gpu=gpu,
        assume=assume or {},
        root_dir=os.path.dirname(os.path.abspath(path)) if path != "-" else os.getcwd(),
    )
    try:
        result = lint_text(path, text, settings)
    except ValueError as exc:  # unknown GPU or Megatron version
        raise UsageError(str(exc)) from None
    launches = []
    profile = None
    for i, lr in enumerate(result.launches):
        if not lr.launch.is_megatron:
            continue
        profile = profile or lr.gpu
        ctx = lr.context
        entry = {
            "index": i,
            "line": lr.launch.span.start_line,
            "path": lr.launch.span.path,
            "launcher": lr.launch.launcher,
            "entry": ctx["launch"].get("entry"),
            "world_size": ctx["launch"].get("world_size"),
            "condition": list(lr.launch.condition),
        }
        mem = ctx.get("memory")
        if mem is None:
            entry["estimate"] = None
            entry["unknown"] = ctx["unknown"].get("memory", "the estimate could not be made")
        else:
            entry["estimate"] = _estimate_json(mem)
        launches.append(entry)
    gpu_info: dict[str, Any]
    if profile is not None:
        usable, upper = usable_memory(profile)
        gpu_info = {"name": profile.name, "id": profile.id, "usable_bytes": usable, "usable_is_largest_variant": upper}
        if result.launches and result.launches[0].detection is not None:
            gpu_info["from"] = result.launches[0].detection.reason
        elif gpu:
            gpu_info["from"] = "--gpu"
        if result.gpu is not None and result.gpu.option_note:
            gpu_info["note"] = result.gpu.option_note  # the script named another GPU, and won
        if usable is None:
            gpu_info["unknown"] = (
                f"the usable memory of {profile.name} is not known: "
                "name the model with its memory, e.g. --gpu h100-sxm5-80gb"
            )
    else:
        gpu_info = {"name": None, "usable_bytes": None, "unknown": (result.gpu_note or "no GPU model is known")}
    return {"path": path, "megatron": result.version, "gpu": gpu_info, "launches": launches}


def _estimate_json(mem: dict[str, Any]) -> dict[str, Any]:
    stages = []
    for s in sorted(mem["stages"], key=lambda s: STAGE_ORDER.index(s["stage"])):
        stages.append(
            {
                "stage": s["stage"],
                "pp_rank": s["pp_rank"],
                "num_layers": s["num_layers"],
                "params": s["params"],
                "terms": s["terms"],
                "peak_terms": s["peak_terms"],
                "peak_bytes": s["peak_bytes"],
                "peak_event": s["peak_event"],
                "device_bytes": s["peak_bytes"] + mem["overhead_bytes"],
            }
        )
    out = {
        "world_size": mem["world_size"],
        "layout": mem["layout"],
        "lower_bound": mem["lower_bound"],
        "not_counted": mem["not_counted"],
        "assumptions": mem["assumptions"],
        "stages": stages,
        "peak_bytes": mem["peak_bytes"],
        "overhead": {"bytes": mem["overhead_bytes"], "terms": mem["overhead_terms"]},
        "device_bytes": mem["device_bytes"],
        "worst_stage": mem["worst"]["stage"],
    }
    if "usable_bytes" in mem:
        out["usable_bytes"] = mem["usable_bytes"]
        out["usable_is_largest_variant"] = mem["usable_is_largest_variant"]
        out["headroom_bytes"] = mem["headroom_bytes"]
        out["fits"] = mem["device_bytes"] <= mem["usable_bytes"]
        out["suggestions"] = mem.get("suggestions", [])
    return out
