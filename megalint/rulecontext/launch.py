"""From one launch to what rules read: the plain-dict context of the launch.

Everything a rule may ask is computed here once per launch and path: the bound Megatron
arguments with defaults, the derived values, the environment, the launch quantities, the GPU,
the memory estimate, the binding problems and the shell findings. A value that is unknown is
left out and its reason recorded under `unknown`, so that a rule needing it is undecided.
"""

from __future__ import annotations

from typing import Any

from megalint.hardware.profiles import GpuProfile
from megalint.launch.model import Launch, Quantity
from megalint.megatron.bind import default_args
from megalint.megatron.bound import BoundArg, BoundArgs
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.derived import Derived
from megalint.megatron.plain import plain
from megalint.memory.report import MemoryView
from megalint.rulecontext.assumptions import ASSUMED, launch_assumptions
from megalint.rulecontext.findings import shell_entries
from megalint.rulecontext.problems import problem_entry
from megalint.shell.facts import ScriptFacts, ShellFinding
from megalint.shell.values import Unknown


def _put(ctx: dict[str, Any], root: str, key: str, value: object, unknown: dict[str, str]) -> None:
    v = plain(value)
    if isinstance(v, Unknown):
        unknown[f"{root}.{key}"] = v.reason
    else:
        ctx[root][key] = v


# The bound part of the last context built: a finding that rests on a default builds the
# contexts of the same binding for many node counts (pipeline/launches.py `vary`).
_last_bound: list[tuple[BoundArgs, dict[str, Any], dict[str, bool], dict[str, str]]] = []


def _bound_part(bound: BoundArgs) -> tuple[dict[str, Any], dict[str, bool], dict[str, str]]:
    """`args`, `given` and the unknown arguments of a binding (to be copied, not changed): copies
    of the catalogue's defaults' dicts (`_default_part`, made once), with the few dests the binding
    gives put in their places. A binding holds every dest of its catalogue, in its order, and
    shares the defaults' BoundArg of each dest it does not give (bind.py `finish`)."""
    if _last_bound and _last_bound[0][0] is bound:
        return _last_bound[0][1:]
    shared = _plain_defaults(bound.catalogue)
    base_args, base_unknown = _default_part(bound.catalogue)
    args, unknown = dict(base_args), dict(base_unknown)
    given: dict[str, bool] = {}
    late_args = late_unknown = False  # a dest added to a dict that lacked it: out of order
    for dest, arg in bound.own_args():
        if shared[dest][0] is arg:
            continue
        v = plain(arg.value)
        key = f"args.{dest}"
        if isinstance(v, Unknown):
            args.pop(dest, None)
            late_unknown = late_unknown or key not in unknown
            unknown[key] = v.reason
        else:
            unknown.pop(key, None)
            late_args = late_args or dest not in args
            args[dest] = v
        if arg.given:
            given[dest] = True
    if late_args:
        args = {dest: args[dest] for dest in shared if dest in args}
    if late_unknown:
        unknown = {key: unknown[key] for key in _unknown_keys(bound.catalogue) if key in unknown}
    _last_bound[:] = [(bound, args, given, unknown)]
    return args, given, unknown


def _unknown_keys(cat: Catalogue) -> list[str]:
    """`args.DEST` of each dest of the catalogue, in its order, made once."""
    keys: list[str] | None = cat.__dict__.get("_context_unknown_keys")
    if keys is None:
        keys = cat.__dict__["_context_unknown_keys"] = [f"args.{dest}" for dest in _plain_defaults(cat)]
    return keys


def _default_part(cat: Catalogue) -> tuple[dict[str, Any], dict[str, str]]:
    """`args` and the unknown arguments of a binding that gives nothing, made once per catalogue."""
    part: tuple[dict[str, Any], dict[str, str]] | None = cat.__dict__.get("_context_default_part")
    if part is None:
        args: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        for dest, (_arg, v) in _plain_defaults(cat).items():
            if isinstance(v, Unknown):
                unknown[f"args.{dest}"] = v.reason
            else:
                args[dest] = v
        part = cat.__dict__["_context_default_part"] = (args, unknown)
    return part


def _plain_defaults(cat: Catalogue) -> dict[str, tuple[BoundArg, Any]]:
    """dest -> (the BoundArg every binding of `cat` shares for a dest not given, its plain value),
    made once per catalogue: a binding gives a handful of its hundreds of dests."""
    cached = cat.__dict__.get("_plain_defaults")
    if cached is None:
        cached = cat.__dict__["_plain_defaults"] = {
            dest: (arg, plain(arg.value)) for dest, arg in default_args(cat).items()
        }
    return cached


def _quantity(q: Quantity, key: str, ctx: dict[str, Any], unknown: dict[str, str]) -> None:
    if q.value is not None:
        ctx["launch"][key] = q.value
    else:
        unknown[f"launch.{key}"] = q.unknown.reason if q.unknown else f"{q.how} is not known"


def gpu_context(profile: GpuProfile | None, reason: str | None) -> tuple[dict[str, object], dict[str, str]]:
    gpu: dict[str, object] = {}
    unknown: dict[str, str] = {}
    if profile is None:
        unknown["gpu"] = reason or "no GPU model is known: give --gpu NAME or `gpu` in the configuration"
        return gpu, unknown
    gpu["name"] = profile.name
    for key, value in (
        ("compute_capability", profile.compute_capability_value),
        ("memory_bytes", profile.memory_bytes),
        ("bf16", profile.bf16),
        ("fp8", profile.fp8),
        ("fp4", profile.nvfp4),
        ("arch", profile.architecture),
    ):
        if value is None:
            unknown[f"gpu.{key}"] = f"{profile.name}: {key.replace('_', ' ')} is not known for this model"
        else:
            gpu[key] = value
    return gpu, unknown


def build_context(
    launch: Launch,
    bound: BoundArgs,
    derived: dict[str, Derived],
    version: str,
    gpu: GpuProfile | None,
    gpu_reason: str | None,
    findings: list[ShellFinding],
    memory: MemoryView | None,
    memory_unknown: str | None,
    env_opaque: str | None = None,
    fork: str | None = None,
    parser: str | None = None,
    env_assumed: str | None = None,
    facts: ScriptFacts | None = None,
) -> dict[str, Any]:
    """The context of one launch. `env_opaque` says why the environment cannot be listed in
    full, `env_assumed` what lets it be in spite of the modules loaded (rulecontext/assumptions.py),
    `facts` the script's, for the expansions that explain a binding problem (expansions.py);
    `fork` why the launch runs a Megatron fork, whose Megatron version is not known (its
    binding problems are the fork's parser's, unknown where `bound.problems_unknown` says why)."""
    unknown: dict[str, str] = {}
    ctx: dict[str, Any] = {
        "args": {},
        "given": {},
        "derived": {},
        "env": {},
        "env_set": [],
        "launch": {},
        "megatron": version,
        "problems": [],
        "shell": [],
        "unknown": unknown,
    }
    args, given, args_unknown = _bound_part(bound)
    ctx["args"] = dict(args)
    ctx["given"] = dict(given)
    unknown.update(args_unknown)
    for name, d in derived.items():
        _put(ctx, "derived", name, d.value, unknown)
    for name, word in launch.env.items():
        ctx["env_set"].append(name)
        if word.text is not None:
            ctx["env"][name] = word.text
        else:
            unknown[f"env.{name}"] = word.unknown.reason if word.unknown else "unknown"
    ctx["env_set"].sort()
    if env_opaque is not None:
        # The names set are only those megalint read; whether one is absent is unknown.
        del ctx["env_set"]
        unknown["env_set"] = env_opaque
    ctx["launch"]["launcher"] = launch.launcher
    if launch.entry is not None and launch.entry.text is not None:
        ctx["launch"]["entry"] = launch.entry.text
    _quantity(launch.nproc_per_node, "nproc_per_node", ctx, unknown)
    _quantity(launch.nnodes, "nnodes", ctx, unknown)
    _quantity(launch.world_size, "world_size", ctx, unknown)
    if launch.nnodes.value is not None:
        ctx["launch"]["multi_node"] = launch.nnodes.value > 1
    else:
        unknown["launch.multi_node"] = unknown.get("launch.nnodes", "the node count is not known")
    g, gu = gpu_context(gpu, gpu_reason)
    ctx["gpu"] = g
    unknown.update(gu)
    if memory is not None:
        ctx["memory"] = memory
    else:
        unknown["memory"] = memory_unknown or "the memory estimate needs values that are not known"
    if bound.problems_unknown is not None:
        del ctx["problems"]
        unknown["problems"] = bound.problems_unknown
    else:
        ctx["problems"].extend(problem_entry(i, p, bound, version, parser, facts) for i, p in enumerate(bound.problems))
    ctx["shell"].extend(shell_entries(findings))
    if bound.passthrough:
        unknown["args"] = "; ".join(sorted({p.reason for p in bound.passthrough}))
    if fork is not None:
        unknown["megatron"] = fork
    ctx[ASSUMED] = launch_assumptions(launch, bound, derived, env_assumed if env_opaque is None else None)
    return ctx
