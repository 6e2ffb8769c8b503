"""The argparse parser a program builds for itself, read with libcst (never imported).

Read only when the file says all of it: one `ArgumentParser(...)`, parsed by `.parse_args()` (or
`.parse_known_args()`), every `add_argument` with literal option strings, the parser handed to no
function of another module (which could add flags), no sub-commands, no hand-over to Megatron's own
parser. The result is plain data, so that it can be cached by the file's content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from megalint.megatron.extract.added_flags import read_added_flags
from megalint.megatron.extract.bounds import SourceTooComplex, check_source
from megalint.megatron.extract.sources import DirectoryTree, ExtractError

# Calls that hand the file's work to Megatron's parser: then the command is a launch, not a tool.
_MEGATRON_PARSING = frozenset({"initialize_megatron", "pretrain", "extra_args_provider", "parse_megatron_args"})


class _Shape(cst.CSTVisitor):
    """What the file does with argparse: the names bound to an `ArgumentParser(...)`, how its
    parse is called, and whether the parser leaves the file."""

    def __init__(self) -> None:
        self.parsers: set[str] = set()
        self.parse_calls: set[str] = set()
        self.functions: set[str] = set()
        self.handed_to: set[str] = set()  # functions a parser is passed to
        self.subcommands = False
        self.megatron = False
        self.no_abbrev = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.add(node.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and _name(node.value.func) == "ArgumentParser":
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.parsers.add(target.target.value)
            for arg in node.value.args:
                if arg.keyword is not None and arg.keyword.value == "allow_abbrev":
                    self.no_abbrev = isinstance(arg.value, cst.Name) and arg.value.value == "False"

    def visit_Call(self, node: cst.Call) -> None:
        callee = _name(node.func)
        if callee in ("parse_args", "parse_known_args", "parse_intermixed_args"):
            if isinstance(node.func, cst.Name):
                self.megatron = True  # Megatron's own `parse_args(extra_args_provider)`, imported
            else:
                self.parse_calls.add(callee)
        elif callee == "add_subparsers":
            self.subcommands = True
        elif callee in _MEGATRON_PARSING:
            self.megatron = True
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _MEGATRON_PARSING:
                self.megatron = True
            if isinstance(arg.value, cst.Name):
                self.handed_to.add(f"{callee}:{arg.value.value}")


def _name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def read_own_parser(entry_file: Path) -> dict[str, Any] | None:
    """The program's parser as data (its flags as catalogue entries, and how it parses), or None
    when the file does not say all of it."""
    try:
        text = entry_file.read_text(encoding="utf-8", errors="replace")
        check_source(text)  # libcst's parser must never see what could crash it
        module = cst.parse_module(text)
    except (OSError, SourceTooComplex, cst.ParserSyntaxError, RecursionError):
        return None
    shape = _Shape()
    module.visit(shape)
    if len(shape.parsers) != 1 or not shape.parse_calls or shape.subcommands or shape.megatron:
        return None
    (parser,) = shape.parsers
    if any(h.split(":")[0] not in shape.functions for h in shape.handed_to if h.split(":")[1] == parser):
        return None  # another module may add flags to it
    try:
        added = read_added_flags(DirectoryTree(entry_file.parent), [entry_file.name])
    except ExtractError:
        return None
    if added.warnings or added.if_absent or added.choices:
        return None
    options = [f for f in added.flags if all(s.startswith("-") for s in f.option_strings)]
    return {
        "flags": [f.to_json() for f in options],
        "keeps_unknown": shape.parse_calls == {"parse_known_args"},
        "has_positionals": len(options) < len(added.flags),
        "allows_abbreviations": not shape.no_abbrev,
    }
