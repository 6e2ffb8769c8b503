"""What the bench records of one file: the Megatron flags it writes, those its launches and
fragments hold (wherever the flag is written: a sourced file too) and whether each tracked flag's
value was resolved, and its findings. Plain data, so that a worker process can send it back."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.realbench.files import TRACKED, Site, normal_flag
from megalint.diagnostics import Diagnostic
from megalint.launch.view import pair_flags
from megalint.pipeline import FileResult, LaunchResult

SiteKey = tuple[str, int, str]  # (real path, line, flag in its normal spelling)
NO_VALUE = "no value word follows the flag (a flag or a list of unknown length comes next)"


@dataclass(frozen=True)
class Finding:
    path: str  # real path
    line: int
    column: int
    code: str
    name: str
    severity: str
    message: str
    assumed: tuple[str, ...] = ()  # the assumptions it rests on (a default of an input, a loaded module)


@dataclass
class FileRecord:
    path: str  # real path
    written: list[Site] = field(default_factory=list)  # Megatron flags the file writes
    launches: int = 0
    fragments: int = 0
    tools: int = 0  # programs that read the flags with a parser of their own
    covered: set[SiteKey] = field(default_factory=set)  # flag sites its launches and fragments hold
    resolved: set[SiteKey] = field(default_factory=set)  # tracked flag sites they resolved to a value
    unresolved: dict[SiteKey, str] = field(default_factory=dict)  # tracked flag sites left unknown, and why
    findings: list[Finding] = field(default_factory=list)
    problem: str | None = None  # why the file could not be checked


def held_flags(results: Iterable[LaunchResult], known: frozenset[str], record: FileRecord) -> None:
    """Add to `record` the Megatron flags the launches or fragments hold, and for tracked flags
    whether the value was resolved. `--flag=value` written as one word counts as resolved when
    the word is known whole."""
    for lr in results:
        for flag, value in pair_flags(lr.launch.argv):
            text, span = flag.text, flag.span
            if text is None or span is None or not text.startswith("--"):
                continue
            name = normal_flag(text)
            if name not in known:
                continue
            # The flag counts where it is used and where its characters were written
            # (`OPTS="--num-layers 2"` … `python pretrain_gpt.py $OPTS`).
            keys = {(os.path.realpath(sp.path), sp.start_line, name) for sp in (span, *flag.origins)}
            record.covered.update(keys)
            if name not in TRACKED:
                continue
            for key in keys:
                if "=" in text or (value is not None and value.text is not None):
                    record.resolved.add(key)
                else:
                    why = value.unknown if value is not None else None
                    record.unresolved.setdefault(key, why.reason if why is not None else NO_VALUE)


def finding(d: Diagnostic) -> Finding:
    return Finding(
        os.path.realpath(d.span.path),
        d.span.start_line,
        d.span.start_col,
        d.code,
        d.name,
        d.severity.value,
        d.message,
        d.assumed,
    )


def record_of(
    path: str, written: list[Site], result: FileResult, diagnostics: list[Diagnostic], known: frozenset[str]
) -> FileRecord:
    """The record of a file megalint checked: `diagnostics` are its findings as the command line
    reports them (after suppressions and severities)."""
    rec = FileRecord(os.path.realpath(path), written, len(result.launches), len(result.fragments), len(result.tools))
    held_flags(list(result.launches) + list(result.fragments) + list(result.tools), known, rec)
    rec.findings = [finding(d) for d in diagnostics]
    return rec
