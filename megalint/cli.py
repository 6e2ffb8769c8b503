"""Command-line entry point: argument parsing and exit codes only.

Exit codes: 0 clean, 1 findings at or above the failure threshold, 2 usage/config/rule-file or
input error, 3 internal error (one line, no traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from megalint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    pass


def _model_cmd(argv: list[str]) -> int:
    from megalint.launch.extract import extract_launches
    from megalint.launch.view import model_json, model_text
    from megalint.shell.analyze import analyze_file
    from megalint.shell.parse import InputError

    p = argparse.ArgumentParser(prog="megalint model", description="Show what megalint understood of a launch script.")
    p.add_argument("script")
    p.add_argument("--json", action="store_true", help="print the model as JSON")
    p.add_argument("--assume", action="append", default=[], metavar="NAME=VALUE",
                   help="give an environment input a value (repeatable)")
    args = p.parse_args(argv)
    assume = _parse_assume(args.assume)
    try:
        facts = analyze_file(args.script, assume=assume)
    except InputError as exc:
        print(f"megalint: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"megalint: {args.script}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    launches = extract_launches(facts)
    if args.json:
        print(json.dumps(model_json(facts, launches), indent=2, ensure_ascii=False))
    else:
        print(model_text(facts, launches))
    return EXIT_CLEAN


def _parse_assume(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--assume takes NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v
    return out


def _rules_cmd(argv: list[str]) -> int:
    from megalint.lint import rule_metas
    from megalint.engine import load_rules

    p = argparse.ArgumentParser(prog="megalint rules", description="List every rule.")
    p.add_argument("--json", action="store_true")
    p.add_argument("--rule-dir", action="append", default=[])
    a = p.parse_args(argv)
    rules = load_rules(a.rule_dir)
    if a.json:
        print(json.dumps([r.to_json() for r in sorted(rules, key=lambda r: r.code)], indent=2, ensure_ascii=False))
        return EXIT_CLEAN
    metas = rule_metas(rules)
    for code in sorted(metas):
        m = metas[code]
        print(f"{code:7} {m.name:40} {m.severity.value:8} {m.summary}")
    return EXIT_CLEAN


def _rule_cmd(argv: list[str]) -> int:
    from megalint.lint import rule_metas
    from megalint.engine import load_rules

    p = argparse.ArgumentParser(prog="megalint rule", description="Show one rule's documentation.")
    p.add_argument("name", help="a rule code or name")
    p.add_argument("--rule-dir", action="append", default=[])
    a = p.parse_args(argv)
    metas = rule_metas(load_rules(a.rule_dir))
    m = metas.get(a.name) or next((x for x in metas.values() if x.name == a.name), None)
    if m is None:
        raise UsageError(f"unknown rule `{a.name}` (see `megalint rules`)")
    print(f"{m.code} {m.name} ({m.severity.value})\n")
    print(m.help_text())
    return EXIT_CLEAN


def _catalogue_cmd(argv: list[str]) -> int:
    from megalint.megatron.extract import catalogue_main

    return catalogue_main(argv)


SUBCOMMANDS = {"model": _model_cmd, "rules": _rules_cmd, "rule": _rule_cmd, "catalogue": _catalogue_cmd}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        from megalint.lint import handle_errors, lint_main, version_text

        if argv and argv[0] in SUBCOMMANDS:
            return handle_errors(SUBCOMMANDS[argv[0]], argv[1:])
        if argv and argv[0] in ("--version", "-V"):
            print(version_text())
            return EXIT_CLEAN
        return handle_errors(lint_main, argv)
    except UsageError as exc:
        print(f"megalint: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # argparse
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `megalint … | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - the one place a user must never see a traceback
        where = getattr(exc, "megalint_file", None)
        print(f"megalint: internal error{f' while checking {where}' if where else ''}: "
              f"{type(exc).__name__}: {exc}. Please report it.", file=sys.stderr)
        return EXIT_INTERNAL
