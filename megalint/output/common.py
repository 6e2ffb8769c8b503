"""Options and helpers shared by the renderers."""

from __future__ import annotations

import os
import posixpath
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from megalint import REPOSITORY_URL, __version__, lazy_re
from megalint.diagnostics import Diagnostic, Severity
from megalint.digests import sha256
from megalint.fix import is_applicable
from megalint.source import SourceFile

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

TOOL_NAME = "megalint"
# Where the project lives; SARIF's driver.informationUri needs an absolute URI.
INFORMATION_URI = REPOSITORY_URL


@dataclass(frozen=True)
class RenderOptions:
    """How findings are shown: colour, width, context lines, fixes, paths."""

    # Human formats.
    color: bool = False
    width: int = 100
    context: int = 2  # source lines shown before and after each annotated line
    max_span_lines: int = 6  # longer spans show their first and last lines only
    show_fixes: bool = True  # the fix preview under `help:` in `full`
    summary: bool = True  # the closing "Found …" line
    unsafe_fixes: bool = False  # whether unsafe fixes count as fixable with --fix
    # Paths: URIs and `file=` become relative to this directory when a path lies under it.
    root: str | None = None
    # The folder a relative path in a finding is relative to (the working folder); None: such a
    # path is taken as relative to `root` already.
    base: str | None = None
    tool_name: str = TOOL_NAME
    tool_version: str = __version__
    information_uri: str = INFORMATION_URI
    # github: annotations kept per type per step by the runner; `step_summary` receives the
    # Markdown table when some findings could not be annotated (the CLI appends it to the
    # file named by $GITHUB_STEP_SUMMARY).
    github_max_per_type: int = 10
    step_summary: Callable[[str], None] | None = None
    github_always_summary: bool = False


def color_enabled(mode: str = "auto", isatty: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """Whether human output gets ANSI colour.

    `--color always|never` decides outright. For `auto`: NO_COLOR (non-empty) turns colour
    off, then FORCE_COLOR or CLICOLOR_FORCE (non-empty, not "0") turns it on, then a TTY
    whose TERM is not "dumb" decides.
    """
    if mode == "always":
        return True
    if mode == "never":
        return False
    if mode != "auto":
        raise ValueError(f"--color must be auto, always or never, not {mode!r}")
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", ""):
        return False
    for var in ("FORCE_COLOR", "CLICOLOR_FORCE"):
        if env.get(var, "") not in ("", "0"):
            return True
    if env.get("CLICOLOR", None) == "0":
        return False
    return isatty and env.get("TERM", "") != "dumb"


def sort_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return sorted(
        diagnostics,
        key=lambda d: (
            d.span.path,
            d.span.start_line,
            d.span.start_col,
            d.code,
            d.span.end_line,
            d.span.end_col,
            d.message,
        ),
    )


def fixable(d: Diagnostic, unsafe: bool = False) -> bool:
    """Whether --fix (with --unsafe-fixes when `unsafe`) applies the finding's fix: the fixer's
    own test, so that `[*]` and "N fixable" count what it does (never an edit in another file)."""
    return is_applicable(d, unsafe)


def doc_url(d: Diagnostic, rules: Mapping[str, RuleInfo]) -> str | None:
    if d.url:
        return d.url
    rule = rules.get(d.code)
    return rule.url if rule else None


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def summary_line(diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> str:
    if not diagnostics:
        return "All checks passed."
    counts = Counter(d.severity for d in diagnostics)
    parts = []
    for sev, word in ((Severity.ERROR, "error"), (Severity.WARNING, "warning"), (Severity.INFO, "info")):
        if counts[sev]:
            parts.append(plural(counts[sev], word, "infos" if sev == Severity.INFO else None))
    found = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    line = f"Found {found}."
    n_safe = sum(1 for d in diagnostics if fixable(d, unsafe))
    n_hidden = 0 if unsafe else sum(1 for d in diagnostics if is_applicable(d, True) and not is_applicable(d, False))
    if n_safe:
        option = "--fix --unsafe-fixes" if unsafe else "--fix"
        line += f"\n[*] {n_safe} fixable with {option}"
        if n_hidden:
            line += f" ({n_hidden} more with --unsafe-fixes)"
        line += "."
    elif n_hidden:
        line += f"\n{plural(n_hidden, 'unsafe fix', 'unsafe fixes')} available with --fix --unsafe-fixes."
    return line


def relative_path(path: str, root: str | None, base: str | None = None) -> str:
    """A POSIX path relative to `root` when `path` is under it, else `path` unchanged (absolute
    when it is relative to `base`, the folder relative paths are relative to)."""
    p = path.replace(os.sep, "/") if os.sep != "/" else path
    if root is None:
        return p
    r = root.replace(os.sep, "/") if os.sep != "/" else root
    if base is not None and p and p != "-" and not posixpath.isabs(p):
        p = posixpath.join(base.replace(os.sep, "/") if os.sep != "/" else base, p)
    if not posixpath.isabs(p):
        return posixpath.normpath(p) if p else p
    r = posixpath.normpath(r)
    p_norm = posixpath.normpath(p)
    if p_norm == r:
        return posixpath.basename(p_norm)
    if p_norm.startswith(r.rstrip("/") + "/"):
        return p_norm[len(r.rstrip("/")) + 1 :]
    return p_norm


_WS = lazy_re.compile(r"\s+")


def _normalised_line(d: Diagnostic, sources: Mapping[str, SourceFile]) -> str:
    sf = sources.get(d.span.path)
    if sf is not None and d.span.start_line >= 1:
        try:
            return _WS.sub(" ", sf.line_text(d.span.start_line)).strip()
        except IndexError:
            pass
    return _WS.sub(" ", d.message).strip()


def fingerprints(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    root: str | None = None,
    base: str | None = None,
) -> dict[int, str]:
    """A fingerprint per diagnostic (keyed by id()) that survives lines moving.

    sha256 over code, repository-relative path and the whitespace-normalised text of the
    finding's first line, plus the occurrence index among findings with the same three,
    counted in file order, so two identical lines in one file stay distinct.
    """
    seen: Counter[tuple[str, str, str]] = Counter()
    out: dict[int, str] = {}
    for d in sort_diagnostics(diagnostics):
        key = (d.code, relative_path(d.span.path, root, base), _normalised_line(d, sources))
        index = seen[key]
        seen[key] += 1
        h = sha256("\0".join(key + (str(index),)).encode("utf-8")).hexdigest()
        out[id(d)] = h
    return out
