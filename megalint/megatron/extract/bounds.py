"""What Python source megalint hands to libcst: bounded in size and nesting first.

libcst's native parser has no limits of its own: 10,000 nested parentheses or `not not … 1`
overflow its stack (a segmentation fault, which no `except` catches), `- - … 1` or nested
lambdas take gigabytes, and its memory grows faster than the nesting. The source read here comes
from a tree anyone may hand to `megalint catalogue --from`, or a launch script's entry file, so it
is measured first with CPython's own parser, which is written in C, refuses what nests past its
limits with a SyntaxError, and costs a fraction of libcst: a file longer than MAX_SOURCE_CHARS, one
CPython cannot read, or one whose syntax tree is deeper than MAX_DEPTH is not parsed.
"""

from __future__ import annotations

import ast
import warnings

from megalint.errors import InputError

# Megatron-LM's largest file is about 150 KB; libcst takes some 1 GB per MB of source.
MAX_SOURCE_CHARS = 1 << 20
# Real code nests a few dozen levels; at 200 libcst still takes under 100 MB for any shape.
MAX_DEPTH = 200


class SourceTooComplex(InputError):
    """Source megalint will not hand to libcst; the message says why (with line:col when known)."""


def check_source(text: str) -> None:
    """Raise SourceTooComplex unless `text` is Python small and shallow enough for libcst."""
    if len(text) > MAX_SOURCE_CHARS:
        raise SourceTooComplex(f"longer than {MAX_SOURCE_CHARS:,} characters")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like: not our concern
            tree = ast.parse(text)
    except SyntaxError as exc:
        where = f"{exc.lineno}:{max(exc.offset or 1, 1)}: " if exc.lineno else ""
        raise SourceTooComplex(f"{where}cannot be parsed: {exc.msg}") from None
    except (RecursionError, MemoryError):  # CPython's parser gives up on deep nesting with these
        raise SourceTooComplex("nested too deeply for Python's own parser") from None
    except ValueError as exc:  # a NUL byte
        raise SourceTooComplex(f"cannot be parsed: {exc}") from None
    deepest = _depth(tree)
    if deepest is not None:
        raise SourceTooComplex(f"{deepest.lineno}:{deepest.col_offset + 1}: nested more than {MAX_DEPTH} levels deep")


def _depth(tree: ast.AST) -> ast.expr | ast.stmt | None:
    """The first node deeper than MAX_DEPTH (walked without recursion), or None."""
    todo: list[tuple[ast.AST, int]] = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > MAX_DEPTH and isinstance(node, (ast.expr, ast.stmt)):
            return node
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None
