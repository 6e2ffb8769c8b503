"""Command-line entry point: argument parsing and exit codes only."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("megalint: not yet wired", file=sys.stderr)
    return 3
