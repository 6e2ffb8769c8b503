"""The files of one run: found, read, checked with the setup of their configuration, fixed and
written back; each problem with a file is told as it is met, and the others are still checked."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from megalint.checking.one_file import FixMode, check_text
from megalint.checking.setup import Setups
from megalint.diagnostics import Diagnostic, Severity
from megalint.discovery import STDIN, Job, discover
from megalint.engine import RuleFileError, RuleInfo
from megalint.errors import InputError, UsageError, internal_error_line
from megalint.shell.parse import decode
from megalint.source import SourceFile
from megalint.suppress import suppression_rules

BOM = "\ufeff"


@dataclass(frozen=True)
class RunOptions:
    """Which files a run checks and what becomes of their fixes."""

    paths: Sequence[str] = ()  # scripts and folders; none: the working folder
    force_exclude: bool = False  # the excludes apply to the paths named too
    stdin_filename: str | None = None  # the name standard input is reported under
    fixes: FixMode = FixMode()

    @property
    def fixes_standard_input(self) -> bool:
        """Whether the fixed standard input goes to standard output (the report then goes to standard error)."""
        return self.fixes.fix and not self.fixes.diff and STDIN in self.paths


@dataclass
class RunResult:
    """What a run found in all its files."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    # The suppression rules are described to the outputs even when no file could be linted.
    known: dict[str, RuleInfo] = field(default_factory=lambda: dict(suppression_rules()))
    fixed: int = 0
    any_diff: bool = False
    failing: bool = False  # findings at or above a file's failure threshold
    input_errors: int = 0  # files that do not exist or cannot be read
    internal_errors: int = 0  # files megalint failed on


def check_files(
    setups: Setups,
    options: RunOptions,
    *,
    stdin: TextIO,
    note: Callable[[str], None],
    write: Callable[[str], None],
) -> RunResult:
    """Check the files of `options.paths`; `note` is told of each problem with a file as it is met,
    `write` (standard output) takes each diff and the fixed standard input."""
    run = RunResult()

    def missing(p: str) -> None:
        note(f"{p}: no such file or folder")
        run.input_errors += 1

    for job in discover(list(options.paths) or ["."], setups.excluded, missing, options.force_exclude):
        shown, cfg_path = _names(job, options.stdin_filename)
        cfg = setups.configs.for_path(cfg_path)
        if job.real is None and options.force_exclude and options.stdin_filename and setups.excluded(cfg_path, False):
            if options.fixes_standard_input:
                write(stdin.read())
            continue
        setup = setups.setup(cfg)
        run.known.update(setup.known)
        try:
            data = stdin.buffer.read() if job.real is None else _read(job.real)
            text = decode(shown, data)
        except InputError as exc:
            note(str(exc))
            run.input_errors += 1
            continue
        except OSError as exc:
            note(f"{shown}: cannot read: {exc.strerror or exc}")
            run.input_errors += 1
            continue
        bom = BOM if data.startswith(BOM.encode()) else ""
        try:
            outcome = check_text(text, shown, setup, options.fixes)
            for message in outcome.notes:
                note(message)
            if outcome.fixed_text is not None:
                if job.real is None:
                    write(outcome.fixed_text)
                elif outcome.changed:
                    _write_back(job.real, bom + outcome.fixed_text)
        except (UsageError, RuleFileError):
            raise
        except Exception as exc:  # noqa: BLE001 - one bad file must not hide the others' findings
            note(internal_error_line(exc, shown))
            run.internal_errors += 1
            continue
        if outcome.diff:
            run.any_diff = True
            write(outcome.diff)
        run.fixed += outcome.fixed
        run.sources.update(outcome.sources)
        run.diagnostics.extend(outcome.diagnostics)
        level = None if setup.threshold == "none" else Severity(setup.threshold).rank
        run.failing = run.failing or (level is not None and any(d.severity.rank >= level for d in outcome.diagnostics))
    return run


def _names(job: Job, stdin_filename: str | None) -> tuple[str, str]:
    """(the name findings carry, the path whose configuration applies)."""
    if job.real is not None:
        return job.path, job.real
    if stdin_filename:
        return os.path.normpath(stdin_filename), stdin_filename
    return STDIN, os.path.join(os.getcwd(), STDIN)


def _read(path: str) -> bytes:
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder")
    with open(path, "rb") as fh:
        return fh.read()


def _write_back(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
