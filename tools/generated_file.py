"""Writing a generated data file, or checking that it is current (`--check`): what the generators
under tools/ share."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def write_or_check(target: Path, generated: Callable[[], str], doc: str | None, argv: list[str] | None) -> int:
    """Write `generated()` to `target` when it differs; with `--check`, write nothing and return 1
    when it differs (the generator's own script named as the fix)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help=f"write nothing; exit 1 if {target.name} is stale")
    args = ap.parse_args(argv)
    text = generated()
    current = target.read_text(encoding="utf-8") if target.exists() else None
    if args.check:
        if current != text:
            print(f"stale: {target} (run python tools/{ap.prog})")
            return 1
        return 0
    if current != text:
        target.write_text(text, encoding="utf-8")
    return 0
