"""Renderers: one module per output format, all pure functions of the findings.

Every renderer has the signature
    render(diagnostics, sources, rules, options) -> str
with `sources` mapping a path to its SourceFile, `rules` a code to its RuleInfo and
`options` a RenderOptions. `FORMATS` names them; `parse_output_formats` reads the
`--output-format NAME[:PATH]` values of the command line.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from megalint.errors import UsageError

if TYPE_CHECKING:
    from megalint.diagnostics import Diagnostic
    from megalint.engine.rule import RuleInfo
    from megalint.output.common import RenderOptions
    from megalint.source import SourceFile

    Renderer = Callable[[Sequence[Diagnostic], Mapping[str, SourceFile], Mapping[str, RuleInfo], RenderOptions], str]


class _Renderers(Mapping[str, "Renderer"]):
    """Each format's renderer, its module imported when the format is first used: a run that
    writes JSON does not import rich, the human formats' terminal library."""

    def __init__(self, where: dict[str, tuple[str, str]]):
        self._where = where  # format -> (module, function)

    def __getitem__(self, name: str) -> Renderer:
        module, function = self._where[name]
        renderer: Renderer = getattr(importlib.import_module(f"megalint.output.{module}"), function)
        return renderer

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


FORMATS: Mapping[str, Renderer] = _Renderers(
    {
        "full": ("full", "render"),
        "concise": ("concise", "render"),
        "grouped": ("grouped", "render"),
        "json": ("json_format", "render"),
        "json-lines": ("json_format", "render_lines"),
        "sarif": ("sarif", "render"),
        "github": ("github", "render"),
        "gitlab": ("gitlab", "render"),
        "junit": ("junit", "render"),
    }
)
DEFAULT_FORMAT = "full"
# Formats a terminal reader sees; the CLI only colours these.
HUMAN_FORMATS = frozenset({"full", "concise", "grouped"})


@dataclass(frozen=True)
class OutputTarget:
    """A format and where it is written."""

    format: str
    path: str | None  # None: standard output


class OutputFormatError(UsageError, ValueError):
    """An --output-format that names no format, or two that write to one file."""


def parse_output_format(value: str) -> OutputTarget:
    """`NAME` or `NAME:PATH` (the path may itself contain ':', e.g. C:\\out.sarif)."""
    name, sep, path = value.partition(":")
    name = name.strip()
    if name not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise OutputFormatError(f"unknown output format {name!r} (known: {known})")
    if sep and not path:
        raise OutputFormatError(f"--output-format {value!r}: the path after ':' is empty")
    return OutputTarget(name, path if sep else None)


def parse_output_formats(values: Sequence[str], default: str = DEFAULT_FORMAT) -> list[OutputTarget]:
    """All targets of repeated --output-format options, in order.

    No value means the default format on standard output. At most one target may write to
    standard output and no two may write to the same file.
    """
    targets = [parse_output_format(v) for v in values] or [OutputTarget(default, None)]
    to_stdout = [t.format for t in targets if t.path is None]
    if len(to_stdout) > 1:
        raise OutputFormatError(
            f"formats {', '.join(to_stdout)} all write to standard output; give all but one a path "
            f"(e.g. --output-format sarif:megalint.sarif)"
        )
    seen: set[str] = set()
    for t in targets:
        if t.path is not None:
            if t.path in seen:
                raise OutputFormatError(f"two output formats write to {t.path!r}")
            seen.add(t.path)
    return targets


def render(
    format: str,
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    from megalint.output.common import RenderOptions

    if format not in FORMATS:
        raise OutputFormatError(f"unknown output format {format!r}")
    return FORMATS[format](diagnostics, sources, rules, options or RenderOptions())


def __getattr__(name: str) -> Any:
    # RenderOptions is imported when asked for: its module reads the rules' types.
    if name == "RenderOptions":
        from megalint.output.common import RenderOptions

        return RenderOptions
    raise AttributeError(f"module 'megalint.output' has no attribute {name!r}")


__all__ = [
    "FORMATS",
    "DEFAULT_FORMAT",
    "HUMAN_FORMATS",
    "OutputTarget",
    "OutputFormatError",
    "RenderOptions",
    "parse_output_format",
    "parse_output_formats",
    "render",
]
