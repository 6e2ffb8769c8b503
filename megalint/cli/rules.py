"""`megalint rules` (every rule) and `megalint rule NAME|CODE` (one rule's documentation)."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

from megalint.cli.layout import columns, cut, wrap_shell
from megalint.diagnostics import Applicability
from megalint.engine import Rule, load_rules
from megalint.errors import ExitCode, UsageError

NAME_COLUMN = 34
FIX_LEGEND = (
    "[*] safe fix: `megalint --fix` applies it",
    "[!] unsafe fix: applied with `--fix --unsafe-fixes`",
)


def rule_text(data: dict[str, Any], width: int = 88) -> str:
    """A rule's documentation as Markdown-flavoured text, in Ruff's order."""
    docs = data["docs"]
    out = [f"# {data['name']} ({data['code']})", ""]
    facts = [f"Category: {data['category']}.", f"Default severity: {data['severity']}."]
    if data.get("status") and data["status"] != "stable":
        facts.append(f"Status: {data['status']}.")
    if data.get("megatron") and data["megatron"] != "*":
        facts.append(f"Megatron-LM versions: {data['megatron']}.")
    fix = data.get("fix")
    facts.append(f"Fix: available ({fix['applicability']})." if fix else "Fix: none.")
    out += [" ".join(facts), ""]

    def para(heading: str, body: str | None, code: bool = False) -> None:
        if not body or not body.strip():
            return
        out.append(f"## {heading}")
        out.append("")
        if code:
            lines = [part for line in body.rstrip("\n").splitlines() for part in wrap_shell(line, width)]
            out.extend(["```bash", *lines, "```"])
        else:
            out.extend(textwrap.wrap(" ".join(body.split()), width=width))
        out.append("")

    para("What it does", docs.get("what") or data.get("summary"))
    para("Why is this bad?", docs.get("why"))
    para("Example", docs.get("example"), code=True)
    para("Use instead", docs.get("use_instead"), code=True)
    para("Fix safety", docs.get("fix_safety"))
    for heading, key in (("Sources", "sources"), ("References", "references")):
        items = docs.get(key) or []
        if items:
            out += [f"## {heading}", ""] + [f"- {x}" for x in items] + [""]
    if data.get("url"):
        out.append(f"Documentation: {data['url']}")
    return "\n".join(out).rstrip("\n") + "\n"


def find_rule(key: str, known: Mapping[str, Rule]) -> Rule:
    """A rule by code (any case) or name."""
    for code, rule in known.items():
        if key.upper() == code.upper() or key == rule.name:
            return rule
    pool = list(known) + [r.name for r in known.values()]
    near = difflib.get_close_matches(key, pool, n=1) or difflib.get_close_matches(key.upper(), list(known), n=1)
    hint = f"; did you mean `{near[0]}`?" if near else "; see `megalint rules`"
    raise UsageError(f"unknown rule `{key}`{hint}")


def rules_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="megalint rules",
        description="List every rule: code, fix, name, default severity, summary. "
        + "; ".join(FIX_LEGEND)
        + ". A row wider than the terminal (80 columns when the output is not one) is cut with `…`.",
    )
    p.add_argument("--json", action="store_true", help="every rule's metadata and documentation as JSON")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    a = p.parse_args(argv)
    known = load_rules(a.rule_dir).by_code()
    if a.json:
        print(json.dumps([known[c].to_json() for c in sorted(known)], indent=2, ensure_ascii=False))
        return ExitCode.CLEAN
    width = columns(sys.stdout.isatty())
    # Most names fit in NAME_COLUMN; a longer one pushes its own summary along.
    name_width = min(NAME_COLUMN, max((len(r.name) for r in known.values()), default=0))
    for code in sorted(known):
        r = known[code]
        line = f"{code:6} {fix_mark(r):3} {r.name:{name_width}} {r.severity.value:8} {r.summary}"
        print(cut(line, width))
    print()
    for legend in FIX_LEGEND:
        print(cut(legend, width))
    return ExitCode.CLEAN


def fix_mark(rule: Rule) -> str:
    """`[*]` for a rule whose fix `--fix` applies (safe), as a finding's `[*]`; `[!]` for one that
    needs --unsafe-fixes; nothing for a rule without one or whose fix is only shown."""
    if rule.fix is None:
        return ""
    return {Applicability.SAFE: "[*]", Applicability.UNSAFE: "[!]"}.get(rule.fix.applicability, "")


def rule_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="megalint rule", description="Show one rule's documentation.")
    p.add_argument("name", help="a rule code or name")
    p.add_argument("--json", action="store_true", help="the rule's metadata and documentation as JSON")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    a = p.parse_args(argv)
    data = find_rule(a.name, load_rules(a.rule_dir).by_code()).to_json()
    if a.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(rule_text(data, columns(sys.stdout.isatty())))
    return ExitCode.CLEAN
