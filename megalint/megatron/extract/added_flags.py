"""Flags a Megatron fork adds outside Megatron's parser builder, read with libcst.

Forks add flags in their own modules: MindSpeed(-LLM) features' `register_args(self, parser)`,
MindSpeed's legacy `arguments.py`, Pai-Megatron-Patch's `get_patch_args` and its
`patch_if_not_exist(parser, '--x', ...)` (which adds `--x` only when the parser lacks it). Each
`add_argument` call with literal option strings in the files given is one flag; calls that are
not literal are skipped with a warning. MindSpeed's `add_parser_argument_choices_value(parser,
'--x', 'value')` appends a choice to a flag defined elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .model import Flag
from .parser_walk import ParserWalker
from .pymodules import ModuleIndex
from .sources import ExtractError, SourceTree
from .values import NotLiteral, Scope

ADD_IF_ABSENT = "patch_if_not_exist"  # megatron_patch/arguments.py: (parser, option, **add_argument keywords)
ADD_CHOICE = "add_parser_argument_choices_value"  # mindspeed/features_manager/feature.py: (parser, option, value)


@dataclass
class AddedFlags:
    """What a fork's modules add: flags (in file order), flags added only if absent, and added choices."""

    flags: list[Flag] = field(default_factory=list)
    if_absent: list[Flag] = field(default_factory=list)
    choices: list[tuple[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    parsed_files: list[str] = field(default_factory=list)


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> bool:
        self.calls.append(node)
        return True


def _callee(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def read_added_flags(tree: SourceTree, files: list[str]) -> AddedFlags:
    """The flags the modules `files` (POSIX paths relative to `tree`) add to a parser."""
    index = ModuleIndex(tree)
    out = AddedFlags()
    for path in files:
        module = index.get(path[: -len(".py")].replace("/", "."))
        if module is None:
            raise ExtractError(f"{tree.label}: {path} cannot be read")
        walker = ParserWalker(index, module, out.warnings)
        scope = Scope(index, module)
        collector = _Calls()
        module.tree.visit(collector)
        for call in collector.calls:
            name = _callee(call)
            if name == "add_argument":
                walker.add_argument(call, scope, path, None)
            elif name == ADD_IF_ABSENT and len(call.args) >= 2:
                before = len(walker.flags)
                walker.add_argument(call.with_changes(args=call.args[1:]), scope, path, None)
                out.if_absent.extend(walker.flags[before:])
                del walker.flags[before:]
            elif name == ADD_CHOICE and len(call.args) >= 3:
                try:
                    option = walker.evaluator.evaluate(call.args[1].value, scope)
                    value = walker.evaluator.evaluate(call.args[2].value, scope)
                except NotLiteral:
                    out.warnings.append(f"{path}: {ADD_CHOICE} with a value that is not literal skipped")
                    continue
                if isinstance(option, str):
                    out.choices.append((option, value))
        out.flags.extend(walker.flags)
    out.parsed_files = list(index.parsed_files)
    return out
