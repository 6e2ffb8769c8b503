"""`megalint explain SCRIPT…`: for each launch, which rules fired, which passed, and which could
not decide and for want of what (megalint/reports/verdicts.py), as text or JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys

from megalint.checking.files import read_script
from megalint.cli.analysis import add_analysis_options, analysis_setups, check_analysis_options
from megalint.cli.layout import DEFAULT_COLUMNS, columns, wrap
from megalint.discovery import shown_name
from megalint.errors import ExitCode, InputError, UsageError
from megalint.launch.fragments import FRAGMENT
from megalint.launch.tools import TOOL
from megalint.pipeline import lint_text
from megalint.reports.gpu import gpu_lines
from megalint.reports.verdicts import GROUPS, ExplainJson, RuleJson, explain_result
from megalint.source import decode

HEADINGS = {
    "fired": "fired",
    "undecided": "could not decide",
    "failed": "rule errors",
    "passed": "passed",
    "not-applicable": "not for this Megatron version",
}


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
    setups = analysis_setups(args)
    reports: list[ExplainJson] = []
    status = ExitCode.CLEAN
    for path in args.paths:
        if not os.path.exists(path):
            raise UsageError(f"{shown_name(path)}: no such file")
        setup = setups.for_path(path)
        shown = shown_name(path)
        try:
            text = decode(shown, read_script(path, shown))
        except InputError as exc:
            print(f"megalint: {exc}", file=sys.stderr)
            status = ExitCode.USAGE
            continue
        except OSError as exc:
            print(f"megalint: {shown}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            status = ExitCode.USAGE
            continue
        result = lint_text(shown, text, setup.settings)
        reports.append(explain_result(result, setup.selected, text))
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False))
    else:
        width = columns(sys.stdout.isatty())
        sys.stdout.write("\n".join(render_text(r, width) for r in reports))
    return status


def render_text(report: ExplainJson, width: int = DEFAULT_COLUMNS) -> str:
    """The report for a terminal, each line wrapped to `width`."""
    lines = [
        f"{report['path']}: Megatron-LM {report['megatron']}"
        + (f" ({report['megatron_note']})" if report["megatron_note"] else "")
    ]
    if report["gpu"] is not None:
        lines.extend(gpu_lines(report["gpu"]))
    elif report["gpu_unknown"]:
        lines.append(f"  GPU unknown: {report['gpu_unknown']}")
    for a in report["assumptions"]:
        lines.append(f"  assumed: {a['text']} ({a['at']})")
    if not [la for la in report["launches"] if la["launcher"] != TOOL]:
        lines.append("  no Megatron launch found: only the shell rules ran")
    for la in report["launches"]:
        entry = la["entry"] or "?"
        ws = la["world_size"] if la["world_size"] is not None else f"unknown ({la['world_size_unknown']})"
        lines.append("")
        if la["launcher"] == FRAGMENT:
            lines.append(
                f"fragment {la['index']} at line {la['line']}: the arguments in {la['variable']}, with no launch: "
                "the checks that need one could not decide"
            )
            for why in la["left_to_launch"]:
                lines.append(f"  left to the launch: {why}")
        elif la["launcher"] == TOOL:
            lines.append(
                f"program {la['index']} at line {la['line']}: python {entry}, which reads its flags with a parser "
                f"of its own ({la['tool']}): only the checks of its flags ran"
            )
        else:
            lines.append(f"launch {la['index']} at line {la['line']}: {la['launcher']} {entry}, world size {ws}")
        lines.extend(f"  note: {n}" for n in la["notes"])
        if la["condition"]:
            lines.append(f"  only when {la['condition']}")
        if la["gpu"]:
            lines.append(f"  GPU: {la['gpu']}" + (f", {la['gpu_from']}" if la["gpu_from"] else ""))
        lines.extend(_groups(la["rules"]))
    lines.append("")
    lines.append("script (shell rules)")
    lines.extend(_groups(report["script"]))
    return "\n".join(wrap(lines, width)) + "\n"


def _groups(groups: dict[str, list[RuleJson]]) -> list[str]:
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
                for a in f["assumed"]:
                    out.append(f"        rests on: {a}")
            for m in e.get("missing", []):
                why = f": {m['reason']}" if m["reason"] else ""
                out.append(f"      needs {m['input']}{why}")
            for err in e.get("errors", []):
                out.append(f"      {err}")
    return out
