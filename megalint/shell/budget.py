"""How much of one file megalint checks: past either limit, the file gets one `file-too-large`
finding (ML019) and the run goes on with the next file, within bounded time and memory.

The limits come from measurements (bench/sizes.py): a launch script is a few kilobytes and the
largest of the public corpus is under 100 KiB. Checking costs about 1 s and 110 MB of memory
per MB of plain assignments, and about 3 ms and 80 KB per launch. At the limits, 4 MiB of
launches (22,500, of which 2,000 are checked) take 10 s of CPU and 690 MB, within 30 s and 1 GB.
"""

from __future__ import annotations

from megalint.shell.facts import ScriptFacts, ShellFinding, ShellFindingKind
from megalint.source import SourceFile, Span

MAX_FILE_SIZE = 4 * 1024 * 1024  # bytes of script checked; `max-file-size` in the configuration
MAX_LAUNCHES = 2000  # launches of one file checked; those after it are not


def utf8_size(text: str) -> int:
    """The size in bytes of `text` as UTF-8, without encoding a text of ASCII."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def too_large_facts(path: str, text: str, size: int, limit: int) -> ScriptFacts:
    """The facts of a file over the size limit: none but the finding, at its first line. The
    file is neither parsed nor interpreted."""
    source = SourceFile(path, text)
    first = text.find("\n")
    span = source.span(0, len(text) if first < 0 else first)
    finding = ShellFinding(
        ShellFindingKind.FILE_TOO_LARGE,
        span,
        f"the file is too large to check ({size:,} bytes; megalint checks scripts of at most "
        f"{limit:,} bytes, `max-file-size` in the configuration)",
        {"size": size, "limit": limit},
    )
    return ScriptFacts(path, {path: source}, [], [], [finding], [])


def too_many_launches(span: Span, count: int, limit: int) -> ShellFinding:
    """The finding at the first launch past the `limit` (`span`); `count` launches in all."""
    return ShellFinding(
        ShellFindingKind.FILE_TOO_LARGE,
        span,
        f"the file has too many launches to check ({count:,}; megalint checks the first "
        f"{limit:,} of a file): this one and those after it were not checked",
        {"launches": count, "limit": limit},
    )
