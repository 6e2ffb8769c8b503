"""`gitlab`: GitLab Code Quality report (a JSON array of issues).

Severity: error → major, warning → minor, info → info (GitLab's scale also has critical
and blocker, which megalint leaves to the project's own judgement). `fingerprint` is the
line-independent fingerprint SARIF uses, so an issue keeps its identity while lines move.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from megalint.diagnostics import Diagnostic, Severity
from megalint.output.common import RenderOptions, fingerprints, relative_path, sort_diagnostics
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    ordered = sort_diagnostics(diagnostics)
    prints = fingerprints(ordered, sources, opts.root, opts.base)
    issues = []
    for d in ordered:
        s = d.span
        issues.append(
            {
                "type": "issue",
                "description": f"{d.code}: {d.message}",
                "check_name": d.code,
                "fingerprint": prints[id(d)],
                "severity": SEVERITY[d.severity],
                "categories": ["Bug Risk"],
                "location": {
                    "path": relative_path(s.path, opts.root, opts.base),
                    "lines": {"begin": s.start_line, "end": max(s.end_line, s.start_line)},
                },
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
