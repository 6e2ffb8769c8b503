"""The whole pipeline for one script: parse → evaluate → launches → bind → context → rules.

`lint_text` is a pure function of the script text and the settings; the CLI, the tests and
the rule examples all go through it, so an example that passes as a test behaves the same
way on the command line.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from megalint import probes
from megalint.diagnostics import Diagnostic
from megalint.engine import Evaluation, RuleSet, Target
from megalint.engine.evaluate import evaluate
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.launch.extract import extract_launches
from megalint.launch.fragments import MIN_FLAGS, find_fragments
from megalint.launch.model import Launch
from megalint.launch.tools import TOOL, find_tool_commands
from megalint.megatron.catalogue_choice import catalogue_for, version_for
from megalint.rulecontext.script import ScriptLocator, script_context
from megalint.shell.analyze import analyze_parsed
from megalint.shell.budget import MAX_FILE_SIZE, MAX_LAUNCHES, too_large_facts, too_many_launches, utf8_size
from megalint.shell.facts import ScriptFacts
from megalint.shell.parse import parse_text
from megalint.source import SourceFile

if TYPE_CHECKING:
    # Binding a launch needs the catalogue, the memory model, the GPU table and the forks'
    # parsers: `launches.py` is imported for a file with something to bind, not for every script.
    from megalint.engine.assumptions import Vary
    from megalint.hardware.detect import GpuChoice
    from megalint.hardware.profiles import Detection, GpuProfile
    from megalint.megatron.bound import BoundArgs


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
    # How the GPU is chosen (the hint that won, the ones that lost), worked out when first asked:
    # a script without a launch needs it only to be explained, or for a `--gpu` its hints overrule.
    gpu_choice: Callable[[], GpuChoice] = field(repr=False, compare=False)
    version_note: str | None = None
    # Arguments the file sets without a launch (launcher "fragment"), checked when it has none.
    fragments: list[LaunchResult] = field(default_factory=list)
    # Programs that read Megatron-like flags with a parser of their own (launcher "tool").
    tools: list[LaunchResult] = field(default_factory=list)
    # The files besides the scripts read that decided the findings (a fork's parser, an entry
    # point's provider, a program's own parser, a sourced file that could not be read as a
    # script): a result resting on them is stale once one changes.
    code: frozenset[str] = frozenset()

    @property
    def gpu(self) -> GpuChoice:
        return self.gpu_choice()

    @property
    def gpu_note(self) -> str | None:
        """Why the GPU is not known, or None."""
        return self.gpu.unknown

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.evaluation.diagnostics

    @property
    def sources(self) -> dict[str, SourceFile]:
        return self.facts.sources


def lint_text(path: str, text: str, settings: Settings) -> FileResult:
    with probes.one_check():
        return _lint_text(path, text, settings)


def _lint_text(path: str, text: str, settings: Settings) -> FileResult:
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
    """Everything after the shell front end: the launches, the fragments and the programs with a
    parser of their own, each bound (`launches.py`); then the rules, each on the targets of its
    scope (Megatron-LM launches, fork launches, programs, the script)."""
    version, version_note = version_for(settings.megatron_version)

    def is_flag(option: str) -> bool:
        # The catalogue is loaded for a file that writes flags, not for every script.
        return option in catalogue_for(settings.megatron_version)[0]

    @cache
    def gpu_choice() -> GpuChoice:
        from megalint.hardware.detect import choose_gpu

        return choose_gpu(facts, settings.gpu)

    candidates = find_tool_commands(facts, is_flag, launches)
    fragments = None if launches or candidates else find_fragments(facts, is_flag)
    if fragments == []:
        # Nothing in the file is read by Megatron's parser or a program's own: nothing to bind.
        bound = Bound()
    else:
        # Imported here: binding needs the catalogues, the forks' parsers, the GPU table and the
        # memory model, and most shell scripts launch nothing.
        from megalint.pipeline.launches import bind_all

        bound = bind_all(facts, launches, candidates, fragments, settings, version, gpu_choice(), is_flag)
    # Each rule says where it is decided (`scope`) and on which forks it holds (`forks`).
    evaluation = evaluate(scoped(settings.rules, LAUNCH), bound.targets)
    for name, on_fork in bound.fork_targets.items():
        _merge_into(evaluation, evaluate(scoped(settings.rules, LAUNCH, name), on_fork))
    if bound.tool_targets:
        _merge_into(evaluation, evaluate(scoped(settings.rules, TOOL), bound.tool_targets))
    script_rules = scoped(settings.rules, SCRIPT)
    if facts.findings and len(script_rules):
        script = Target(script_context(facts, version), ScriptLocator(facts), None)
        _merge_into(evaluation, evaluate(script_rules, [script]))
    code = frozenset(f for r in bound.launches + bound.fragments + bound.tools for f in r.code) | {
        u.file for u in facts.unread_sources if u.file is not None
    }
    return FileResult(
        facts.path,
        facts,
        bound.launches,
        evaluation,
        version,
        gpu_choice,
        version_note,
        bound.fragments,
        bound.tools,
        code,
    )


@dataclass
class Bound:
    """The launches, fragments and programs of one file, bound, with the targets the rules decide."""

    launches: list[LaunchResult] = field(default_factory=list)
    fragments: list[LaunchResult] = field(default_factory=list)
    tools: list[LaunchResult] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)  # Megatron-LM's launches and fragments
    fork_targets: dict[str, list[Target]] = field(default_factory=dict)  # by the fork whose rules decide them
    tool_targets: list[Target] = field(default_factory=list)


def tool_rules(rules: RuleSet) -> RuleSet:
    """The rules decided on a program with a parser of its own: those reading only binding problems."""
    from megalint.rulecontext.tool import TOOL_INPUTS  # the binding's problems: imported with the binding

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


def _merge_into(evaluation: Evaluation, other: Evaluation) -> None:
    evaluation.diagnostics = sorted(evaluation.diagnostics + other.diagnostics, key=Diagnostic.sort_key)
    evaluation.undecided += other.undecided
    evaluation.failures += other.failures
    for k, v in other.outcomes.items():
        evaluation.outcomes.setdefault(k, set()).update(v)
