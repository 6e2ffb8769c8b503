"""Applying fixes to a script's text.

A fix is a list of edits that must be applied together. Edits are located by their span's
line and column (1-based code points, end exclusive) in the text being fixed; the character
offsets a span also carries are not trusted here, so that hand-built spans and spans from a
re-lint of already edited text behave the same.

One pass applies every applicable fix whose edits do not conflict with an edit already taken
in that pass; the others wait for the next pass, which needs a fresh lint of the edited text
(`relint`). After each pass the text is checked with `reparse_ok`: if the pass broke the
shell syntax, its fixes are retried one at a time and those that break it are dropped.
Nothing outside an edit's range ever changes: line endings, continuation backslashes,
quoting and comments stay as written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from megalint.diagnostics import Applicability, Diagnostic, Edit

MAX_PASSES = 100


class OverlappingEdits(ValueError):
    """Two edits overlap; apply_fixes keeps such a fix back, so it never leaves this module from there."""


def line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def offset_of(starts: Sequence[int], text_len: int, line: int, col: int) -> int:
    """Character offset of a 1-based (line, col); positions past the end clamp to it."""
    if line < 1:
        return 0
    if line > len(starts):
        return text_len
    base = starts[line - 1]
    line_end = starts[line] - 1 if line < len(starts) else text_len
    # col may point one past the newline (an edit that removes a whole line ends at the
    # first column of the next line, or at end_col = len(line) + 2).
    return min(base + max(col, 1) - 1, line_end + 1 if line < len(starts) else text_len)


def edit_range(starts: Sequence[int], text_len: int, edit: Edit) -> tuple[int, int]:
    s = edit.span
    start = offset_of(starts, text_len, s.start_line, s.start_col)
    end = offset_of(starts, text_len, s.end_line, s.end_col)
    if end < start:
        raise ValueError(f"edit ends before it starts: {s}")
    return start, end


def _line_ending_at(text: str, offset: int) -> str:
    nl = text.find("\n", offset)
    if nl == -1:
        nl = text.rfind("\n", 0, offset)
        if nl == -1:
            return "\n"
    return "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"


def _whole_line_ends(text: str, start: int, end: int) -> tuple[int, int]:
    """The range moved off the middle of a CRLF pair: columns count the `\r` as a character of
    its line, so a position one past the line's last character falls between `\r` and `\n`, and
    a line inserted there would split the pair."""

    def before_pair(i: int) -> int:
        return i - 1 if 0 < i < len(text) and text[i] == "\n" and text[i - 1] == "\r" else i

    return before_pair(start), max(before_pair(end), before_pair(start))


def _normalise_newlines(content: str, ending: str) -> str:
    if "\n" not in content:
        return content
    bare = content.replace("\r\n", "\n")
    return bare if ending == "\n" else bare.replace("\n", "\r\n")


def _conflict(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] < b[1] and b[0] < a[1]:
        return True
    # Two insertions at one point have no defined order.
    return a[0] == a[1] == b[0] == b[1]


def resolve_edits(text: str, edits: Iterable[Edit], starts: Sequence[int] | None = None) -> list[tuple[int, int, str]]:
    """Offsets and newline-adjusted content for `edits`, sorted; raises on overlap."""
    starts = line_starts(text) if starts is None else starts
    out = []
    for e in edits:
        a, b = _whole_line_ends(text, *edit_range(starts, len(text), e))
        out.append((a, b, _normalise_newlines(e.content, _line_ending_at(text, a))))
    out.sort(key=lambda r: (r[0], r[1]))
    for x, y in zip(out, out[1:], strict=False):
        if _conflict((x[0], x[1]), (y[0], y[1])):
            raise OverlappingEdits(f"edits overlap at offsets {x[0]}..{x[1]} and {y[0]}..{y[1]}")
    return out


def splice(text: str, resolved: Sequence[tuple[int, int, str]]) -> str:
    """Replace each sorted, non-overlapping (start, end, content) range of `text`."""
    parts = []
    pos = 0
    for a, b, content in resolved:
        parts.append(text[pos:a])
        parts.append(content)
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    return splice(text, resolve_edits(text, edits))


def bash_parses(text: str) -> bool:
    """True when tree-sitter-bash parses `text` without an error node.

    A file whose last line ends with a continuation `\\` is one bash accepts (`bash -n` too) and
    tree-sitter does not: it is parsed with the empty line bash reads after it, as the linter does.
    """
    from megalint.shell.parse import parse_bash  # not for a report read from the cache

    stripped = text.rstrip("\r\n")
    if (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1:
        text += "\n\n"
    return not parse_bash(text.encode("utf-8")).root_node.has_error


def is_applicable(d: Diagnostic, unsafe: bool, path: str | None = None) -> bool:
    f = d.fix
    if f is None or not f.edits:
        return False
    if f.applicability == Applicability.DISPLAY_ONLY:
        return False
    if f.applicability == Applicability.UNSAFE and not unsafe:
        return False
    target = d.span.path if path is None else path
    return all(e.span.path == target for e in f.edits)


@dataclass
class FixResult:
    """A text with fixes applied: which were, which were not and why."""

    original: str
    text: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    # Fixes dropped because the text no longer parsed with them applied.
    rejected: list[Diagnostic] = field(default_factory=list)
    passes: int = 0
    converged: bool = True
    # Why nothing was attempted (the input does not parse), else None.
    refused: str | None = None

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def fixed_count(self) -> int:
        return len(self.applied)

    @property
    def remaining_count(self) -> int:
        return len(self.remaining)

    @property
    def fixed_by_code(self) -> Counter[str]:
        return Counter(d.code for d in self.applied)


Resolved = list[tuple[int, int, str]]


def _edits(d: Diagnostic) -> Sequence[Edit]:
    # Only diagnostics with a fix reach the passes; the check keeps the type honest.
    assert d.fix is not None
    return d.fix.edits


def _order_key(starts: Sequence[int], n: int, d: Diagnostic) -> tuple[int, str, int, int]:
    first = min(edit_range(starts, n, e)[0] for e in _edits(d))
    return (first, d.code, d.span.start_line, d.span.start_col)


def _one_pass(
    text: str, candidates: list[Diagnostic], reparse_ok: Callable[[str], bool] | None
) -> tuple[str, list[Diagnostic], list[Diagnostic], list[Diagnostic]]:
    """Returns (new_text, applied, deferred, rejected)."""
    starts = line_starts(text)
    n = len(text)
    resolved_by_fix: list[tuple[Diagnostic, Resolved]] = []
    deferred: list[Diagnostic] = []
    for d in candidates:
        try:
            resolved_by_fix.append((d, resolve_edits(text, _edits(d), starts)))
        except (OverlappingEdits, ValueError):
            deferred.append(d)  # a fix at odds with itself is never applied
    resolved_by_fix.sort(key=lambda item: _order_key(starts, n, item[0]))

    def select(
        items: list[tuple[Diagnostic, Resolved]],
    ) -> tuple[list[tuple[Diagnostic, Resolved]], list[Diagnostic]]:
        taken_ranges: list[tuple[int, int]] = []
        taken: list[tuple[Diagnostic, Resolved]] = []
        later: list[Diagnostic] = []
        for d, res in items:
            ranges = [(a, b) for a, b, _ in res]
            if any(_conflict(r, t) for r in ranges for t in taken_ranges):
                later.append(d)
                continue
            taken_ranges.extend(ranges)
            taken.append((d, res))
        return taken, later

    taken, later = select(resolved_by_fix)
    merged = sorted((r for _, res in taken for r in res), key=lambda r: (r[0], r[1]))
    new = splice(text, merged)
    if reparse_ok is None or reparse_ok(new):
        return new, [d for d, _ in taken], deferred + later, []

    # Some fix broke the syntax: keep the ones that do not, in order.
    kept: list[tuple[Diagnostic, Resolved]] = []
    rejected: list[Diagnostic] = []
    current = text
    for d, res in taken:
        trial = kept + [(d, res)]
        trial_text = splice(text, sorted((r for _, rs in trial for r in rs), key=lambda r: (r[0], r[1])))
        if reparse_ok(trial_text):
            kept.append((d, res))
            current = trial_text
        else:
            rejected.append(d)
    return current, [d for d, _ in kept], deferred + later, rejected


def apply_fixes(
    text: str,
    diagnostics: Sequence[Diagnostic],
    unsafe: bool = False,
    reparse_ok: Callable[[str], bool] | None = None,
    *,
    relint: Callable[[str], Sequence[Diagnostic]] | None = None,
    path: str | None = None,
    max_passes: int = MAX_PASSES,
) -> FixResult:
    """Apply the applicable fixes of `diagnostics` (all for the one file `text`).

    Without `relint` one pass is made and `remaining` is every diagnostic not fixed.
    With it, the edited text is linted again after each pass and fixing continues until no
    applicable fix is left or `max_passes` is reached (`converged` is then False);
    `remaining` is the last lint's diagnostics. `path`, when given, restricts fixing to
    edits in that file; otherwise a fix is taken only if all its edits are in its
    diagnostic's own file.
    """
    result = FixResult(original=text, text=text)
    if reparse_ok is not None and not reparse_ok(text):
        result.refused = "the file does not parse; fixes are only applied to scripts that do"
        result.remaining = list(diagnostics)
        return result

    current = text
    diags = list(diagnostics)
    applied_ids: set[int] = set()
    for _ in range(max_passes):
        candidates = [d for d in diags if is_applicable(d, unsafe, path)]
        if not candidates:
            break
        new, applied, _deferred, rejected = _one_pass(current, candidates, reparse_ok)
        result.rejected = rejected
        if not applied:
            break
        result.passes += 1
        result.applied.extend(applied)
        applied_ids.update(id(d) for d in applied)
        current = new
        if relint is None:
            break
        diags = list(relint(current))
    else:
        result.converged = not any(is_applicable(d, unsafe, path) for d in diags)
    result.text = current
    if relint is None:
        result.remaining = [d for d in diags if id(d) not in applied_ids]
    else:
        result.remaining = diags
    return result


def applied_by_fix(
    text: str,
    diagnostics: Sequence[Diagnostic],
    unsafe: bool,
    reparse_ok: Callable[[str], bool] | None,
    relint: Callable[[str], Sequence[Diagnostic]],
    path: str | None = None,
) -> list[Diagnostic]:
    """The findings of `diagnostics` whose fix `apply_fixes` (with `relint`) applies.

    Where no two applicable fixes overlap, one pass takes them all and no lint is run. Where some
    do, the fixes held back are retried after a re-lint, and some of them are no longer needed
    (two launches after one `export` line both ask for the same new `export`): the passes are
    then run on the text in memory. A finding held back counts as fixed when a later pass applies
    a fix of its rule; matched in order, so that the count never exceeds what was applied.
    """
    candidates = [d for d in diagnostics if is_applicable(d, unsafe, path)]
    if not candidates:
        return []
    _new, applied, deferred, rejected = _one_pass(text, candidates, reparse_ok)
    if not deferred and not rejected:
        return applied
    res = apply_fixes(text, diagnostics, unsafe, reparse_ok, relint=relint, path=path)
    first = {id(d) for d in candidates}
    fixed = [d for d in res.applied if id(d) in first]
    later = Counter(d.code for d in res.applied if id(d) not in first)
    for d in deferred:
        if later[d.code] > 0:
            later[d.code] -= 1
            fixed.append(d)
    return fixed


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A patch `git apply` and `patch -p1` accept; empty when nothing changed."""
    if old == new:
        return ""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    import difflib  # only for --diff

    lines = list(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context))
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
