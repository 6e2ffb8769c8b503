"""`sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

- Columns are Unicode code points (`run.columnKind`), 1-based; `endColumn` is the column
  after the last character, which is exactly megalint's end-exclusive span end.
- URIs are relative to the repository root (`RenderOptions.root`; a relative path in a finding
  is relative to `RenderOptions.base`, the working folder) with
  `uriBaseId: %SRCROOT%`; `originalUriBaseIds` says where that root was when `root` is set.
- `partialFingerprints["megalint/v1"]` does not depend on line numbers (see
  `common.fingerprints`). GitHub's own `primaryLocationLineHash` is left to upload-sarif,
  which computes it when absent.
- Every rule of `rules` is listed in `tool.driver.rules` (sorted by code), so a result's
  `ruleIndex` is stable for one rule set; codes without metadata get a minimal entry.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from megalint.diagnostics import Applicability, Diagnostic, Edit, Severity
from megalint.output.common import RenderOptions, doc_url, fingerprints, relative_path, sort_diagnostics
from megalint.source import SourceFile, Span

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "recommendation"}
SRCROOT = "%SRCROOT%"
MAX_DESCRIPTION = 1024  # GitHub's limit for short/full descriptions


def _clip(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = text.strip() or "-"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def artifact_location(path: str, root: str | None, base: str | None = None) -> dict[str, str]:
    rel = relative_path(path, root, base)
    if posixpath.isabs(rel):
        return {"uri": "file://" + quote(rel, safe="/:")}
    return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}


def region(span: Span) -> dict[str, int]:
    r = {
        "startLine": span.start_line,
        "startColumn": span.start_col,
        "endLine": max(span.end_line, span.start_line),
        "endColumn": span.end_col,
    }
    if r["endLine"] == r["startLine"] and r["endColumn"] < r["startColumn"]:
        r["endColumn"] = r["startColumn"]
    return r


def _rule_descriptor(rule: RuleInfo) -> dict[str, Any]:
    full = " ".join(p for p in (rule.docs.description, rule.docs.why) if p.strip()) or rule.summary
    desc = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _clip(rule.summary)},
        "fullDescription": {"text": _clip(full)},
        "help": {"text": rule.help_text(), "markdown": rule.help_markdown()},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {
            "tags": list(rule.tags)[:20],
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
        },
    }
    if rule.url:
        desc["helpUri"] = rule.url
    return desc


def _fallback_descriptor(d: Diagnostic) -> dict[str, Any]:
    return {
        "id": d.code,
        "name": d.name or d.code,
        "shortDescription": {"text": _clip(d.name or d.code)},
        "fullDescription": {"text": _clip(d.name or d.code)},
        "help": {"text": d.name or d.code},
        "defaultConfiguration": {"level": LEVEL[d.severity]},
        "properties": {"tags": [], "problem.severity": PROBLEM_SEVERITY[d.severity]},
    }


def _message(d: Diagnostic) -> str:
    parts = [d.message]
    if d.condition:
        parts.append(f"Only when {d.condition}.")
    if d.help:
        parts.append(f"Help: {d.help}")
    return "\n".join(parts)


def _fixes(d: Diagnostic, root: str | None, base: str | None) -> list[dict[str, Any]]:
    if d.fix is None or not d.fix.edits or d.fix.applicability == Applicability.DISPLAY_ONLY:
        return []
    by_path: dict[str, list[Edit]] = {}
    for e in d.fix.edits:
        by_path.setdefault(e.span.path, []).append(e)
    changes = []
    for path, edits in by_path.items():
        reps = []
        for e in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col)):
            rep: dict[str, Any] = {"deletedRegion": region(e.span)}
            if e.content:
                rep["insertedContent"] = {"text": e.content}
            reps.append(rep)
        changes.append({"artifactLocation": artifact_location(path, root, base), "replacements": reps})
    text = d.fix.message
    if d.fix.applicability == Applicability.UNSAFE:
        text += " (unsafe)"
    return [{"description": {"text": text}, "artifactChanges": changes}]


def build(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> dict[str, Any]:
    opts = options or RenderOptions()
    ordered = sort_diagnostics(diagnostics)
    descriptors = {code: _rule_descriptor(rule) for code, rule in rules.items()}
    for d in ordered:
        if d.code not in descriptors:
            descriptors[d.code] = _fallback_descriptor(d)
    codes = sorted(descriptors)
    index = {c: i for i, c in enumerate(codes)}
    prints = fingerprints(ordered, sources, opts.root, opts.base)

    results = []
    artifacts: list[str] = []
    for d in ordered:
        if d.span.path not in artifacts:
            artifacts.append(d.span.path)
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": LEVEL[d.severity],
            "message": {"text": _message(d)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(d.span.path, opts.root, opts.base),
                        "region": region(d.span),
                    }
                }
            ],
            "partialFingerprints": {"megalint/v1": prints[id(d)]},
        }
        if d.labels:
            result["relatedLocations"] = [
                {
                    "id": i + 1,
                    "physicalLocation": {
                        "artifactLocation": artifact_location(lab.span.path, opts.root, opts.base),
                        "region": region(lab.span),
                    },
                    "message": {"text": lab.text or "-"},
                }
                for i, lab in enumerate(d.labels)
            ]
        fixes = _fixes(d, opts.root, opts.base)
        if fixes:
            result["fixes"] = fixes
        props = {}
        if d.condition:
            props["condition"] = d.condition
        url = doc_url(d, rules)
        if url:
            props["helpUri"] = url
        if props:
            result["properties"] = props
        results.append(result)

    run = {
        "tool": {
            "driver": {
                "name": opts.tool_name,
                "version": opts.tool_version,
                "semanticVersion": opts.tool_version,
                "informationUri": opts.information_uri,
                "rules": [descriptors[c] for c in codes],
            }
        },
        "automationDetails": {"id": f"{opts.tool_name}/"},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if opts.root is not None:
        root_uri = "file://" + quote(opts.root.rstrip("/") + "/", safe="/:")
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    return json.dumps(build(diagnostics, sources, rules, options), indent=2, ensure_ascii=False) + "\n"
