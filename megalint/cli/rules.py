"""`megalint rules` (every rule) and `megalint rule NAME|CODE` (one rule's documentation)."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Mapping

from megalint import lazy_re
from megalint.cli.layout import columns, cut, wrap, wrap_shell
from megalint.diagnostics import Applicability
from megalint.engine import Rule, load_rules
from megalint.errors import ExitCode, UsageError
from megalint.reports.rule_page import rule_page

NAME_COLUMN = 34
CODE_INDENT = "    "
FIX_LEGEND = (
    "[*] safe fix: `megalint --fix` applies it",
    "[!] unsafe fix: applied with `--fix --unsafe-fixes`",
)


_TABLE_RULE = lazy_re.compile(r"^\|[-| :]*\|$")


def page_text(markdown: str, width: int) -> str:
    """A rule's page (docs/rules/<name>.md) as plain text for a terminal of `width` columns: the
    same words, without Markdown's marks; prose wraps, code is indented and keeps its meaning."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines():
        if fence is not None:
            if line == fence:
                fence = None
            else:
                out.extend(wrap_shell(CODE_INDENT + line, width, CODE_INDENT * 2))
            continue
        if line.startswith("```"):
            fence = line[: len(line) - len(line.lstrip("`"))]
        elif line.startswith("<!--") or _TABLE_RULE.match(line):
            continue
        elif line.startswith("|"):  # a two-column table of facts: `| Code | `ML101` |`
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            out.extend(wrap([f"{cells[0]}: {' | '.join(cells[1:])}"], width, hang=4))
        elif line.startswith("#"):
            out.append(line.lstrip("#").strip())
        elif line.startswith("> "):
            out.extend(wrap([line[2:].replace("**", "")], width, hang=0))
        else:
            out.extend(wrap([line], width, hang=2 if line.startswith("- ") else 0))
        if len(out) > 1 and out[-1] == out[-2] == "":
            out.pop()  # a line left out between two blank ones
    return "\n".join(out).rstrip("\n") + "\n"


def find_rule(key: str, known: Mapping[str, Rule]) -> Rule:
    """A rule by code (any case) or name."""
    for code, rule in known.items():
        if key.upper() == code.upper() or key == rule.name:
            return rule
    pool = list(known) + [r.name for r in known.values()]
    near = difflib.get_close_matches(key, pool, n=3) or difflib.get_close_matches(key.upper(), list(known), n=3)
    shown = [f"`{n}`" for n in near]
    hint = f"; did you mean {' or '.join(shown)}?" if near else "; see `megalint rules`"
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
    p = argparse.ArgumentParser(
        prog="megalint rule",
        description="Show one rule's documentation: its page docs/rules/NAME.md, as plain text.",
    )
    p.add_argument("name", help="a rule code or name")
    p.add_argument("--json", action="store_true", help="the rule's metadata and documentation as JSON")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    a = p.parse_args(argv)
    rule = find_rule(a.name, load_rules(a.rule_dir).by_code())
    if a.json:
        print(json.dumps(rule.to_json(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(page_text(rule_page(rule), columns(sys.stdout.isatty())))
    return ExitCode.CLEAN
