"""`megalint explain SCRIPT`: for each launch, which rules fired, which passed, and which could
not decide and for want of what.

A linter that stays silent can mean "checked and fine" or "could not tell"; this command
tells them apart. Launch rules are decided once per launch; shell rules once for the script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

from megalint.cli.analysis import add_analysis_options, check_analysis_options
from megalint.cli.check import Runner
from megalint.cli.check import directives as find_directives
from megalint.diagnostics import Diagnostic
from megalint.engine import Evaluation, RuleSet, Target, evaluate
from megalint.engine.evaluate import FAILED, FIRED, NOT_APPLICABLE, PASSED, UNDECIDED
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.errors import ExitCode, InputError, UsageError
from megalint.pipeline import FileResult, lint_text
from megalint.rulecontext.locator import LaunchLocator
from megalint.shell.parse import decode
from megalint.suppress import apply_suppressions

GROUPS = ("fired", "undecided", "failed", "passed", "not-applicable")
HEADINGS = {
    "fired": "fired",
    "undecided": "could not decide",
    "failed": "rule errors",
    "passed": "passed",
    "not-applicable": "not for this Megatron version",
}


@dataclass
class RuleVerdicts:
    """The rules of one target, grouped by what they concluded."""

    groups: dict[str, list[dict]] = field(default_factory=lambda: {g: [] for g in GROUPS})

    def to_json(self) -> dict:
        return {g: v for g, v in self.groups.items()}


def verdicts(rules: RuleSet, ev: Evaluation, suppressed: set[int], not_run_passes: bool = False) -> RuleVerdicts:
    out = RuleVerdicts()
    for rule in sorted(rules, key=lambda r: r.code):
        seen = ev.outcomes.get(rule.code, set())
        entry = {"code": rule.code, "name": rule.name}
        if FIRED in seen:
            entry["findings"] = [_finding(d, id(d) in suppressed) for d in ev.diagnostics if d.code == rule.code]
            out.groups["fired"].append(entry)
        if UNDECIDED in seen:
            missing = {}
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


def _finding(d: Diagnostic, suppressed: bool) -> dict:
    s = d.span
    return {"line": s.start_line, "column": s.start_col, "message": d.message, "suppressed": suppressed}


def explain_result(result: FileResult, rules: RuleSet, text: str) -> dict:
    launch_rules, shell_rules = rules.select(scope=LAUNCH), rules.select(scope=SCRIPT)
    directives = find_directives(result, text, result.path)
    known = {r.code: r.name for r in rules}

    def suppressed_ids(diags: list[Diagnostic]) -> set[int]:
        kept, _ = apply_suppressions(diags, directives, known)
        kept_ids = {id(d) for d in kept}
        return {id(d) for d in diags if id(d) not in kept_ids}

    launches = []
    for i, lr in enumerate(result.launches, 1):
        locator = LaunchLocator(lr.launch, lr.bound, result.facts, lr.detection, result.facts.findings)
        cond = " and ".join(lr.launch.condition) if lr.launch.condition else None
        ev = evaluate(launch_rules, [Target(lr.context, locator, cond)])
        launch = lr.launch
        ws = launch.world_size
        launches.append(
            {
                "index": i,
                "line": launch.span.start_line,
                "launcher": launch.launcher,
                "entry": launch.entry.text if launch.entry is not None else None,
                "condition": cond,
                "world_size": ws.value,
                "world_size_unknown": ws.unknown.reason if ws.unknown is not None else None,
                "gpu": lr.gpu.name if lr.gpu is not None else None,
                "gpu_from": lr.detection.reason if lr.detection is not None else None,
                "rules": verdicts(launch_rules, ev, suppressed_ids(ev.diagnostics)).to_json(),
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
        "launches": launches,
        # The pipeline runs shell rules only when the shell front end found something: a rule
        # that did not run had nothing of its kind to report.
        "script": verdicts(shell_rules, shell_ev, suppressed_ids(shell_diags), not_run_passes=True).to_json(),
    }


def render_text(report: dict) -> str:
    lines = [
        f"{report['path']}: Megatron-LM {report['megatron']}"
        + (f" ({report['megatron_note']})" if report["megatron_note"] else "")
    ]
    if report["gpu_unknown"]:
        lines.append(f"  GPU unknown: {report['gpu_unknown']}")
    if not report["launches"]:
        lines.append("  no Megatron launch found: only the shell rules ran")
    for la in report["launches"]:
        entry = la["entry"] or "?"
        ws = la["world_size"] if la["world_size"] is not None else f"unknown ({la['world_size_unknown']})"
        lines.append("")
        lines.append(f"launch {la['index']} at line {la['line']}: {la['launcher']} {entry}, world size {ws}")
        if la["condition"]:
            lines.append(f"  only when {la['condition']}")
        if la["gpu"]:
            lines.append(f"  GPU: {la['gpu']}" + (f", {la['gpu_from']}" if la["gpu_from"] else ""))
        lines.extend(_groups(la["rules"]))
    lines.append("")
    lines.append("script (shell rules)")
    lines.extend(_groups(report["script"]))
    return "\n".join(lines) + "\n"


def _groups(groups: dict) -> list[str]:
    out = []
    for g in GROUPS:
        items = groups[g]
        if not items:
            continue
        out.append(f"  {HEADINGS[g]} ({len(items)}):")
        if g in ("passed", "not-applicable"):
            out.append("    " + ", ".join(f"{e['code']} {e['name']}" for e in items))
            continue
        for e in items:
            out.append(f"    {e['code']} {e['name']}")
            for f in e.get("findings", []):
                tag = " (suppressed)" if f["suppressed"] else ""
                out.append(f"      {f['line']}:{f['column']}: {f['message']}{tag}")
            for m in e.get("missing", []):
                why = f": {m['reason']}" if m["reason"] else ""
                out.append(f"      needs {m['input']}{why}")
            for err in e.get("errors", []):
                out.append(f"      {err}")
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="megalint explain",
        description="For each launch of a script: the rules that fired, passed, "
        "or could not decide, and the inputs they lacked.",
    )
    p.add_argument("paths", nargs="+", metavar="SCRIPT")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_analysis_options(p)
    args = p.parse_args(argv)
    check_analysis_options(args)
    runner = Runner(args)
    reports = []
    status = ExitCode.CLEAN
    for path in args.paths:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file")
        setup = runner.setup(runner.configs.for_path(path))
        try:
            with open(path, "rb") as fh:
                text = decode(path, fh.read())
        except (InputError, OSError) as exc:
            print(f"megalint: {exc}", file=sys.stderr)
            status = ExitCode.USAGE
            continue
        result = lint_text(path, text, setup.settings)
        reports.append(explain_result(result, setup.selected, text))
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write("\n".join(render_text(r) for r in reports))
    return status
