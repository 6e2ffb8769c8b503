"""`megalint catalogue --from PATH [-o FILE] [--version-label X]`: write a flag catalogue as JSON.

Exit codes: 0 written; 2 bad input (no such path, not a Megatron-LM tree or wheel, unwritable output file);
3 an internal error of the extractor.
"""

from __future__ import annotations

import argparse
import json
import sys

from megalint.errors import ExitCode
from megalint.megatron.extract import extract_catalogue
from megalint.megatron.extract.sources import ExtractError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="megalint catalogue",
        description="Extract the Megatron-LM command-line flag catalogue from a source tree or a megatron-core wheel "
        "(>= 0.17), by reading megatron/training/arguments.py and the config dataclasses it expands. "
        "Nothing is imported or executed.",
    )
    p.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="PATH",
        help="a Megatron-LM checkout (the directory holding megatron/) or a megatron-core wheel file",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the JSON here instead of standard output")
    p.add_argument(
        "--version-label",
        metavar="X",
        help="the catalogue's version label (default: the wheel's version or megatron/core/package_info.py)",
    )
    p.add_argument("--quiet", action="store_true", help="do not print extraction warnings to standard error")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        catalogue = extract_catalogue(args.source, version_label=args.version_label)
    except ExtractError as exc:
        print(f"megalint catalogue: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except Exception as exc:  # a defect in the extractor, not in the input: say so in one line
        print(
            f"megalint catalogue: internal error while reading {args.source}: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return ExitCode.INTERNAL
    if not args.quiet:
        for w in catalogue.warnings:
            print(f"megalint catalogue: warning: {w}", file=sys.stderr)
    text = json.dumps(catalogue.to_json(), indent=1, ensure_ascii=False) + "\n"
    if args.output and args.output != "-":
        try:
            with open(args.output, "w", encoding="utf-8") as fp:
                fp.write(text)
        except OSError as exc:
            print(f"megalint catalogue: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return ExitCode.USAGE
        print(
            f"megalint catalogue: {len(catalogue.flags)} flags of {catalogue.version} written to {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return ExitCode.CLEAN
