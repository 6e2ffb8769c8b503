"""Where a bad example must be reported: `expect:` entries, or caret lines in the script itself.

A caret line is a bash comment under the reported text, naming the rule, as ruff's and Semgrep's
fixtures mark theirs:

    torchrun pretrain_gpt.py --num-layers 2 --moe-ffn-hidden-size 1024
    #                                                             ^^^^ ML680

It marks the nearest line above it that is not itself a caret line: the finding starts at the
first caret's column and ends after the last one, on that line. The script is unchanged for bash.
"""

from __future__ import annotations

from dataclasses import dataclass

from megalint import lazy_re
from megalint.engine.rule import Expected

_CARETS = lazy_re.compile(r"^(?P<lead>[ \t]*#[ \t]*)(?P<carets>\^+)[ \t]+(?P<code>[A-Z]+[0-9]+)[ \t]*$")


@dataclass(frozen=True)
class CaretProblem:
    """A caret line of an annotated example that does not say what it should."""

    offset: int  # of the caret line in the script
    message: str


def caret_expectations(script: str, code: str) -> tuple[list[Expected], list[CaretProblem]]:
    """The positions the caret lines of `script` mark for the rule `code`, and what is wrong with them."""
    expected: list[Expected] = []
    problems: list[CaretProblem] = []
    if "^" not in script:  # most examples: no line to look at
        return expected, problems
    marked: int | None = None  # the line the next caret line marks
    offset = 0
    for number, text in enumerate(script.split("\n"), start=1):
        m = _CARETS.match(text)
        if m is None:
            marked = number
        elif marked is None:
            problems.append(CaretProblem(offset, "a caret line marks the line above it, and this one has none"))
        elif m["code"] != code:
            problems.append(CaretProblem(offset, f"the caret line names {m['code']}, not this rule's {code}"))
        elif script.split("\n")[marked - 1].rstrip().endswith("\\"):
            problems.append(
                CaretProblem(offset, "a caret line cannot follow a line that ends in a backslash: bash ends it there")
            )
        else:
            start = len(m["lead"]) + 1
            e = Expected(marked, start, marked, start + len(m["carets"]))
            problem = outside(script, e)
            if problem:
                problems.append(CaretProblem(offset, f"the carets at {e} {problem}"))
            else:
                expected.append(e)
        offset += len(text) + 1
    return expected, problems


def outside(script: str, e: Expected) -> str | None:
    """Why an expected position does not lie in the script, or None."""
    lines = script.split("\n")
    if script.endswith("\n"):
        lines = lines[:-1]

    def check(line: int, col: int) -> str | None:
        if line > len(lines):
            return f"is outside the example script ({len(lines)} line{'s' if len(lines) != 1 else ''})"
        if col > len(lines[line - 1]) + 1:
            return f"is outside line {line} ({len(lines[line - 1])} characters)"
        return None

    problem = check(e.line, e.column)
    if problem is None and e.end_line is not None:
        problem = check(e.end_line, e.end_column or 1)
        if problem is None and (e.end_line, e.end_column or 1) < (e.line, e.column):
            problem = "ends before it starts"
    return problem
