"""The flags an upstream entry point other than `pretrain_*.py` adds through `extra_args_provider=`.

`tasks/main.py`, `examples/…/*.py` and `tools/*.py` hand Megatron's `parse_args` a function that
adds their own flags (megatron/training/arguments.py `parse_args`, which calls the provider after
the base parser). When the entry file is at hand and its provider is a function of that file that
only adds literal flags (`group.add_argument('--x', …)`), the launch's parser is the catalogue plus
those flags, read with libcst (never imported) and kept by the extraction cache. Any other provider (one imported from elsewhere,
one that calls helpers) is not read: the launch keeps the check of removed and renamed flags only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from megalint.megatron.extract.added_flags import read_added_flags
from megalint.megatron.extract.bounds import MAX_SOURCE_CHARS, SourceTooComplex, check_source
from megalint.megatron.extract.sources import DirectoryTree, ExtractError

# What a provider may call and still be read in full.
_PARSER_CALLS = frozenset({"add_argument", "add_argument_group", "add_mutually_exclusive_group"})


class _Providers(cst.CSTVisitor):
    """The names passed as `extra_args_provider=` and the functions the file defines."""

    def __init__(self) -> None:
        self.named: set[str] = set()
        self.functions: dict[str, cst.FunctionDef] = {}

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "extra_args_provider":
            if isinstance(node.value, cst.Name) and node.value.value != "None":
                self.named.add(node.value.value)
            elif not isinstance(node.value, cst.Name):
                self.named.add("")  # a provider that is not a plain name: not read

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions[node.name.value] = node


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str | None] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self.names.append(func.attr.value if isinstance(func, cst.Attribute) else None)


def _readable(provider: cst.FunctionDef) -> bool:
    calls = _Calls()
    provider.visit(calls)
    return all(name in _PARSER_CALLS for name in calls.names)


def provider_flags(root: Path, entry_file: Path) -> tuple[dict[str, Any], list[Path]]:
    """({"flags": the JSON of each flag `entry_file`'s own provider adds}, the files read); the
    flags are None when the file has no provider, or one that cannot be read in full. Plain data,
    kept by the extraction cache: a later run reads neither libcst nor the file."""
    none: dict[str, Any] = {"flags": None}
    try:
        if entry_file.stat().st_size > 4 * MAX_SOURCE_CHARS:
            return none, [entry_file]
        text = entry_file.read_text(encoding="utf-8", errors="replace")
        check_source(text)  # libcst's parser must never see what could crash it
        module = cst.parse_module(text)
    except (OSError, SourceTooComplex, cst.ParserSyntaxError):
        return none, [entry_file]
    found = _Providers()
    module.visit(found)
    if not found.named or any(
        name not in found.functions or not _readable(found.functions[name]) for name in found.named
    ):
        return none, [entry_file]
    try:
        rel = entry_file.resolve().relative_to(root.resolve()).as_posix()
        added = read_added_flags(DirectoryTree(root), [rel])
    except (ValueError, ExtractError):
        return none, [entry_file]
    read = [entry_file, *(root / p for p in added.parsed_files if root / p != entry_file)]
    return {"flags": [f.to_json() for f in added.flags]}, read
