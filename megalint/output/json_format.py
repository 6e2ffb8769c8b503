"""`json` (one array) and `json-lines` (one object per line).

Fields follow Ruff's JSON output where they mean the same thing: code, name, severity,
message, filename, location{row,column}, end_location, fix{message, applicability,
edits[{content, location, end_location}]}, url; megalint adds labels, help, condition and
assumed (the assumptions a finding rests on).
Rows and columns are 1-based, columns in code points, end exclusive.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from megalint.diagnostics import Diagnostic
from megalint.output.common import RenderOptions, doc_url, sort_diagnostics
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo


def to_object(d: Diagnostic, rules: Mapping[str, RuleInfo]) -> dict[str, Any]:
    obj = d.to_json()
    obj["url"] = doc_url(d, rules)
    obj["condition"] = d.condition
    obj["assumed"] = list(d.assumed)
    return obj


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    objs = [to_object(d, rules) for d in sort_diagnostics(diagnostics)]
    return json.dumps(objs, indent=2, ensure_ascii=False) + "\n"


def render_lines(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    return "".join(
        json.dumps(to_object(d, rules), ensure_ascii=False, separators=(",", ":")) + "\n"
        for d in sort_diagnostics(diagnostics)
    )
