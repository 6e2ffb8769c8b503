"""`github`: GitHub Actions workflow commands, one annotation per finding.

    ::error file=scripts/train.sh,line=13,col=34,endLine=13,endColumn=37,title=megalint ML012 (tp-divides-heads)::message%0Ahelp: …

Escaping is the toolkit's (`actions/toolkit` packages/core/src/command.ts): in the message
`%`, CR and LF; in property values also `:` and `,`. `col`/`endColumn` are only sent for
one-line spans, since the runner drops both otherwise.

The runner keeps 10 annotations per type (error, warning, notice) per step and silently drops
the rest, so findings go out errors first, each type stops at `github_max_per_type`, the
others are printed as plain log lines, and a Markdown table of every finding goes to
`RenderOptions.step_summary` (the CLI appends it to the file named by $GITHUB_STEP_SUMMARY).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.diagnostics import Diagnostic, Severity
from megalint.output.common import RenderOptions, doc_url, fixable, plural, relative_path, sort_diagnostics
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
MAX_MESSAGE = 4096  # the runner cuts longer messages


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _message(d: Diagnostic, rules: Mapping[str, RuleInfo], root: str | None, base: str | None) -> str:
    lines = [d.message]
    if d.condition:
        lines.append(f"note: only when {d.condition}")
    for lab in d.labels:
        where = f"{relative_path(lab.span.path, root, base)}:{lab.span.start_line}:{lab.span.start_col}"
        lines.append(f"note: {lab.text} ({where})")
    if d.help:
        lines.append(f"help: {d.help}")
    if d.fix is not None:
        lines.append(f"fix: {d.fix.message} ({d.fix.applicability.value})")
    url = doc_url(d, rules)
    if url:
        lines.append(f"docs: {url}")
    text = "\n".join(lines)
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 1] + "…"
    return text


def annotation(
    d: Diagnostic,
    rules: Mapping[str, RuleInfo],
    root: str | None = None,
    tool: str = "megalint",
    base: str | None = None,
) -> str:
    s = d.span
    props = [("file", relative_path(s.path, root, base)), ("line", str(s.start_line))]
    end_line = max(s.end_line, s.start_line)
    if end_line == s.start_line:
        props.append(("col", str(s.start_col)))
        props.append(("endLine", str(end_line)))
        # endColumn below col makes the runner drop both; a zero-width span marks one column.
        props.append(("endColumn", str(max(s.end_col, s.start_col))))
    else:
        props.append(("endLine", str(end_line)))
    title = f"{tool} {d.code} ({d.name})" if d.name else f"{tool} {d.code}"
    props.append(("title", title))
    body = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMAND[d.severity]} {body}::{escape_data(_message(d, rules, root, base))}"


# A CommonMark code span: a run of backticks, then anything up to a run of exactly as many.
_CODE_SPAN = lazy_re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _md_text(s: str) -> str:
    """Text of a table cell outside code spans: every character that Markdown or the table reads."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("\\", "\\\\").replace("`", "\\`").replace("|", "\\|")
    return s.replace("\r", "").replace("\n", "<br>")


def _md_code(ticks: str, body: str) -> str:
    """A code span inside a table cell. Nothing is escaped inside a code span (`&lt;` and `\\\\`
    would show as written) except the pipe: GFM splits a row into cells before it reads code spans
    and takes `\\|` there as a pipe of the cell's content. A backslash before a pipe cannot be
    written inside a code span, so such a span is written as plain text instead."""
    body = body.replace("\r", "").replace("\n", " ")
    if "\\|" in body:
        return _md_text(body)
    return ticks + body.replace("|", "\\|") + ticks


def _md_cell(s: str) -> str:
    """`s` as the content of a GitHub Markdown table cell, its code spans kept as code."""
    out, at = [], 0
    for m in _CODE_SPAN.finditer(s):
        out.append(_md_text(s[at : m.start()]))
        out.append(_md_code(m.group(1), m.group(2)))
        at = m.end()
    out.append(_md_text(s[at:]))
    return "".join(out)


def step_summary(
    diagnostics: Sequence[Diagnostic],
    rules: Mapping[str, RuleInfo],
    root: str | None = None,
    annotated: int | None = None,
    tool: str = "megalint",
    max_per_type: int = 10,
    base: str | None = None,
    unsafe: bool = False,
) -> str:
    """The Markdown of the step summary; `[*]` marks what --fix applies in this run."""
    ordered = _severity_order(diagnostics)
    counts = Counter(d.severity for d in ordered)
    lines = [f"## {tool}: {len(ordered)} finding{'s' if len(ordered) != 1 else ''}", ""]
    lines.append(", ".join(plural(counts[s], s.value) for s in Severity if counts[s]) or "no findings")
    if annotated is not None and annotated < len(ordered):
        lines += [
            "",
            f"GitHub shows at most {plural(max_per_type, 'annotation')} of each type per step; "
            f"{len(ordered) - annotated} of these findings are listed here only.",
        ]
    lines += ["", "| Severity | Code | Location | Message |", "|---|---|---|---|"]
    for d in ordered:
        s = d.span
        loc = f"{relative_path(s.path, root, base)}:{s.start_line}:{s.start_col}"
        code = d.code
        url = doc_url(d, rules)
        if url:
            code = f"[{d.code}]({url.replace(')', '%29')})"
        fix = " [*]" if fixable(d, unsafe) else ""
        lines.append(f"| {d.severity.value} | {_md_cell(code)}{fix} | {_md_cell(loc)} | {_md_cell(d.message)} |")
    return "\n".join(lines) + "\n"


def _severity_order(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    ordered = sort_diagnostics(diagnostics)
    return sorted(ordered, key=lambda d: -d.severity.rank)  # stable: file order within a type


@dataclass
class GithubOutput:
    """What the GitHub format prints, and the summary it writes."""

    text: str  # what goes to stdout
    summary: str | None  # Markdown for $GITHUB_STEP_SUMMARY, or None
    annotated: int
    dropped: int


def render_github(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> GithubOutput:
    opts = options or RenderOptions()
    ordered = _severity_order(diagnostics)
    per_type: Counter[Severity] = Counter()
    lines = []
    overflow = []
    for d in ordered:
        if per_type[d.severity] < opts.github_max_per_type:
            per_type[d.severity] += 1
            lines.append(annotation(d, rules, opts.root, opts.tool_name, opts.base))
        else:
            overflow.append(d)
    annotated = len(ordered) - len(overflow)
    if overflow:
        lines.append(
            f"{opts.tool_name}: {len(overflow)} more finding{'s' if len(overflow) != 1 else ''} "
            f"not annotated (GitHub keeps {plural(opts.github_max_per_type, 'annotation')} of each type "
            f"per step); the step summary lists all {len(ordered)}; "
            f"use --output-format sarif for complete results:"
        )
        for d in overflow:
            s = d.span
            message = d.message.replace("\r", " ").replace("\n", " ")
            # Indented so a log line never begins with a workflow command.
            lines.append(
                f"  {relative_path(s.path, opts.root, opts.base)}:{s.start_line}:{s.start_col}: "
                f"{d.severity.value} {d.code} {message}"
            )
    summary = None
    if overflow or (opts.github_always_summary and ordered):
        summary = step_summary(
            ordered,
            rules,
            opts.root,
            annotated,
            opts.tool_name,
            opts.github_max_per_type,
            opts.base,
            opts.unsafe_fixes,
        )
    text = "".join(line + "\n" for line in lines)
    return GithubOutput(text, summary, annotated, len(overflow))


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    result = render_github(diagnostics, sources, rules, opts)
    if result.summary is not None and opts.step_summary is not None:
        opts.step_summary(result.summary)
    return result.text


def summary_writer(path: str) -> Callable[[str], None]:
    """A `RenderOptions.step_summary` that appends to the file named by $GITHUB_STEP_SUMMARY."""

    def write(markdown: str) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown)

    return write
