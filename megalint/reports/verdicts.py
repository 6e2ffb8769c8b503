"""For each launch of a script, which rules fired, which passed, and which could not decide and
for want of what (`megalint explain`).

A linter that stays silent can mean "checked and fine" or "could not tell"; this report tells
them apart. Launch rules are decided once per launch; shell rules once for the script.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from megalint.checking.one_file import directives as find_directives
from megalint.diagnostics import Diagnostic
from megalint.engine import Evaluation, RuleSet, Target
from megalint.engine.evaluate import FAILED, FIRED, NOT_APPLICABLE, PASSED, UNDECIDED, evaluate
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.pipeline import FileResult, scoped, tool_rules
from megalint.reports.gpu import GpuJson, gpu_json
from megalint.rulecontext.locator import LaunchLocator
from megalint.shell.facts import ShellFindingKind
from megalint.suppress import apply_suppressions

GROUPS = ("fired", "undecided", "failed", "passed", "not-applicable")


class FindingJson(TypedDict):
    line: int
    column: int
    severity: str
    message: str
    suppressed: bool
    assumed: list[str]  # the assumptions the finding rests on


class MissingJson(TypedDict):
    input: str
    reason: str | None


class _RuleJsonBase(TypedDict):
    code: str
    name: str


class RuleJson(_RuleJsonBase, total=False):
    """One rule in one group; a rule that fired and could not decide on other paths carries its
    findings in both groups."""

    findings: list[FindingJson]
    missing: list[MissingJson]
    errors: list[str]


class LaunchJson(TypedDict):
    index: int
    line: int
    launcher: str  # "fragment" for arguments the file sets without a launch
    variable: str | None  # the variable a fragment is the value of
    left_to_launch: list[str]  # of a fragment: what only its launch can judge, and why
    tool: str | None  # of a program with a parser of its own (launcher "tool"): the program
    notes: list[str]  # what the launch model assumed or could not read of this launch
    entry: str | None
    condition: str | None
    world_size: int | None
    world_size_unknown: str | None
    gpu: str | None
    gpu_from: str | None
    rules: dict[str, list[RuleJson]]


class AssumptionJson(TypedDict):
    text: str
    at: str  # path:line:column


class ExplainJson(TypedDict):
    path: str
    megatron: str
    megatron_note: str | None
    gpu_unknown: str | None
    gpu: GpuJson | None  # how the GPU was chosen: the hint that won and why, the ones that lost
    assumptions: list[AssumptionJson]
    launches: list[LaunchJson]
    script: dict[str, list[RuleJson]]


@dataclass
class RuleVerdicts:
    """The rules of one target, grouped by what they concluded."""

    groups: dict[str, list[RuleJson]] = field(default_factory=lambda: {g: [] for g in GROUPS})

    def to_json(self) -> dict[str, list[RuleJson]]:
        return {g: v for g, v in self.groups.items()}

    def left_to_launch(self, left: list[tuple[str, str]]) -> RuleVerdicts:
        """A fragment's rules whose problems only the launch can judge: undecided, not passed."""
        reasons: dict[str, list[str]] = {}
        for rule, why in left:
            reasons.setdefault(rule, []).append(why)
        for entry in [e for e in self.groups["passed"] if e["name"] in reasons]:
            self.groups["passed"].remove(entry)
            missing: list[MissingJson] = [{"input": "the launch", "reason": why} for why in reasons[entry["name"]]]
            self.groups["undecided"].append({**entry, "missing": missing})
        self.groups["undecided"].sort(key=lambda e: e["code"])
        return self


def verdicts(rules: RuleSet, ev: Evaluation, suppressed: set[int], not_run_passes: bool = False) -> RuleVerdicts:
    out = RuleVerdicts()
    for rule in sorted(rules, key=lambda r: r.code):
        seen = ev.outcomes.get(rule.code, set())
        entry: RuleJson = {"code": rule.code, "name": rule.name}
        if FIRED in seen:
            entry["findings"] = [_finding(d, id(d) in suppressed) for d in ev.diagnostics if d.code == rule.code]
            out.groups["fired"].append(entry)
        if UNDECIDED in seen:
            missing: dict[str, str | None] = {}
            for u in ev.undecided:
                if u.rule.code == rule.code:
                    for m in u.missing:
                        missing.setdefault(m.path, m.reason)
            out.groups["undecided"].append(
                {**entry, "missing": [{"input": p, "reason": r} for p, r in missing.items()]}
            )
        if FAILED in seen:
            out.groups["failed"].append(
                {**entry, "errors": [f.message for f in ev.failures if f.rule.code == rule.code]}
            )
        if seen == {PASSED} or (not seen and not_run_passes):
            out.groups["passed"].append(entry)
        elif seen == {NOT_APPLICABLE}:
            out.groups["not-applicable"].append(entry)
    return out


def _finding(d: Diagnostic, suppressed: bool) -> FindingJson:
    s = d.span
    return {
        "line": s.start_line,
        "column": s.start_col,
        "severity": d.severity.value,
        "message": d.message,
        "suppressed": suppressed,
        "assumed": list(d.assumed),
    }


def explain_result(result: FileResult, rules: RuleSet, text: str) -> ExplainJson:
    """The verdicts of `rules` on the script `text`, which the pipeline's `result` is of."""
    shell_rules = rules.select(scope=SCRIPT)
    directives = find_directives(result, text, result.path)
    known = {r.code: r.name for r in rules}

    def suppressed_ids(diags: list[Diagnostic]) -> set[int]:
        kept, _ = apply_suppressions(diags, directives, known)
        kept_ids = {id(d) for d in kept}
        return {id(d) for d in diags if id(d) not in kept_ids}

    launches: list[LaunchJson] = []
    on_tools = tool_rules(rules)
    for i, lr in enumerate(result.launches + result.fragments + result.tools, 1):
        locator = LaunchLocator(lr.launch, lr.bound, result.facts, lr.detection, result.facts.findings)
        cond = " and ".join(lr.launch.condition) if lr.launch.condition else None
        # The rules the check itself decided this launch by: a fork's own set when it has one.
        decided = on_tools if lr.tool is not None else scoped(rules, LAUNCH, lr.rules_fork)
        ev = evaluate(decided, [Target(lr.context, locator, cond, lr.vary)])
        launch = lr.launch
        ws = launch.world_size
        launches.append(
            {
                "index": i,
                "line": launch.span.start_line,
                "launcher": launch.launcher,
                "variable": launch.variable,
                "left_to_launch": [why for _rule, why in lr.left_to_launch],
                "tool": lr.tool,
                "notes": list(launch.notes),
                "entry": launch.entry_name,
                "condition": cond,
                "world_size": ws.value,
                "world_size_unknown": ws.unknown.reason if ws.unknown is not None else None,
                "gpu": lr.gpu.name if lr.gpu is not None else None,
                "gpu_from": lr.detection.reason if lr.detection is not None else None,
                "rules": verdicts(decided, ev, suppressed_ids(ev.diagnostics))
                .left_to_launch(lr.left_to_launch)
                .to_json(),
            }
        )
    shell_diags = [d for d in result.diagnostics if d.code in {r.code for r in shell_rules}]
    shell_ev = Evaluation(
        diagnostics=shell_diags,
        undecided=[u for u in result.evaluation.undecided if u.rule.scope == SCRIPT],
        failures=[f for f in result.evaluation.failures if f.rule.scope == SCRIPT],
        outcomes={k: v for k, v in result.evaluation.outcomes.items() if k in {r.code for r in shell_rules}},
    )
    return {
        "path": result.path,
        "megatron": result.version,
        "megatron_note": result.version_note,
        "gpu_unknown": result.gpu_note,
        "gpu": gpu_json(result.gpu) if result.gpu is not None else None,
        "assumptions": [{"text": a.text, "at": str(a.span)} for a in result.facts.assumptions],
        "launches": launches,
        # The pipeline runs shell rules only when the shell front end found something: a rule
        # that did not run had nothing of its kind to report.
        "script": _unread_if_too_large(
            result, verdicts(shell_rules, shell_ev, suppressed_ids(shell_diags), not_run_passes=True)
        ).to_json(),
    }


def _unread_if_too_large(result: FileResult, script: RuleVerdicts) -> RuleVerdicts:
    """A file over the size limit is not parsed (shell/budget.py): its shell rules did not pass,
    they could not look."""
    too_large = [f for f in result.facts.findings if f.kind is ShellFindingKind.FILE_TOO_LARGE and "size" in f.data]
    if not too_large:
        return script
    why = too_large[0].message
    for entry in script.groups["passed"]:
        script.groups["undecided"].append({**entry, "missing": [{"input": "the script", "reason": why}]})
    script.groups["passed"] = []
    script.groups["undecided"].sort(key=lambda e: e["code"])
    return script
