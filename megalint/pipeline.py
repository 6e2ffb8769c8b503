"""The whole pipeline for one script: parse → evaluate → launches → bind → context → rules.

`lint_text` is a pure function of the script text and the settings; the CLI, the tests and
the rule examples all go through it, so an example that passes as a test behaves the same
way on the command line.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from megalint.diagnostics import Diagnostic
from megalint.engine import Evaluation, RuleSet, Target, evaluate
from megalint.engine.assumptions import Vary
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.hardware.detect import GpuChoice, choose_gpu
from megalint.hardware.profiles import Detection, GpuProfile
from megalint.launch.environment import environment_assumption, environment_opaque
from megalint.launch.extract import extract_launches
from megalint.launch.fragments import MIN_FLAGS, NO_LAUNCH, READ_AS, find_fragments
from megalint.launch.model import Launch, Quantity
from megalint.launch.tools import TOOL, find_tool_commands, names_megatron_entry
from megalint.megatron.bound import BoundArgs
from megalint.megatron.catalogue_choice import catalogue_for, version_for
from megalint.megatron.derived import derive
from megalint.megatron.forks import Fork, world_size_rewritten
from megalint.megatron.launch_parser import bind_launch, parser_for_launch
from megalint.memory.launch_view import launch_memory
from megalint.rulecontext.assumptions import with_quantity
from megalint.rulecontext.fragment import fragment_context
from megalint.rulecontext.launch import build_context
from megalint.rulecontext.locator import LaunchLocator
from megalint.rulecontext.script import ScriptLocator, script_context
from megalint.rulecontext.tool import TOOL_INPUTS, tool_context
from megalint.rulecontext.unset_inputs import unset_variable_findings
from megalint.shell.analyze import analyze_parsed
from megalint.shell.budget import MAX_FILE_SIZE, MAX_LAUNCHES, too_large_facts, too_many_launches, utf8_size
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
    max_file_size: int = MAX_FILE_SIZE  # bytes; a larger script gets one file-too-large finding


@dataclass
class LaunchResult:
    """One launch with what the rules read of it."""

    launch: Launch
    bound: BoundArgs
    context: dict[str, Any]
    detection: Detection | None
    gpu: GpuProfile | None
    # Of a fragment: the binding problems only its launch can judge, as `flag at place: why`.
    # Each with the rule that would report it, which is undecided on the fragment.
    left_to_launch: list[tuple[str, str]] = field(default_factory=list)
    # Of a program with a parser of its own (launch/tools.py): how messages name that parser.
    tool: str | None = None
    # The Python files the launch's parser was read from (a fork's, an entry point's provider).
    code: tuple[str, ...] = ()
    # The context for another node or process count (engine/assumptions.py)
    vary: Vary | None = None
    # The fork whose rules decide it (`forks:` of a rule); None for Megatron-LM's, and for a fork
    # that validates its flags as Megatron-LM does.
    rules_fork: str | None = None


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
    # Programs that read Megatron-like flags with a parser of their own (launcher "tool").
    tools: list[LaunchResult] = field(default_factory=list)
    gpu: GpuChoice | None = None  # how the GPU was chosen: the hint that won, the ones that lost
    # The Python files besides the scripts that decided a launch (a fork's parser, an entry point's
    # provider, a program's own parser): a result resting on them is stale once one changes.
    code: frozenset[str] = frozenset()

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.evaluation.diagnostics

    @property
    def sources(self) -> dict[str, SourceFile]:
        return self.facts.sources


def lint_text(path: str, text: str, settings: Settings) -> FileResult:
    size = utf8_size(text)
    if size > settings.max_file_size:
        # Checked, it would take minutes and gigabytes (shell/budget.py); it is not even parsed.
        return lint_facts(too_large_facts(path, text, size, settings.max_file_size), [], settings)
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
    if len(launches) > MAX_LAUNCHES:
        # Each launch is bound, estimated and decided: the cost grows with their number.
        facts.findings = [*facts.findings, too_many_launches(launches[MAX_LAUNCHES].span, len(launches), MAX_LAUNCHES)]
        launches = launches[:MAX_LAUNCHES]
    return lint_facts(facts, launches, settings)


def lint_facts(facts: ScriptFacts, launches: list[Launch], settings: Settings) -> FileResult:
    """Everything after the shell front end: per launch, bind → derive → memory → context; then
    the rules, each on the targets of its scope (Megatron-LM launches, fork launches, the script)."""
    version, version_note = version_for(settings.megatron_version)

    def is_flag(option: str) -> bool:
        # The catalogue is loaded for a file that writes flags, not for every script.
        return option in catalogue_for(settings.megatron_version)[0]

    gpu = choose_gpu(facts, settings.gpu)
    profile, detection, gpu_reason = gpu.profile, gpu.detection, gpu.unknown
    env_opaque = environment_opaque(facts)
    env_assumed = environment_assumption(facts)
    targets: list[Target] = []
    fork_targets: dict[str, list[Target]] = {}
    results: list[LaunchResult] = []
    tool_results, tool_targets, launches = _tools(facts, settings, is_flag, launches)
    for launch in launches:
        entry = launch.entry_path
        # The parser that reads this launch's flags: Megatron-LM's, or the fork's it runs on.
        parser = parser_for_launch(
            settings.megatron_version,
            facts.path,
            entry,
            launch.argv,
            settings.source_roots,
            launch.env.get("PYTHONPATH"),
        )
        bound = bind_launch(launch.argv, entry, parser)
        fork = parser.fork
        rewritten = world_size_rewritten(fork, bound.given)
        if rewritten is not None:
            launch = replace(launch, world_size=Quantity(None, launch.world_size.how, (), Unknown(rewritten)))
        if parser.release is not None:
            # The launch pins its Megatron-LM (Pai's backends/): its rules are that release's.
            launch = replace(launch, notes=[*launch.notes, f"runs {parser.release}"])
        launch_version = parser.version if parser.release is not None else version
        world = launch.world_size.value
        derived = derive(bound, world if world is not None else launch.world_size.unknown, launch_version)
        memory, memory_unknown = (
            launch_memory(bound, world, derived, profile, launch.nproc_per_node.value)
            if settings.with_memory
            else (None, "not computed")
        )
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
        (targets if rules_fork is None else fork_targets.setdefault(rules_fork, [])).append(target)
        results.append(
            LaunchResult(launch, bound, ctx, detection, profile, vary=vary, code=parser.code, rules_fork=rules_fork)
        )
    # A flag value reading a variable nothing sets is a shell finding only a bound launch shows.
    facts.findings = facts.findings + unset_variable_findings(facts, [r.bound for r in results])
    held = {str(w.span) for tr in tool_results for w in tr.launch.argv if w.span is not None}
    fragment_results = [] if launches else _fragments(facts, settings, is_flag, version, targets, fork_targets, held)
    # Each rule says where it is decided (`scope`) and on which forks it holds (`forks`).
    evaluation = evaluate(scoped(settings.rules, LAUNCH), targets)
    for name, on_fork in fork_targets.items():
        _merge_into(evaluation, evaluate(scoped(settings.rules, LAUNCH, name), on_fork))
    if tool_targets:
        _merge_into(evaluation, evaluate(scoped(settings.rules, TOOL), tool_targets))
    script_rules = scoped(settings.rules, SCRIPT)
    if facts.findings and len(script_rules):
        script = Target(script_context(facts, version), ScriptLocator(facts), None)
        _merge_into(evaluation, evaluate(script_rules, [script]))
    code = frozenset(f for r in results + fragment_results + tool_results for f in r.code)
    return FileResult(
        facts.path,
        facts,
        results,
        evaluation,
        version,
        version_note,
        gpu_reason,
        fragment_results,
        tool_results,
        gpu,
        code,
    )


def tool_rules(rules: RuleSet) -> RuleSet:
    """The rules decided on a program with a parser of its own: those reading only binding problems."""
    return rules.select(scope=LAUNCH).reading_only(TOOL_INPUTS)


# The rules of each scope (LAUNCH, SCRIPT, TOOL) and fork, worked out once per rule set of a run
# rather than once per file: a RuleSet works out what its rules read when first evaluated.
_SCOPED: weakref.WeakKeyDictionary[RuleSet, dict[tuple[str, str | None], RuleSet]] = weakref.WeakKeyDictionary()


def scoped(rules: RuleSet, scope: str, fork: str | None = None) -> RuleSet:
    """The rules of `rules` decided in `scope` that hold on `fork` (TOOL: see `tool_rules`)."""
    known = _SCOPED.setdefault(rules, {})
    key = (scope, fork)
    if key not in known:
        known[key] = tool_rules(rules) if scope == TOOL else rules.select(scope=scope, fork=fork)
    return known[key]


def _tools(
    facts: ScriptFacts, settings: Settings, is_flag: Callable[[str], bool], launches: list[Launch]
) -> tuple[list[LaunchResult], list[Target], list[Launch]]:
    """The programs the file runs that read Megatron-like flags with a parser of their own, bound
    against that parser where the program's source is at hand and says all of it; and the
    launches left. A launch told by its flags alone (its entry point is no Megatron entry
    point's name) whose program parses its own flags is such a program."""
    results: list[LaunchResult] = []
    targets: list[Target] = []
    kept: list[Launch] = []
    candidates = find_tool_commands(facts, is_flag, launches)
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
    is_flag: Callable[[str], bool],
    version: str,
    targets: list[Target],
    fork_targets: dict[str, list[Target]],
    held: set[str],
) -> list[LaunchResult]:
    """The fragments of a file without a launch, each bound and added to the targets as a launch
    is, with a context in which whatever only a launch could tell is unknown. Words that a
    program with a parser of its own reads (`held`, their places) are that program's."""
    results: list[LaunchResult] = []
    for fragment in find_fragments(facts, is_flag):
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


def _merge_into(evaluation: Evaluation, other: Evaluation) -> None:
    evaluation.diagnostics = sorted(evaluation.diagnostics + other.diagnostics, key=Diagnostic.sort_key)
    evaluation.undecided += other.undecided
    evaluation.failures += other.failures
    for k, v in other.outcomes.items():
        evaluation.outcomes.setdefault(k, set()).update(v)
