"""The bench's printed figures and its JSON file of findings."""

from __future__ import annotations

import json
import os
from collections import Counter

from bench.realbench.aggregate import Figures, Rule, assumption_kind, kind_of, share


def _rel(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def _rules(title: str, counts: Counter[Rule], fig: Figures, severity: str, root: str, show: int) -> list[str]:
    lines = [f"  {title}: {sum(counts.values())}"]
    for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"    {code} {name}: {n}")
        if show:
            where = [f for f in fig.findings if f.code == code and f.severity == severity]
            lines += [f"        {_rel(f.path, root)}:{f.line}:{f.column}" for f in where[:show]]
    return lines


def render(fig: Figures, root: str, show: int, title: str) -> str:
    """One repository's block (or the totals' block)."""
    lines = [title]
    lines += [f"  warning: {n}" for n in fig.notes]
    lines.append(f"  files (shell-like, mentioning Megatron): {fig.files}")
    lines.append(f"  shell-like files left out that write Megatron flags: {len(fig.left_out)}")
    lines += [f"        {_rel(p, root)}" for p in fig.left_out[:show]]
    lines.append(f"  launches found: {fig.launches} in {fig.launch_files} files")
    lines.append(f"  fragment files checked: {fig.fragment_files}")
    lines.append(f"  files checked against a program's own parser: {fig.tool_files}")
    lines.append(
        f"  files writing Megatron flags: {fig.flag_files}; checked by nothing: {len(fig.unchecked)} "
        f"({share(len(fig.unchecked), fig.files)} of files)"
    )
    lines += [f"        {_rel(p, root)}" for p in fig.unchecked[:show]]
    lines.append(
        f"  parallel/batch flags written: {fig.tracked_written}; resolved to a value: {fig.tracked_resolved} "
        f"({share(fig.tracked_resolved, fig.tracked_written)})"
    )
    by_kind = Counter(kind_of(reason) for _, reason in fig.unresolved)
    for kind, n in by_kind.most_common():
        lines.append(f"    unresolved, {kind}: {n}")
        examples = [(k, r) for k, r in fig.unresolved if kind_of(r) == kind][:show]
        lines += [f"        {_rel(p, root)}:{line} {flag} ({why[:80]})" for (p, line, flag), why in examples]
    lines += _rules("errors", fig.errors, fig, "error", root, show)
    lines += _rules("warnings", fig.warnings, fig, "warning", root, show)
    kinds = Counter(k for f in fig.assumed for k in {assumption_kind(t) for t in f.assumed})
    lines.append(
        f"  errors and warnings resting on an assumption: {len(fig.assumed)}"
        + (" (" + ", ".join(f"{kind}: {n}" for kind, n in sorted(kinds.items())) + ")" if kinds else "")
    )
    lines += [f"        {_rel(f.path, root)}:{f.line}:{f.column} {f.code} {f.severity}" for f in fig.assumed[:show]]
    lines.append(f"  not checked (unreadable, or megalint failed): {len(fig.problems)}")
    lines += [f"        {_rel(p, root)}: {why}" for p, why in fig.problems[: max(show, 5)]]
    return "\n".join(lines)


def total_line(fig: Figures, seconds: float, jobs: int) -> str:
    return (
        f"total: {fig.files} files, {fig.launches} launches, {fig.fragment_files} fragment files, "
        f"{fig.tool_files} files of programs with their own parser, "
        f"{len(fig.unchecked)} files with Megatron flags checked by nothing ({share(len(fig.unchecked), fig.files)}), "
        f"parallel/batch flags resolved {fig.tracked_resolved}/{fig.tracked_written} "
        f"({share(fig.tracked_resolved, fig.tracked_written)}), {sum(fig.errors.values())} errors, "
        f"{sum(fig.warnings.values())} warnings, {len(fig.problems)} not checked; "
        f"{seconds:.1f} s with {jobs} job(s)"
    )


def errors_json(per_repo: list[Figures], root: str) -> str:
    """Every error finding, and every warning that rests on an assumption (an error the script
    would fix is reported one severity lower), one object each, for a reviewer to read against
    the script; `assumed` lists the assumptions a finding rests on."""
    rows = [
        {
            "repository": fig.name,
            "file": _rel(f.path, root),
            "line": f.line,
            "column": f.column,
            "code": f.code,
            "name": f.name,
            "severity": f.severity,
            "message": f.message,
            "assumed": list(f.assumed),
        }
        for fig in per_repo
        for f in fig.findings
        if f.severity == "error" or f.assumed
    ]
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
