"""Reading a variable: set on this path, set elsewhere in the script (so empty here), an input
from the environment or the scheduler, an argument of the script, or left unknown by a `source`
that was not read; and a variable's value as the one word a command's environment holds.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from megalint.shell.facts import ASSUME_BASH_SOURCE, ASSUME_PWD_VAR
from megalint.shell.interp.state import (
    UNKNOWN_PREFIX,
    UNSOURCED,
    Frame,
    Scalar,
    State,
    Var,
    array_values,
)
from megalint.shell.parse import ParsedScript
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator


def var_scalar(
    ev: Evaluator, name: str, st: State, frame: Frame, span: Span | None
) -> tuple[Scalar | None, Unknown | None, bool]:
    """(segments, unknown, is_set) of `$name` read at `span`. is_set is False for a variable the
    script never set; exactly one of segments and unknown is None."""
    if name.isdigit():
        i = int(name)
        if i == 0:
            return (Segment(ev.script_path, span),), None, True
        positional = ev.positional(st)
        if positional is None:
            return None, Unknown(f"${name} is an argument given to the script", span), False
        if i - 1 < len(positional):
            return positional[i - 1], None, True
        return (), None, False
    if name.startswith(UNKNOWN_PREFIX) and name in ev.unknown_tokens:
        return None, ev.unknown_tokens[name], True
    var = ev.get(st, name)
    if var is None and is_internal(ev, name, frame, span):
        return (), None, False
    if var is None and name in ("PWD", "BASH_SOURCE"):
        return script_place(ev, name, frame, span), None, True
    if var is None:
        unsourced = ev.get(st, UNSOURCED)
        if unsourced is not None:
            return None, Unknown(f"${name} may be set by {unsourced.unknown}", span), False
        return None, env_unknown(name, span), False
    if var.unknown is not None:
        return None, var.unknown, True
    if var.array is not None:
        vals = array_values(var.array, only_zero=True)
        return (vals[0] if vals else ()), None, True
    return (var.scalar or ()), None, True


def script_place(ev: Evaluator, name: str, frame: Frame, span: Span | None) -> Scalar:
    """`$PWD` (the script's folder) and `$BASH_SOURCE` (the path of the file being read), each
    with the assumption that makes it so."""
    if name == "PWD":
        return (Segment(ev.script_dir, span, assumed=ASSUME_PWD_VAR),)
    return (Segment(os.path.abspath(frame.ps.source.path), span, assumed=ASSUME_BASH_SOURCE),)


def env_unknown(name: str, span: Span | None) -> Unknown:
    """Why a variable the script never sets is not known: who sets it."""
    if name.startswith("SLURM_"):
        return Unknown(f"${name} is set by SLURM at run time (no literal #SBATCH header gives it)", span)
    if name.startswith("PBS_"):
        return Unknown(f"${name} is set by PBS at run time", span)
    return Unknown(f"${name} is not set in the script; it comes from the environment", span)


def is_internal(ev: Evaluator, name: str, frame: Frame, span: Span | None) -> bool:
    """A variable the script sets itself (earlier in the file, on another path, or in a file
    it sourced) is empty when unset here, as bash says; only the others are inputs."""
    if name in ev.sourced_names:
        return True
    path = frame.ps.source.path
    table = ev.first_assignments.get(path)
    if table is None:
        table = ev.first_assignments[path] = FirstAssignments(frame.ps)
    first = table.get(name)
    return first is not None and span is not None and span.path == path and first < span.start


def sets_after(ev: Evaluator, name: str, frame: Frame, span: Span | None) -> bool:
    """Whether the file being read sets `name` only after `span`: `X=${X:-v}` in a sourced file
    reads X as the file's own input, though the script (through that file) sets it."""
    path = frame.ps.source.path
    table = ev.first_assignments.get(path)
    if table is None:
        table = ev.first_assignments[path] = FirstAssignments(frame.ps)
    first = table.get(name)
    return first is not None and span is not None and span.path == path and first >= span.start


class FirstAssignments:
    """name -> the character offset from which the script has set it (its first assignment's
    end, or the start of the first loop over it). Worked out per name on first ask: a script
    asks about the few inputs it reads, not about every name it assigns."""

    def __init__(self, ps: ParsedScript) -> None:
        self.ps = ps
        self._by_name: dict[bytes, list[int]] | None = None
        self._found: dict[str, int | None] = {}

    def get(self, name: str) -> int | None:
        if name in self._found:
            return self._found[name]
        by_name = self._by_name
        if by_name is None:
            # names as written (bytes): a variable's name is ASCII, so its str encodes to them
            by_name = self._by_name = {}
            for start, raw in self.ps.assigned_names().items():
                by_name.setdefault(raw, []).append(start)
        first = None
        nodes = self.ps.assigned_nodes()
        for start in by_name.get(name.encode("utf-8", "replace"), ()):
            node, loop = nodes[start]
            parent = node.parent
            if parent is None:
                continue
            # `X=${X:-1}` reads X before setting it: an assignment counts from its end (it
            # starts where its name does); a loop sets its variable from the loop's start.
            at = parent.start_byte if loop else parent.end_byte
            if first is None or at < first:
                first = at
        if first is not None:
            first = self.ps.source.char_offset(first)
        self._found[name] = first
        return first


def input_var(ev: Evaluator, name: str, span: Span, empty: bool = False) -> Var:
    """`export X` / `local X` of a variable: one object for every path, so paths stay alike."""
    key = (name, span, empty)
    var = ev.input_vars.get(key)
    if var is None:
        var = ev.input_vars[key] = (
            Var(scalar=(), site=span) if empty else Var(unknown=env_unknown(name, span), site=span)
        )
    return var


def exported(ev: Evaluator, var: Var) -> Var:
    """The same variable, exported: one object per variable, so paths stay alike."""
    got = ev.exported_of.get(id(var))
    if got is None or got[0] is not var:
        got = ev.exported_of[id(var)] = (var, Var(var.scalar, var.array, var.unknown, True, var.site))
    return got[1]


def var_word(ev: Evaluator, var: Var) -> Word:
    """A variable's value as one word (an exported variable in a command's environment)."""
    got = ev.word_of.get(id(var))
    if got is None or got[0] is not var:
        got = ev.word_of[id(var)] = (var, _var_word(var))
    return got[1]


def _var_word(var: Var) -> Word:
    if var.unknown is not None:
        return Word((Segment(None, var.site, (), var.unknown),))
    if var.scalar is not None:
        return Word(tuple(var.scalar))
    if var.array is not None:
        first = array_values(var.array)
        return Word(tuple(first[0]) if first else ())
    return Word(())
