"""The figures of one repository from the records of its files.

A flag written in one file may be held by a launch of another (a config sourced by the
launcher), so coverage and resolution are decided over the whole repository: a flag site is
held when some launch or fragment of the repository holds it, and a tracked flag is resolved
when some launch or fragment resolved it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.realbench.count import FileRecord, Finding, SiteKey
from bench.realbench.files import TRACKED

NOT_HELD = "not held by a launch or fragment megalint recognised"
Rule = tuple[str, str]  # (code, name)


@dataclass
class Figures:
    """What the bench prints for one repository (or, summed, for all of them)."""

    name: str
    files: int = 0
    left_out: list[str] = field(default_factory=list)  # shell-like files not selected that write Megatron flags
    launches: int = 0
    launch_files: int = 0  # files with at least one launch
    fragment_files: int = 0  # files checked as fragments
    tool_files: int = 0  # files running a program that reads the flags with a parser of its own
    flag_files: int = 0  # files that write Megatron flags
    unchecked: list[str] = field(default_factory=list)  # flag files none of whose flags is held
    tracked_written: int = 0
    tracked_resolved: int = 0
    unresolved: list[tuple[SiteKey, str]] = field(default_factory=list)
    errors: Counter[Rule] = field(default_factory=Counter)
    warnings: Counter[Rule] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)  # errors and warnings
    assumed: list[Finding] = field(default_factory=list)  # the errors and warnings resting on an assumption
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was not checked)
    notes: list[str] = field(default_factory=list)  # e.g. the checkout is not at the recorded commit

    def add(self, other: Figures) -> None:
        """Sum `other` into these figures."""
        for name in (
            "files",
            "launches",
            "launch_files",
            "fragment_files",
            "tool_files",
            "flag_files",
            "tracked_written",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tracked_resolved += other.tracked_resolved
        self.left_out += other.left_out
        self.unchecked += other.unchecked
        self.unresolved += other.unresolved
        self.errors.update(other.errors)
        self.warnings.update(other.warnings)
        self.findings += other.findings
        self.assumed += other.assumed
        self.problems += other.problems
        self.notes += other.notes


def aggregate(name: str, records: Iterable[FileRecord], left_out: Iterable[str] = ()) -> Figures:
    recs = list(records)
    fig = Figures(name, files=len(recs), left_out=list(left_out))
    covered: set[SiteKey] = set()
    resolved: set[SiteKey] = set()
    why: dict[SiteKey, str] = {}
    for r in recs:
        covered |= r.covered
        resolved |= r.resolved
        for k, reason in r.unresolved.items():
            why.setdefault(k, reason)
    for r in recs:
        if r.problem is not None:
            fig.problems.append((r.path, r.problem))
        fig.launches += r.launches
        fig.launch_files += r.launches > 0
        fig.fragment_files += r.fragments > 0
        fig.tool_files += r.tools > 0
        keys = [(r.path, line, flag) for line, flag in r.written]
        if keys:
            fig.flag_files += 1
            if not any(k in covered for k in keys):
                fig.unchecked.append(r.path)
        for k in keys:
            if k[2] not in TRACKED:
                continue
            fig.tracked_written += 1
            if k in resolved:
                fig.tracked_resolved += 1
            else:
                fig.unresolved.append((k, why.get(k, NOT_HELD)))
        for f in r.findings:
            if f.severity == "error":
                fig.errors[(f.code, f.name)] += 1
            elif f.severity == "warning":
                fig.warnings[(f.code, f.name)] += 1
            else:
                continue
            fig.findings.append(f)
            if f.assumed:
                fig.assumed.append(f)
    return fig


def assumption_kind(text: str) -> str:
    """`a default` (`${NNODES:-2}`) or `a loaded module` (`module load`)."""
    return "a loaded module" if text.startswith("assuming") else "a default"


def kind_of(reason: str) -> str:
    """The kind of an unresolved value's reason, so that the report groups `$4 …` with `$5 …`."""
    r = reason.lower()
    kinds = (
        (("argument given to the script", "script argument"), 'a script argument ($1, "$@")'),
        (("loop",), "changed in a loop"),
        (("sourced", "may be set by"), "a sourced file that is absent or outside the tree"),
        (("slurm", "pbs"), "a scheduler variable without a literal header"),
        (("environment",), "an environment input"),
        (("output of", "run time", "queried"), "a command's output"),
        (("placeholder",), "a template placeholder"),
        (("branches",), "differs between branches"),
        ((NOT_HELD,), NOT_HELD),
        (("no value word follows",), "no value word follows the flag"),
    )
    for needles, kind in kinds:
        if any(n in r for n in needles):
            return kind
    return "other: " + reason[:60]


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "n/a"
