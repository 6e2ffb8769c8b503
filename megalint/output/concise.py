"""`concise`: one line per finding, `file:line:col: CODE [*] message`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from megalint.diagnostics import Diagnostic
from megalint.output.common import RenderOptions, fixable, sort_diagnostics, summary_line
from megalint.output.full import Out
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo


def one_line(d: Diagnostic, unsafe: bool) -> str:
    mark = " [*]" if fixable(d, unsafe) else ""
    message = d.message.replace("\r", " ").replace("\n", " ")
    return f"{d.span.path}:{d.span.start_line}:{d.span.start_col}: {d.code}{mark} {message}"


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    out = Out(opts.color)
    for d in sort_diagnostics(diagnostics):
        s = d.span
        mark = " [*]" if fixable(d, opts.unsafe_fixes) else ""
        message = d.message.replace("\r", " ").replace("\n", " ")
        out.line(
            (f"{s.path}:{s.start_line}:{s.start_col}:", "path"),
            (" ", None),
            (d.code, d.severity.value),
            (mark, "help"),
            (" " + message, None),
        )
    if opts.summary:
        for line in summary_line(diagnostics, opts.unsafe_fixes).split("\n"):
            out.line((line, None))
    text = out.text()
    return text + "\n" if text else ""
