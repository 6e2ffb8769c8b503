"""`grouped`: findings under a header per file, positions aligned."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import TYPE_CHECKING

from megalint.diagnostics import Diagnostic
from megalint.output.common import RenderOptions, fixable, sort_diagnostics, summary_line
from megalint.output.full import Out
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    out = Out(opts.color)
    ordered = sort_diagnostics(diagnostics)
    for i, (path, findings) in enumerate(groupby(ordered, key=lambda d: d.span.path)):
        group = list(findings)
        if i:
            out.line(("", None))
        out.line((f"{path}:", "path"))
        width = max(len(f"{d.span.start_line}:{d.span.start_col}") for d in group)
        code_width = max(len(d.code) for d in group)
        for d in group:
            pos = f"{d.span.start_line}:{d.span.start_col}"
            mark = "[*]" if fixable(d, opts.unsafe_fixes) else "   "
            message = d.message.replace("\r", " ").replace("\n", " ")
            out.line(
                ("  " + pos.ljust(width), "dim"),
                ("  ", None),
                (d.code.ljust(code_width), d.severity.value),
                (" " + mark, "help"),
                (" " + message, None),
            )
    if opts.summary:
        if ordered:
            out.line(("", None))
        for line in summary_line(diagnostics, opts.unsafe_fixes).split("\n"):
            out.line((line, None))
    text = out.text()
    return text + "\n" if text else ""
