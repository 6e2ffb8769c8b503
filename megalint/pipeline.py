"""The whole pipeline for one script: parse → evaluate → launches → bind → context → rules.

`lint_text` is a pure function of the script text and the settings; the CLI, the tests and
the rule examples all go through it, so an example that passes as a test behaves the same
way on the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from megalint.diagnostics import Diagnostic
from megalint.engine import Evaluation, RuleSet, Target, evaluate
from megalint.engine.assumptions import Vary
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.hardware.detect import choose_gpu
from megalint.hardware.profiles import Detection, GpuProfile
from megalint.launch.environment import environment_assumption, environment_opaque
from megalint.launch.extract import extract_launches
from megalint.launch.fragments import MIN_FLAGS, NO_LAUNCH, READ_AS, find_fragments
from megalint.launch.model import Launch, Quantity
from megalint.megatron.bound import BoundArgs
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.catalogue_choice import catalogue_for
from megalint.megatron.derived import derive
from megalint.megatron.forks import world_size_rewritten
from megalint.megatron.launch_parser import bind_launch, parser_for_launch
from megalint.memory.launch_view import launch_memory
from megalint.rulecontext.assumptions import with_quantity
from megalint.rulecontext.fragment import fragment_context
from megalint.rulecontext.launch import build_context
from megalint.rulecontext.locator import LaunchLocator
from megalint.rulecontext.script import ScriptLocator, script_context
from megalint.shell.analyze import analyze_parsed
from megalint.shell.facts import ScriptFacts
from megalint.shell.parse import parse_text
from megalint.shell.values import Unknown
from megalint.source import SourceFile


@dataclass
class Settings:
    """What a run decides for every script: the rules, the Megatron version and GPU when given,
    values assumed for environment inputs, and how far `source` may be followed."""

    rules: RuleSet
    megatron_version: str | None = None
    gpu: str | None = None
    assume: dict[str, str] = field(default_factory=dict)
    root_dir: str | None = None
    follow_source_outside_root: bool = False
    with_memory: bool = True
    source_roots: tuple[str, ...] = ()


@dataclass
class LaunchResult:
    """One launch with what the rules read of it."""

    launch: Launch
    bound: BoundArgs
    context: dict[str, Any]
    detection: Detection | None
    gpu: GpuProfile | None
    # Of a fragment: the binding problems only its launch can judge, as `flag at place: why`.
    left_to_launch: list[str] = field(default_factory=list)
    # The context for another node or process count (engine/assumptions.py)
    vary: Vary | None = None


@dataclass
class FileResult:
    """One script: its facts, its launches and what the rules concluded."""

    path: str
    facts: ScriptFacts
    launches: list[LaunchResult]
    evaluation: Evaluation
    version: str
    version_note: str | None = None
    gpu_note: str | None = None
    # Arguments the file sets without a launch (launcher "fragment"), checked when it has none.
    fragments: list[LaunchResult] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.evaluation.diagnostics

    @property
    def sources(self) -> dict[str, SourceFile]:
        return self.facts.sources


def lint_text(path: str, text: str, settings: Settings) -> FileResult:
    ps = parse_text(path, text)

    def analyze(skip_unread: bool) -> ScriptFacts:
        return analyze_parsed(
            ps,
            root_dir=settings.root_dir,
            assume=settings.assume,
            follow_outside_root=settings.follow_source_outside_root,
            skip_unread=skip_unread,
        )

    facts = analyze(skip_unread=True)
    launches = extract_launches(facts)
    if not launches and text.count("--") >= MIN_FLAGS:
        # No launch reads the file's assignments, so the interpreter passed over them; a file
        # of arguments (a fragment) is read in full.
        facts = analyze(skip_unread=False)
        launches = extract_launches(facts)
    return lint_facts(facts, launches, settings)


def lint_facts(facts: ScriptFacts, launches: list[Launch], settings: Settings) -> FileResult:
    """Everything after the shell front end: per launch, bind → derive → memory → context; then
    the rules, each on the targets of its scope (Megatron-LM launches, fork launches, the script)."""
    catalogue, version, version_note = catalogue_for(settings.megatron_version)
    profile, detection, gpu_reason = choose_gpu(facts, settings.gpu)
    env_opaque = environment_opaque(facts)
    env_assumed = environment_assumption(facts)
    targets: list[Target] = []
    fork_targets: dict[str, list[Target]] = {}
    results: list[LaunchResult] = []
    for launch in launches:
        entry = launch.entry_path
        # The parser that reads this launch's flags: Megatron-LM's, or the fork's it runs on.
        parser = parser_for_launch(settings.megatron_version, facts.path, entry, launch.argv, settings.source_roots)
        bound = bind_launch(launch.argv, entry, parser)
        fork = parser.fork
        rewritten = world_size_rewritten(fork, bound.given)
        if rewritten is not None:
            launch = replace(launch, world_size=Quantity(None, launch.world_size.how, (), Unknown(rewritten)))
        world = launch.world_size.value
        derived = derive(bound, world if world is not None else launch.world_size.unknown, version)
        memory, memory_unknown = (
            launch_memory(bound, world, derived, profile, launch.nproc_per_node.value)
            if settings.with_memory
            else (None, "not computed")
        )
        ctx = build_context(
            launch,
            bound,
            derived,
            version,
            profile,
            gpu_reason,
            facts.findings,
            memory,
            memory_unknown,
            env_opaque=env_opaque,
            fork=fork.reason if fork is not None else None,
            parser=fork.parser_name if fork is not None else None,
            env_assumed=env_assumed,
        )
        locator = LaunchLocator(launch, bound, facts, detection, facts.findings)
        cond = " and ".join(launch.condition) if launch.condition else None

        vary = _varier(
            launch,
            bound,
            version,
            profile,
            gpu_reason,
            facts,
            env_opaque,
            env_assumed,
            fork.reason if fork is not None else None,
            fork.parser_name if fork is not None else None,
        )
        target = Target(ctx, locator, cond, vary)
        if fork is None or fork.validates_as_upstream:
            targets.append(target)
        else:
            fork_targets.setdefault(fork.name, []).append(target)
        results.append(LaunchResult(launch, bound, ctx, detection, profile, vary=vary))
    fragment_results = [] if launches else _fragments(facts, settings, catalogue, version, targets, fork_targets)
    # Each rule says where it is decided (`scope`) and on which forks it holds (`forks`).
    evaluation = evaluate(settings.rules.select(scope=LAUNCH), targets)
    for name, on_fork in fork_targets.items():
        _merge_into(evaluation, evaluate(settings.rules.select(scope=LAUNCH, fork=name), on_fork))
    script_rules = settings.rules.select(scope=SCRIPT)
    if facts.findings and len(script_rules):
        script = Target(script_context(facts, version), ScriptLocator(facts), None)
        _merge_into(evaluation, evaluate(script_rules, [script]))
    return FileResult(facts.path, facts, results, evaluation, version, version_note, gpu_reason, fragment_results)


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
        )

    return vary


def _fragments(
    facts: ScriptFacts,
    settings: Settings,
    catalogue: Catalogue,
    version: str,
    targets: list[Target],
    fork_targets: dict[str, list[Target]],
) -> list[LaunchResult]:
    """The fragments of a file without a launch, each bound and added to the targets as a launch
    is, with a context in which whatever only a launch could tell is unknown."""
    results: list[LaunchResult] = []
    for fragment in find_fragments(facts, catalogue.__contains__):
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
        )
        ctx, left = fragment_context(ctx, bound)
        target = Target(ctx, LaunchLocator(fragment, bound, facts, None, facts.findings), None)
        (targets if fork is None or fork.validates_as_upstream else fork_targets.setdefault(fork.name, [])).append(
            target
        )
        results.append(LaunchResult(fragment, bound, ctx, None, None, left))
    return results


def _merge_into(evaluation: Evaluation, other: Evaluation) -> None:
    evaluation.diagnostics = sorted(evaluation.diagnostics + other.diagnostics, key=Diagnostic.sort_key)
    evaluation.undecided += other.undecided
    evaluation.failures += other.failures
    for k, v in other.outcomes.items():
        evaluation.outcomes.setdefault(k, set()).update(v)
