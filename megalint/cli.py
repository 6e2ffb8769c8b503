"""Command-line entry point: the subcommands and the one place errors become exit codes.

Exit codes: 0 clean, 1 findings at or above the failure threshold, 2 usage/config/rule-file or
input error, 3 internal error (one line, no traceback).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import sys
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING

from megalint.errors import ExitCode, UsageError, internal_error_line

if TYPE_CHECKING:
    from megalint.engine import Rule, RuleSet


def _model_cmd(argv: list[str]) -> int:
    from megalint.errors import InputError
    from megalint.launch.extract import extract_launches
    from megalint.launch.view import model_json, model_text
    from megalint.lint import parse_assume
    from megalint.shell.analyze import analyze_file

    p = argparse.ArgumentParser(prog="megalint model", description="Show what megalint understood of a launch script.")
    p.add_argument("script")
    p.add_argument("--json", action="store_true", help="print the model as JSON")
    p.add_argument(
        "--assume",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="give an environment input a value (repeatable)",
    )
    args = p.parse_args(argv)
    assume = parse_assume(args.assume)
    try:
        facts = analyze_file(args.script, assume=assume)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{args.script}: cannot read: {exc.strerror or exc}") from None
    launches = extract_launches(facts)
    if args.json:
        print(json.dumps(model_json(facts, launches), indent=2, ensure_ascii=False))
    else:
        print(model_text(facts, launches))
    return ExitCode.CLEAN


# -- rule documentation --------------------------------------------------------------------


def _load(rule_dirs: list[str]) -> RuleSet:
    from megalint.engine import load_rules

    return load_rules(rule_dirs)


def rule_text(data: dict, width: int = 88) -> str:
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
            out.extend(["```bash", body.rstrip("\n"), "```"])
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


def _rules_cmd(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="megalint rules", description="List every rule.")
    p.add_argument("--json", action="store_true", help="every rule's metadata and documentation as JSON")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    a = p.parse_args(argv)
    known = _load(a.rule_dir).by_code()
    if a.json:
        print(json.dumps([known[c].to_json() for c in sorted(known)], indent=2, ensure_ascii=False))
        return ExitCode.CLEAN
    for code in sorted(known):
        r = known[code]
        fix = "[*]" if r.fix else "   "
        print(f"{code:6} {fix} {r.name:34} {r.severity.value:8} {r.summary}")
    return ExitCode.CLEAN


def _rule_cmd(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="megalint rule", description="Show one rule's documentation.")
    p.add_argument("name", help="a rule code or name")
    p.add_argument("--json", action="store_true", help="the rule's metadata and documentation as JSON")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    a = p.parse_args(argv)
    data = find_rule(a.name, _load(a.rule_dir).by_code()).to_json()
    if a.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(rule_text(data))
    return ExitCode.CLEAN


def _explain_cmd(argv: list[str]) -> int:
    from megalint.explain import explain_main

    return explain_main(argv)


def _catalogue_cmd(argv: list[str]) -> int:
    from megalint.megatron.extract import catalogue_main

    return catalogue_main(argv)


MEMORY_MODULE = "megalint.memory.cli"


def _memory_cmd(argv: list[str]) -> int:
    # The memory report lives with the estimator, in megalint/memory/cli.py (`memory_main(argv)`).
    if importlib.util.find_spec(MEMORY_MODULE) is None:
        raise UsageError("`megalint memory` is not available in this build")
    from megalint.memory.cli import memory_main  # type: ignore[import-not-found]

    return memory_main(argv)


SUBCOMMANDS = {
    "model": _model_cmd,
    "rules": _rules_cmd,
    "rule": _rule_cmd,
    "explain": _explain_cmd,
    "catalogue": _catalogue_cmd,
    "memory": _memory_cmd,
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        from megalint.lint import lint_main, run_guarded, version_text

        if argv and argv[0] in SUBCOMMANDS:
            return run_guarded(SUBCOMMANDS[argv[0]], argv[1:])
        if argv and argv[0] in ("--version", "-V"):
            print(version_text())
            return ExitCode.CLEAN
        return run_guarded(lint_main, argv)
    except SystemExit as exc:  # argparse: --help is 0, a bad option 2
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.USAGE
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # `megalint … | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return ExitCode.CLEAN
    except Exception as exc:  # noqa: BLE001 - the one place a user must never see a traceback
        print(f"megalint: {internal_error_line(exc)}", file=sys.stderr)
        return ExitCode.INTERNAL
