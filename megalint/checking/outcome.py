"""What checking one script gives (`Outcome`) and what a run does with fixes (`FixMode`).

Kept apart from one_file.py, which runs the pipeline: a run whose every file is in the cache of
results unpickles outcomes and reports them without importing the linter itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from megalint.diagnostics import Diagnostic
from megalint.source import SourceFile


@dataclass(frozen=True)
class FixMode:
    """What becomes of the fixes: nothing, applied (--fix), or shown as a diff (--diff)."""

    fix: bool = False
    diff: bool = False
    unsafe: bool = False  # unsafe fixes too

    @property
    def active(self) -> bool:
        return self.fix or self.diff


@dataclass
class Outcome:
    """What checking one script found, and what its fixes made of it."""

    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    fixed: int = 0
    diff: str = ""
    fixed_text: str | None = None  # the text to write back (with --fix, even when unchanged)
    changed: bool = False
    notes: list[str] = field(default_factory=list)  # why some fixes were not applied
    # A rule whose condition failed on this script (a division by zero, a CEL budget run out):
    # not applied, so the run cannot say the script passed it (exit status 2).
    rule_errors: list[str] = field(default_factory=list)
    # The Python files besides the scripts that decided it (a fork's parser, a program's own):
    # a cached result is used only while they are unchanged.
    code: frozenset[str] = frozenset()
    # What the check asked the file system, and the answers (probes.py): path -> kind of file, 0
    # for none. A sourced file not found then, found now, makes the result stale.
    probes: dict[str, int] = field(default_factory=dict)
