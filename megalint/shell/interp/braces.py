"""Brace expansion: `{a,b}`, `{1..3}`, `{1..9..2}`, `{a..e}`, `x{1,2}y`, as bash does it.

Bash expands braces before anything else, and only in an unquoted word (not in an assignment's
value): `for TP in {1..3}` runs with 1, 2 and 3. tree-sitter-bash gives a numeric range its own
node (`brace_expression`) and leaves the others as a run of words (`{`, `a,b`, `}`) inside a
concatenation. An alternative written in the script is shown where it is written; a number of a
range, which is not written, at the range. A group with an expansion in it (`{$A,b}`), nested
groups and anything past MAX_FIELDS words is unknown rather than guessed.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell.interp import splitting
from megalint.shell.interp.pieces import Piece, SegmentPiece
from megalint.shell.interp.state import MAX_FIELDS, Frame, Node, State
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

_RANGE = lazy_re.compile(r"\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?\}\Z")
_SPECIAL = frozenset("\\'\"$`{}")

# One alternative of a group: its text and where it is shown.
Alternative = tuple[str, Span]
Part = Node | list[Alternative]


class _NotFollowed(Exception):
    """A brace group megalint does not expand; never leaves this module."""


def expand(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[Word] | None:
    """The words a word with a brace expansion makes; None when it has none."""
    try:
        parts = _parts(node, frame)
    except _NotFollowed as exc:
        span = frame.ps.span(node)
        return [Word((), Unknown(f"a brace expansion megalint does not follow ({exc})", span))]
    if parts is None:
        return None
    count = 1
    for part in parts:
        if isinstance(part, list):
            count *= max(len(part), 1)
            if count > MAX_FIELDS:
                span = frame.ps.span(node)
                return [Word((), Unknown(f"more than {MAX_FIELDS} words from one brace expansion", span))]
    from megalint.shell.interp import expansion  # expansion.py calls this module

    # Each part as the choice of the pieces it may give: a node one, a group one per alternative.
    choices: list[list[list[Piece]]] = []
    for part in parts:
        if isinstance(part, list):
            choices.append([[SegmentPiece(Segment(text, span), False, None)] if text else [] for text, span in part])
        else:
            choices.append([expansion.pieces(ev, part, st, frame, quoted=False, eid=None)])
    words: list[Word] = []
    for combination in itertools.product(*choices):
        words.extend(splitting.split(ev, [p for pieces in combination for p in pieces], node, frame))
    return words


def _parts(node: Node, frame: Frame) -> list[Part] | None:
    children = list(node.children) if node.type == "concatenation" else [node]
    parts: list[Part] = []
    found = False
    i = 0
    while i < len(children):
        child = children[i]
        if child.type == "brace_expression":
            alternatives = _range(frame.ps.text(child), frame.ps.span(child))
            if alternatives is not None:
                parts.append(alternatives)
                found = True
                i += 1
                continue
        elif child.type == "word" and frame.ps.text(child) == "{":
            close = _closing(children, i, frame)
            if close is not None:
                group = _group(children[i : close + 1], frame)
                if group is not None:
                    parts.append(group)
                    found = True
                    i = close + 1
                    continue
        parts.append(child)
        i += 1
    return parts if found else None


def _closing(children: list[Node], i: int, frame: Frame) -> int | None:
    depth = 0
    for j in range(i, len(children)):
        if children[j].type == "word":
            text = frame.ps.text(children[j])
            depth += text.count("{") - text.count("}")
            if depth == 0 and j > i:
                return j if text == "}" else None
    return None


def _group(nodes: list[Node], frame: Frame) -> list[Alternative] | None:
    ps = frame.ps
    inner_nodes = nodes[1:-1]
    if not inner_nodes or any(n.end_byte != m.start_byte for n, m in itertools.pairwise(nodes)):
        return None
    start = ps.source.char_offset(nodes[0].start_byte)
    end = ps.source.char_offset(nodes[-1].end_byte)
    text = ps.source.text[start:end]
    span = ps.source.span(start, end)
    ranged = _range(text, span)
    if ranged is not None:
        return ranged
    inner = text[1:-1]
    plain = all(n.type == "word" for n in inner_nodes) and not (_SPECIAL & set(inner))
    if "," not in inner:
        return None  # `{a}`, `{}`, `{$A}`: no expansion, the braces stay
    if not plain:
        raise _NotFollowed("it holds an expansion, a quote or a nested group")
    alternatives: list[Alternative] = []
    a = start + 1
    for piece in inner.split(","):
        alternatives.append((piece, ps.source.span(a, a + len(piece)) if piece else span))
        a += len(piece) + 1
    return alternatives


def _range(text: str, span: Span) -> list[Alternative] | None:
    m = _RANGE.match(text)
    if m is None:
        return None
    first, last, step_text = m.group(1), m.group(2), m.group(3)
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step >= MAX_FIELDS:
            raise _NotFollowed(f"more than {MAX_FIELDS} words")
        width = max(len(first), len(last)) if _padded(first) or _padded(last) else 0
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [(_pad(v, width), span) for v in values]
    if first.isalpha() and last.isalpha():
        x, y = ord(first), ord(last)
        codes = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [(chr(c), span) for c in codes]
    return None


def _padded(number: str) -> bool:
    digits = number.lstrip("-")
    return len(digits) > 1 and digits.startswith("0")


def _pad(value: int, width: int) -> str:
    if not width:
        return str(value)
    return ("-" if value < 0 else "") + str(abs(value)).zfill(width - (value < 0))
