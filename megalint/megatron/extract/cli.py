"""`megalint catalogue --from PATH [-o FILE] [--version-label X]`: write a flag catalogue as JSON.

Exit codes: 0 written; 2 bad input (no such path, not a Megatron-LM tree or wheel, unwritable output file);
3 an internal error of the extractor.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn

from .sources import ExtractError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits with 2 already; keep its message short and ours
        self.print_usage(sys.stderr)
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
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
    from . import extract_catalogue

    try:
        args = build_parser().parse_args(argv)
    except _UsageError as exc:
        print(f"megalint catalogue: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    try:
        catalogue = extract_catalogue(args.source, version_label=args.version_label)
    except ExtractError as exc:
        print(f"megalint catalogue: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a defect in the extractor, not in the input: say so in one line
        print(
            f"megalint catalogue: internal error while reading {args.source}: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 3
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
            return 2
        print(
            f"megalint catalogue: {len(catalogue.flags)} flags of {catalogue.version} written to {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0
