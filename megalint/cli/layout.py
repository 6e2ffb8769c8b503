"""How wide the text of `megalint rules`, `megalint explain` and `--help` may be, and how it is
made to fit: prose wraps under its own indentation, a table row is cut with `…`."""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Iterable

# What a terminal is taken to be when the output is not one (a pipe, a file, CI): as Ruff and
# argparse assume.
DEFAULT_COLUMNS = 80
MIN_COLUMNS = 20


def columns(is_tty: bool) -> int:
    """The width to fit: $COLUMNS when set, else the terminal's, else 80."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) >= MIN_COLUMNS:
        return int(cols)
    if is_tty:
        return max(MIN_COLUMNS, shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns)
    return DEFAULT_COLUMNS


def wrap(lines: Iterable[str], width: int, hang: int = 2) -> list[str]:
    """Each line wrapped to `width`, its continuation lines indented `hang` more than it."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        out.extend(
            textwrap.wrap(
                line.strip(),
                width=width,
                initial_indent=indent,
                subsequent_indent=indent + " " * hang,
                break_on_hyphens=False,  # rule names and flags stay whole
            )
        )
    return out


def cut(line: str, width: int) -> str:
    """`line` cut to `width`, ending with `…` when something was left out."""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def wrap_shell(line: str, width: int, indent: str = "    ") -> list[str]:
    """A line of a shell example wrapped to `width` as a shell author would: at blanks outside
    quotes, each line but the last ending with ` \\`, so the example still means the same."""
    if len(line) <= width:
        return [line]
    breaks, quote = [], ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == " " and i > 0 and line[i - 1] not in " \\":
            breaks.append(i)
    out, start, first = [], 0, True
    while len(line) - start + (0 if first else len(indent)) > width:
        room = width - 2 - (0 if first else len(indent))
        fits = [b for b in breaks if start < b <= start + room]
        if not fits:
            break  # a word longer than the line: left whole
        end = fits[-1]
        out.append(("" if first else indent) + line[start:end].rstrip() + " \\")
        start, first = end + 1, False
        while start < len(line) and line[start] == " ":
            start += 1
    out.append(("" if first else indent) + line[start:])
    return out
