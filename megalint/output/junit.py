"""`junit`: JUnit XML, one <testsuite> per file.

Per file rather than per rule because CI test views group by suite and a reader fixes one
file at a time. Each finding is a failing <testcase name="megalint.CODE" classname=FILE>;
a file given in `sources` without findings gets one passing testcase, and a run with no
files and no findings one passing "megalint" suite, so the report is never empty.
Characters XML 1.0 cannot carry (most C0 controls) are written as \\uXXXX.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

from megalint import lazy_re
from megalint.diagnostics import Diagnostic
from megalint.output.common import RenderOptions, doc_url, sort_diagnostics
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

_INVALID_XML = lazy_re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(s: str) -> str:
    return _INVALID_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def _attr(s: str) -> str:
    return quoteattr(_clean(s), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def _text(s: str) -> str:
    return escape(_clean(s))


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    tool = opts.tool_name
    ordered = sort_diagnostics(diagnostics)
    by_path = {p: list(g) for p, g in groupby(ordered, key=lambda d: d.span.path)}
    clean = sorted(p for p in sources if p not in by_path)
    suites = []
    for path in sorted(set(by_path) | set(clean)):
        group = by_path.get(path, [])
        cases = []
        for d in group:
            s = d.span
            body = [f"{s.path}:{s.start_line}:{s.start_col}: {d.code} [{d.name}] {d.message}"]
            if d.condition:
                body.append(f"only when {d.condition}")
            for lab in d.labels:
                body.append(f"note: {lab.text} ({lab.span.path}:{lab.span.start_line}:{lab.span.start_col})")
            if d.help:
                body.append(f"help: {d.help}")
            url = doc_url(d, rules)
            if url:
                body.append(f"docs: {url}")
            cases.append(
                f"    <testcase name={_attr(f'{tool}.{d.code}')} classname={_attr(path)} "
                f'file={_attr(path)} line="{s.start_line}" column="{s.start_col}">\n'
                f"      <properties>\n"
                f'        <property name="severity" value={_attr(d.severity.value)}/>\n'
                f'        <property name="rule" value={_attr(d.name)}/>\n'
                f"      </properties>\n"
                f"      <failure message={_attr(f'line {s.start_line}, col {s.start_col}, {d.message}')} "
                f"type={_attr(d.severity.value)}>{_text(chr(10).join(body))}</failure>\n"
                f"    </testcase>"
            )
        if not group:
            cases.append(f"    <testcase name={_attr(f'{tool}')} classname={_attr(path)} file={_attr(path)}/>")
        suites.append(
            f'  <testsuite name={_attr(path)} tests="{max(len(group), 1)}" '
            f'failures="{len(group)}" errors="0" skipped="0">\n' + "\n".join(cases) + "\n  </testsuite>"
        )
    if not suites:
        suites.append(
            f'  <testsuite name={_attr(tool)} tests="1" failures="0" errors="0" skipped="0">\n'
            f"    <testcase name={_attr('No findings')} classname={_attr(tool)}/>\n  </testsuite>"
        )
    tests = sum(max(len(by_path.get(p, [])), 1) for p in sorted(set(by_path) | set(clean))) or 1
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name={_attr(tool)} tests="{tests}" failures="{len(ordered)}" errors="0">\n'
    )
    return head + "\n".join(suites) + "\n</testsuites>\n"
