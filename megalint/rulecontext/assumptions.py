"""Which values of a launch's context rest on an assumption, for the engine to tell which findings do.

Two assumptions reach rule contexts. A default of an input the script never sets
(`NNODES=${NNODES:-2}`, `--nproc-per-node ${GPUS_PER_NODE:-8}`) is the author's intent: rules use
it, and every value computed from it (the world size, the data-parallel size, the memory estimate)
carries it. A loaded environment module (`module load`, `spack load`, `conda activate`) is assumed
to set no Megatron, NCCL or CUDA tuning variable: the names the script exports are then the whole
list of those (`env_set`).

The context's `assumed` maps a dotted path to the assumptions its value rests on (their texts, in
the order met). It is not a root a rule reads: the engine consults it when a rule fires.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from megalint.launch.model import Launch
from megalint.megatron.bound import BoundArgs
from megalint.megatron.derived import Derived

ASSUMED = "assumed"


def _union(parts: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    for part in parts:
        out.extend(t for t in part if t not in out)
    return tuple(out)


def launch_assumptions(
    launch: Launch, bound: BoundArgs, derived: dict[str, Derived], env_assumed: str | None
) -> dict[str, tuple[str, ...]]:
    """path -> the assumptions its value rests on, for the known values of one launch."""
    out: dict[str, tuple[str, ...]] = {}
    for key, q in (
        ("nproc_per_node", launch.nproc_per_node),
        ("nnodes", launch.nnodes),
        ("world_size", launch.world_size),
    ):
        if q.value is not None and q.assumed:
            out[f"launch.{key}"] = q.assumed
    if "launch.nnodes" in out:
        out["launch.multi_node"] = out["launch.nnodes"]
    for dest, arg in bound.own_args():
        if arg.given and arg.known:
            got = _union(w.defaults_assumed for w in arg.value_words)
            if got:
                out[f"args.{dest}"] = got
    for name, word in launch.env.items():
        if word.text is not None and word.defaults_assumed:
            out[f"env.{name}"] = word.defaults_assumed
    # A derived value rests on what its inputs rest on; an input named like the value itself is
    # the argument (`pipeline_model_parallel_size` is both), any other is derived when derived before.
    derived_so_far: dict[str, tuple[str, ...]] = {}
    for name, d in derived.items():
        if name == "world_size":
            got = out.get("launch.world_size", ())
        else:
            got = _union(
                derived_so_far[i] if i in derived_so_far and i != name else out.get(f"args.{i}", ()) for i in d.inputs
            )
        derived_so_far[name] = got
        if got and d.known:
            out[f"derived.{name}"] = got
    memory = _union(v for k, v in out.items() if k.startswith(("launch.", "args.")))
    if memory:
        out["memory"] = memory
    if env_assumed is not None:
        out["env_set"] = (env_assumed,)
    return out


def with_quantity(launch: Launch, key: str, value: int) -> Launch | None:
    """The launch with its node count or processes per node (`key`) set to `value`, the world
    size following; None when its world size is not the product of the two."""
    nnodes, nproc, world = launch.nnodes, launch.nproc_per_node, launch.world_size
    if nnodes.value is None or nproc.value is None or world.value != nnodes.value * nproc.value:
        return None
    if key == "nnodes":
        nnodes = replace(nnodes, value=value)
    else:
        nproc = replace(nproc, value=value)
    assert nnodes.value is not None and nproc.value is not None
    return replace(
        launch, nnodes=nnodes, nproc_per_node=nproc, world_size=replace(world, value=nnodes.value * nproc.value)
    )
