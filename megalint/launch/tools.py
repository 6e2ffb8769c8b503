"""Commands that run a program with an argument parser of its own and write Megatron's flags.

A checkpoint converter or an evaluation tool (`python convert_ckpt.py --num-layers 64
--target-tensor-parallel-size 2 …`) reads flags that look like Megatron's with a parser of its
own: it is not a Megatron launch, and its flags are not Megatron-LM's to judge. Such a command is
a candidate for the tool check (megatron/tool_parser.py), which binds its words against the
parser the script builds, when that parser can be read.
"""

from __future__ import annotations

from collections.abc import Callable

from megalint.launch.extract import _PY, ENTRY_RE, _base, _Found, _python_entry, _strip_wrappers
from megalint.launch.model import Launch, Quantity
from megalint.shell.facts import CommandRecord, ScriptFacts
from megalint.source import Span

TOOL = "tool"  # Launch.launcher of a command run by a parser of its own


def find_tool_commands(facts: ScriptFacts, is_flag: Callable[[str], bool], launches: list[Launch]) -> list[Launch]:
    """The `python script.py …` commands that are not launches of a Megatron entry point and give
    at least one flag of Megatron's catalogue, once each, in the order they are written."""
    taken = {la.span for la in launches}
    found: dict[Span, Launch] = {}
    for path in facts.paths:
        for rec in path.commands:
            if rec.span in taken or rec.span in found:
                continue
            tool = _tool_command(rec, is_flag)
            if tool is not None:
                found[rec.span] = tool
    return sorted(found.values(), key=lambda la: la.span)


def names_megatron_entry(entry: str | None) -> bool:
    """Whether `entry` (as far as it is known) is named as a Megatron entry point is."""
    return entry is not None and ENTRY_RE.search(entry.replace("…", "")) is not None


def _tool_command(rec: CommandRecord, is_flag: Callable[[str], bool]) -> Launch | None:
    words = list(rec.words)
    i = _strip_wrappers(words, 0)
    if i >= len(words) or not _PY.match(_base(words[i].text) or ""):
        return None
    found = _Found()
    if not _python_entry(words, i, found) or found.entry is None or found.entry_index is None:
        return None
    entry = found.entry.text
    if entry is None or not entry.endswith(".py") or ENTRY_RE.search(entry):
        return None
    argv = tuple(words[found.entry_index + 1 :])
    if not any(is_flag(t.split("=", 1)[0]) for w in argv if (t := w.text) is not None and t.startswith("--")):
        return None
    one = Quantity(1, "a single python process")
    env = dict(rec.env)
    env.update(rec.assigns)
    return Launch(
        launcher=TOOL,
        command=tuple(words),
        entry=found.entry,
        argv=argv,
        env=env,
        nproc_per_node=one,
        nnodes=one,
        world_size=one,
        span=rec.span,
        condition=rec.condition,
    )
