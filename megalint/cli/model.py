"""`megalint model SCRIPT`: what megalint understood of a launch script."""

from __future__ import annotations

import argparse
import json

from megalint.checking.files import read_script
from megalint.cli.analysis import parse_assume
from megalint.discovery import shown_name
from megalint.errors import ExitCode, InputError, UsageError
from megalint.hardware.detect import choose_gpu
from megalint.launch.extract import extract_launches
from megalint.launch.view import model_json, model_text
from megalint.reports.gpu import gpu_json, gpu_lines
from megalint.shell.analyze import analyze_file
from megalint.shell.budget import MAX_FILE_SIZE


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
    p.add_argument("--gpu", help="GPU model when the script does not say (h100, a100-80gb, v100 …)")
    args = p.parse_args(argv)
    assume = parse_assume(args.assume)
    shown = shown_name(args.script)
    try:
        data = read_script(args.script, shown)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if (size := len(data)) > MAX_FILE_SIZE:
        # As the check itself (shell/budget.py): reading it would take minutes and gigabytes.
        raise UsageError(f"{shown}: the file is too large to model ({size:,} bytes; the limit is {MAX_FILE_SIZE:,})")
    facts = analyze_file(shown, data, assume=assume)
    launches = extract_launches(facts)
    try:
        gpu = gpu_json(choose_gpu(facts, args.gpu))
    except ValueError as exc:
        raise UsageError(f"--gpu: {exc}") from None
    if args.json:
        print(json.dumps({**model_json(facts, launches), "gpu": gpu}, indent=2, ensure_ascii=False))
    else:
        # The GPU is the script's, like its headers: under the first line, before the launches.
        first, newline, rest = model_text(facts, launches).partition("\n")
        print("\n".join([first, *gpu_lines(gpu)]) + newline + rest)
    return ExitCode.CLEAN
