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
    """A line of a shell example wrapped to `width` as a shell author would, so that it still means
    the same: at a blank outside quotes, the line ending with ` \\` and the next one indented; at a
    blank inside double quotes, where bash also drops a backslash-newline, the next line starting
    at its first column so the string keeps its text; in a comment, the next line a comment too.
    A line whose only blanks are in single quotes, or a word longer than the line, is left whole."""
    if len(line) <= width:
        return [line]
    margin = line[: len(line) - len(line.lstrip(" "))]
    breaks: dict[int, str] = {}  # position of a blank: WORD, QUOTED or COMMENT
    quote = ""
    for i, ch in enumerate(line):
        after_blank = i == 0 or line[i - 1] == " "
        if quote == "#":
            if ch == " " and not after_blank:
                breaks[i] = _COMMENT
        elif quote == "'":
            quote = "" if ch == "'" else quote
        elif quote == '"':
            if ch == '"' and line[i - 1] != "\\":
                quote = ""
            elif ch == " ":
                breaks[i] = _QUOTED
        elif ch in "'\"" or (ch == "#" and after_blank):
            quote = ch
        elif ch == " " and not after_blank and line[i - 1] != "\\":
            breaks[i] = _WORD
    out: list[str] = []
    start, lead = 0, ""
    while len(lead) + len(line) - start > width:
        fits = [b for b in breaks if start < b <= start + width - 2 - len(lead)]
        if not fits:
            break
        end = fits[-1]
        kind = breaks[end]
        if kind == _QUOTED:  # the blank stays, nothing is added before the rest
            out.append(lead + line[start : end + 1] + "\\")
            start, lead = end + 1, ""
            continue
        out.append(lead + line[start:end].rstrip() + (" \\" if kind == _WORD else ""))
        start, lead = end + 1, (margin + indent if kind == _WORD else margin + "# ")
        while start < len(line) and line[start] == " ":
            start += 1
    out.append(lead + line[start:])
    return out


_WORD, _QUOTED, _COMMENT = "word", "quoted", "comment"
