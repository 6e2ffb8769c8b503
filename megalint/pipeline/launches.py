"""Binding the launches of one script: per launch, its parser → bind → derive → memory → context,
and the same for the arguments a file sets without a launch and for the programs that parse
Megatron-like flags themselves. Imported only for a file with something to bind: it needs the
catalogues, the forks' parsers, the GPU table and the memory model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

from megalint.engine import Target
from megalint.engine.assumptions import Vary
from megalint.hardware.detect import GpuChoice
from megalint.hardware.profiles import GpuProfile
from megalint.launch.environment import environment_assumption, environment_opaque
from megalint.launch.fragments import NO_LAUNCH, READ_AS, find_fragments
from megalint.launch.model import Launch, Quantity
from megalint.launch.tools import TOOL, names_megatron_entry
from megalint.megatron.bound import BoundArgs
from megalint.megatron.derived import Derived, derive
from megalint.megatron.forks import Fork, world_size_rewritten
from megalint.megatron.launch_parser import LaunchParser, bind_launch, parser_for_launch
from megalint.memory.launch_view import launch_memory
from megalint.memory.report import MemoryView
from megalint.pipeline import Bound, LaunchResult, Settings
from megalint.rulecontext.assumptions import with_quantity
from megalint.rulecontext.fragment import fragment_context
from megalint.rulecontext.launch import build_context
from megalint.rulecontext.locator import LaunchLocator
from megalint.rulecontext.tool import tool_context
from megalint.rulecontext.unset_inputs import unset_variable_findings
from megalint.shell.facts import ScriptFacts
from megalint.shell.values import Unknown


def bind_all(
    facts: ScriptFacts,
    launches: list[Launch],
    candidates: list[Launch],
    fragments: list[Launch] | None,
    settings: Settings,
    version: str,
    gpu: GpuChoice,
    is_flag: Callable[[str], bool],
) -> Bound:
    """The file's launches, its programs with a parser of their own (`candidates`) and, when no
    launch is left, its fragments (`fragments` when already found), each bound into a target."""
    profile, detection, gpu_reason = gpu.profile, gpu.detection, gpu.unknown
    env_opaque = environment_opaque(facts)
    env_assumed = environment_assumption(facts)
    out = Bound()
    out.tools, out.tool_targets, launches = _tools(facts, settings, candidates, launches)
    # Paths that differ in the launcher's words or the environment alone run the same words
    # (the same objects) after the entry point: a quarter of the launches of the public
    # scripts. Their parser and binding are found once; nothing changes a binding once made.
    # The words are told by their ids: every launch, and so every word, lives through the loop.
    bindings: dict[tuple[object, ...], tuple[LaunchParser, BoundArgs]] = {}
    # What is derived from a binding, and its memory, depend on the binding, the world size and
    # the version alone (and the GPU, the processes per node): launches sharing a binding share them.
    derivations: dict[tuple[object, ...], dict[str, Derived]] = {}
    memories: dict[tuple[object, ...], tuple[MemoryView | None, str | None]] = {}
    for launch in launches:
        entry = launch.entry_path
        pythonpath = launch.env.get("PYTHONPATH")
        key = (entry, id(pythonpath), *map(id, launch.argv))
        made = bindings.get(key)
        if made is not None:
            parser, bound = made
        else:
            # The parser that reads this launch's flags: Megatron-LM's, or the fork's it runs on.
            parser = parser_for_launch(
                settings.megatron_version, facts.path, entry, launch.argv, settings.source_roots, pythonpath
            )
            bound = bind_launch(launch.argv, entry, parser)
            bindings[key] = (parser, bound)
        fork = parser.fork
        rewritten = world_size_rewritten(fork, bound.given)
        if rewritten is not None:
            launch = replace(launch, world_size=Quantity(None, launch.world_size.how, (), Unknown(rewritten)))
        if parser.release is not None:
            # The launch pins its Megatron-LM (Pai's backends/): its rules are that release's.
            launch = replace(launch, notes=[*launch.notes, f"runs {parser.release}"])
        launch_version = parser.version if parser.release is not None else version
        world = launch.world_size.value
        world_or_why = world if world is not None else launch.world_size.unknown
        derived_key = (id(bound), world_or_why, launch_version)
        derived = derivations.get(derived_key)
        if derived is None:
            derived = derivations[derived_key] = derive(bound, world_or_why, launch_version)
        if settings.with_memory:
            nproc = launch.nproc_per_node.value
            memory_key = (id(bound), world_or_why, launch_version, nproc)
            estimate = memories.get(memory_key)
            if estimate is None:
                estimate = memories[memory_key] = launch_memory(bound, world, derived, profile, nproc)
            memory, memory_unknown = estimate
        else:
            memory, memory_unknown = None, "not computed"
        ctx = build_context(
            launch,
            bound,
            derived,
            launch_version,
            profile,
            gpu_reason,
            facts.findings,
            memory,
            memory_unknown,
            env_opaque=env_opaque,
            fork=fork.reason if fork is not None else None,
            parser=fork.parser_name if fork is not None else None,
            env_assumed=env_assumed,
            facts=facts,
        )
        locator = LaunchLocator(launch, bound, facts, detection, facts.findings)
        cond = " and ".join(launch.condition) if launch.condition else None
        vary = _varier(
            launch,
            bound,
            launch_version,
            profile,
            gpu_reason,
            facts,
            env_opaque,
            env_assumed,
            fork.reason if fork is not None else None,
            fork.parser_name if fork is not None else None,
        )
        target = Target(ctx, locator, cond, vary, launch.condition)
        rules_fork = _rules_fork(fork)
        (out.targets if rules_fork is None else out.fork_targets.setdefault(rules_fork, [])).append(target)
        out.launches.append(
            LaunchResult(launch, bound, ctx, detection, profile, vary=vary, code=parser.code, rules_fork=rules_fork)
        )
    # A flag value reading a variable nothing sets is a shell finding only a bound launch shows.
    # Each binding once: launches that share one (above) read the same variables in the same places.
    bound_once = list({id(r.bound): r.bound for r in out.launches}.values())
    facts.findings = facts.findings + unset_variable_findings(facts, bound_once)
    if not launches:
        held = {str(w.span) for tr in out.tools for w in tr.launch.argv if w.span is not None}
        found = fragments if fragments is not None else find_fragments(facts, is_flag)
        out.fragments = _fragments(facts, settings, found, version, out.targets, out.fork_targets, held)
    return out


def _tools(
    facts: ScriptFacts, settings: Settings, candidates: list[Launch], launches: list[Launch]
) -> tuple[list[LaunchResult], list[Target], list[Launch]]:
    """The programs the file runs that read Megatron-like flags with a parser of their own, bound
    against that parser where the program's source is at hand and says all of it; and the
    launches left. A launch told by its flags alone (its entry point is no Megatron entry
    point's name) whose program parses its own flags is such a program."""
    results: list[LaunchResult] = []
    targets: list[Target] = []
    kept: list[Launch] = []
    candidates = list(candidates)
    for launch in launches:
        (candidates if not names_megatron_entry(launch.entry_name) else kept).append(launch)
    for command in candidates:
        # Imported here: reading a tool's parser needs libcst, and few files run such a tool.
        from megalint.megatron.tool_parser import bind_tool, tool_parser

        parser = tool_parser(facts.path, command.entry_path, settings.source_roots)
        bound = bind_tool(command.argv, parser) if parser is not None else None
        if parser is None or bound is None:
            if command.launcher != TOOL:
                kept.append(command)
            continue
        command = replace(command, launcher=TOOL)
        ctx = tool_context(bound, parser.name)
        cond = " and ".join(command.condition) if command.condition else None
        targets.append(
            Target(ctx, LaunchLocator(command, bound, facts, None, facts.findings), cond, conjuncts=command.condition)
        )
        results.append(LaunchResult(command, bound, ctx, None, None, tool=parser.name, code=(str(parser.entry_file),)))
    order = {id(la): i for i, la in enumerate(launches)}
    return results, targets, sorted(kept, key=lambda la: order[id(la)])


def _varier(
    launch: Launch,
    bound: BoundArgs,
    version: str,
    profile: GpuProfile | None,
    gpu_reason: str | None,
    facts: ScriptFacts,
    env_opaque: str | None,
    env_assumed: str | None,
    fork: str | None,
    parser: str | None,
) -> Vary:
    """The context of a launch for another node count or process count, for a finding that rests
    on the default it takes one from (engine/assumptions.py); computed only when asked."""

    @cache
    def vary(key: str, value: int) -> dict[str, Any] | None:
        other = with_quantity(launch, key, value)
        if other is None:
            return None
        return build_context(
            other,
            bound,
            derive(bound, other.world_size.value, version),
            version,
            profile,
            gpu_reason,
            facts.findings,
            None,
            "not estimated for another node count",
            env_opaque=env_opaque,
            fork=fork,
            parser=parser,
            env_assumed=env_assumed,
            facts=facts,
        )

    return vary


def _fragments(
    facts: ScriptFacts,
    settings: Settings,
    found: list[Launch],
    version: str,
    targets: list[Target],
    fork_targets: dict[str, list[Target]],
    held: set[str],
) -> list[LaunchResult]:
    """The fragments of a file without a launch, each bound and added to the targets as a launch
    is, with a context in which whatever only a launch could tell is unknown. Words that a
    program with a parser of its own reads (`held`, their places) are that program's."""
    results: list[LaunchResult] = []
    for fragment in found:
        if any(str(w.span) in held for w in fragment.argv if w.span is not None):
            continue
        # A fragment in a fork's repository is read by the fork's parser, as its launch would be.
        parser = parser_for_launch(settings.megatron_version, facts.path, READ_AS, fragment.argv, settings.source_roots)
        bound = bind_launch(fragment.argv, READ_AS, parser)
        derived = derive(bound, fragment.world_size.unknown, version)
        fork = parser.fork
        ctx = build_context(
            fragment,
            bound,
            derived,
            version,
            None,
            NO_LAUNCH,
            facts.findings,
            None,
            NO_LAUNCH,
            fork=fork.reason if fork is not None else None,
            parser=fork.parser_name if fork is not None else None,
            facts=facts,
        )
        ctx, left = fragment_context(ctx, bound)
        target = Target(ctx, LaunchLocator(fragment, bound, facts, None, facts.findings), None)
        rules_fork = _rules_fork(fork)
        (targets if rules_fork is None else fork_targets.setdefault(rules_fork, [])).append(target)
        results.append(LaunchResult(fragment, bound, ctx, None, None, left, code=parser.code, rules_fork=rules_fork))
    return results


def _rules_fork(fork: Fork | None) -> str | None:
    """The fork whose rules decide a launch read by `fork`'s parser (None: Megatron-LM's)."""
    return None if fork is None or fork.validates_as_upstream else fork.name
