"""The parser of a program that reads its flags itself (launch/tools.py), read with libcst.

A checkpoint converter that writes `--num-layers 64 --target-tensor-parallel-size 2` builds an
`argparse.ArgumentParser` of its own and calls `parse_args()` on it; it is never imported. Its
parser is read only when the file says all of it: every `add_argument` has literal option
strings, the parser is handed to no function of another module (which could add flags), there
are no sub-commands. Anything else leaves the command unchecked, never wrongly checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import libcst as cst

from megalint.megatron.bind import bind
from megalint.megatron.bound import BoundArgs, ProblemKind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.extract.added_flags import read_added_flags
from megalint.megatron.extract.bounds import SourceTooComplex, check_source
from megalint.megatron.extract.sources import DirectoryTree, ExtractError
from megalint.megatron.forks import repository_root
from megalint.shell.values import Word

# Calls that hand the file's work to Megatron's parser: then the command is a launch, not a tool.
_MEGATRON_PARSING = frozenset({"initialize_megatron", "pretrain", "extra_args_provider", "parse_megatron_args"})
_MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class ToolParser:
    """The parser of one program: its flags as a catalogue, how messages name it, and what
    argparse does with a word it does not know (`parse_known_args` keeps it for the program)."""

    catalogue: Catalogue
    name: str
    entry_file: Path
    keeps_unknown: bool
    has_positionals: bool
    allows_abbreviations: bool


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


def _entry_file(script: str | None, entry: str, source_roots: Sequence[str]) -> Path | None:
    """The file `entry` names, looked up where the command may run from: the script's folder,
    the repository it is in (up to its top), and the folders the user named."""
    path = Path(entry)
    if path.is_absolute():
        return path if path.is_file() else None
    folders: list[Path] = []
    if script:
        here = Path(script).resolve().parent
        folders.append(here)
        root = repository_root(here)
        for folder in here.parents:
            folders.append(folder)
            if folder == root or (folder / ".git").exists():
                break
    folders.extend(Path(r).resolve() for r in source_roots)
    return next((f / path for f in folders if (f / path).is_file()), None)


def tool_parser(script: str | None, entry: str | None, source_roots: Sequence[str] = ()) -> ToolParser | None:
    """The parser of the program `entry` (as the command writes it), or None when it is not at
    hand or cannot be read in full."""
    if not entry or "$" in entry:
        return None
    found = _entry_file(script, entry, source_roots)
    if found is None:
        return None
    try:
        stat = found.stat()
    except OSError:
        return None
    # Read once per version of the file: a process that lints again after an edit reads it again.
    return _read(found.resolve(), stat.st_mtime_ns, stat.st_size)


@cache
def _read(entry_file: Path, _mtime_ns: int, size: int) -> ToolParser | None:
    try:
        if size > _MAX_BYTES:
            return None
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
    catalogue = Catalogue.from_dict(
        {"format": 1, "version": "HEAD", "flags": [f.to_json() for f in options]}, origin=str(entry_file)
    )
    return ToolParser(
        catalogue,
        entry_file.name,
        entry_file,
        keeps_unknown=shape.parse_calls == {"parse_known_args"},
        has_positionals=len(options) < len(added.flags),
        allows_abbreviations=not shape.no_abbrev,
    )


def bind_tool(argv: Sequence[Word], parser: ToolParser) -> BoundArgs | None:
    """`argv` bound as the program's own parser reads it; None when a word is a prefix argparse
    could take as an abbreviation of one of its flags, which the binding cannot follow."""
    bound = bind(argv, parser.catalogue)
    options = parser.catalogue.option_strings()
    problems = []
    for p in bound.problems:
        if p.kind is ProblemKind.UNKNOWN_FLAG and p.option is not None:
            written = p.option.split("=", 1)[0]
            if parser.allows_abbreviations and any(o.startswith(written) for o in options):
                return None
            if parser.keeps_unknown:
                continue  # parse_known_args hands it back to the program
        if p.kind is ProblemKind.POSITIONAL and (parser.keeps_unknown or parser.has_positionals):
            continue
        if p.kind is ProblemKind.OTHER_VERSION:
            p = replace(p, kind=ProblemKind.UNKNOWN_FLAG, history=None)
        problems.append(p)
    bound.problems = problems
    return bound
