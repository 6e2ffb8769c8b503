"""`megalint model SCRIPT`: what megalint understood of a launch script."""

from __future__ import annotations

import argparse
import json

from megalint.cli.analysis import parse_assume
from megalint.errors import ExitCode, InputError, UsageError
from megalint.launch.extract import extract_launches
from megalint.launch.view import model_json, model_text
from megalint.shell.analyze import analyze_file


def main(argv: list[str]) -> int:
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
