"""`full`: the default human format, a header per finding and a code frame under it.

    train.sh:12:34: error ML012 [tp-divides-heads] 96 heads are not divisible by TP=7
       |
     3 | TP=7
       | ---- TP=7 set here
    ...
    11 | torchrun pretrain_gpt.py \\
    12 |     --tensor-model-parallel-size $TP \\
       |                                  ^^^
    13 |     --num-attention-heads 96 \\
       |
    help: use a tensor-parallel size that divides 96
    fix [*]: set TP to 8
       |
     3 - TP=7
     3 + TP=8
       |
    docs: https://…/ML012

Columns are display cells: tabs show as four spaces, East Asian wide characters take two
cells and control characters show as their visible Unicode pictures, so carets stay under
the characters they mean and no escape sequence from a script reaches the terminal. Every
source line is behind a gutter, so a CI log never sees a script line at column 0.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix
from megalint.fix import line_starts, resolve_edits, splice
from megalint.output.common import RenderOptions, doc_url, fixable, sort_diagnostics, summary_line
from megalint.source import SourceFile

if TYPE_CHECKING:
    from rich.style import Style

    from megalint.engine.rule import RuleInfo

# rich is imported where a finding is drawn (display cells, styles): a clean report is one
# plain line and needs none of it.

TAB = "    "
ELLIPSIS = "…"

STYLES = {
    "error": "bold red",
    "warning": "bold yellow",
    "info": "bold blue",
    "path": "bold",
    "code": "bold",
    "name": "dim",
    "gutter": "bold blue",
    "label": "bold blue",
    "help": "bold cyan",
    "note": "bold",
    "remove": "red",
    "add": "green",
    "dim": "dim",
    "link": "underline",
}


@cache
def _style(name: str) -> Style:
    from rich.style import Style

    return Style.parse(STYLES[name])


class Out:
    """Lines of (text, style) runs; plain or ANSI at the end."""

    def __init__(self, color: bool):
        self.color = color
        self.lines: list[list[tuple[str, str | None]]] = []

    def line(self, *runs: tuple[str, str | None]) -> None:
        # Messages can quote a script's text: no control character reaches the terminal.
        self.lines.append([(_visible(t), st) for t, st in runs if t])

    def text(self) -> str:
        out = []
        for runs in self.lines:
            if self.color:
                from rich.color import ColorSystem

                out.append(
                    "".join(_style(st).render(t, color_system=ColorSystem.STANDARD) if st else t for t, st in runs)
                )
            else:
                out.append("".join(t for t, _ in runs))
        return "\n".join(s.rstrip() if not self.color else s for s in out)


# --- display cells ---------------------------------------------------------------------


def cell_len(text: str) -> int:
    from rich.cells import cell_len as cells

    return cells(text)


def _show_char(ch: str) -> str:
    o = ord(ch)
    if ch == "\t":
        return TAB
    if o < 0x20:
        return chr(0x2400 + o)
    if o == 0x7F:
        return "\u2421"
    if 0x80 <= o < 0xA0:
        return "\ufffd"
    return ch


_CONTROL = lazy_re.compile("[\x00-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: _show_char(m.group()), text) if _CONTROL.search(text) else text


@dataclass
class DisplayLine:
    """A source line laid out in display cells."""

    pieces: list[str]  # per code point of the source line
    pos: list[int]  # display cell where each code point starts; pos[len] is the total

    @classmethod
    def of(cls, line: str) -> DisplayLine:
        if line.endswith("\r"):
            line = line[:-1]  # CRLF files show like LF ones
        if line.isascii() and line.isprintable():
            # Most lines of a launch script: each character is itself, one cell wide.
            return cls(list(line), list(range(len(line) + 1)))
        pieces = [_show_char(ch) for ch in line]
        pos = [0]
        for p in pieces:
            pos.append(pos[-1] + cell_len(p))
        return cls(pieces, pos)

    @property
    def width(self) -> int:
        return self.pos[-1]

    def cell(self, col: int) -> int:
        """Display cell of 1-based column `col` (past the end: after the last cell)."""
        i = col - 1
        if i <= 0:
            return 0
        if i >= len(self.pieces):
            return self.pos[-1] + (i - len(self.pieces))
        return self.pos[i]

    def render(self, lo: int, hi: int) -> str:
        """The cells [lo, hi); a wide character cut by an edge becomes spaces."""
        out = []
        for p, start, end in zip(self.pieces, self.pos, self.pos[1:], strict=False):
            if end <= lo or start >= hi:
                continue
            if start < lo or end > hi:
                out.append(" " * (min(end, hi) - max(start, lo)))
            else:
                out.append(p)
        return "".join(out)


@dataclass
class Mark:
    """The columns a finding's caret covers on one line."""

    first: int  # 1-based columns on this line, end exclusive
    last: int
    primary: bool
    text: str | None


@dataclass
class Annotation:
    """A span underlined in a code frame (the finding's own or a label's), with its text."""

    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    primary: bool
    text: str | None


def _first_non_space(line: str) -> int:
    stripped = line.lstrip(" \t")
    return len(line) - len(stripped) + 1


_STARTS: weakref.WeakKeyDictionary[SourceFile, list[int]] = weakref.WeakKeyDictionary()


def _starts(sf: SourceFile) -> list[int]:
    got = _STARTS.get(sf)
    if got is None:
        got = _STARTS[sf] = line_starts(sf.text)
    return got


def _real_line_count(sf: SourceFile) -> int:
    n = len(_starts(sf))
    if sf.text.endswith("\n"):
        n -= 1
    return max(n, 1)


def _marks_for(ann: Annotation, sf: SourceFile, max_span_lines: int) -> dict[int, Mark]:
    n = _real_line_count(sf)
    start_line = min(max(ann.start_line, 1), n)
    end_line, end_col = ann.end_line, ann.end_col
    if end_line > start_line and end_col == 1:
        # A span that stops at the start of a line ends on the line before.
        end_line -= 1
        end_col = len(sf.line_text(end_line).rstrip("\r")) + 1
    end_line = min(max(end_line, start_line), n)
    lines = list(range(start_line, end_line + 1))
    if len(lines) > max_span_lines:
        keep_head = max_span_lines // 2
        keep_tail = max_span_lines - keep_head
        lines = lines[:keep_head] + lines[-keep_tail:]
    marks = {}
    for ln in lines:
        text = sf.line_text(ln).rstrip("\r")
        if start_line == end_line:
            first, last = ann.start_col, max(end_col, ann.start_col)
        elif ln == start_line:
            first, last = ann.start_col, len(text) + 1
        elif ln == end_line:
            first, last = _first_non_space(text), end_col
        else:
            first, last = _first_non_space(text), len(text) + 1
        marks[ln] = Mark(first, max(last, first), ann.primary, ann.text if ln == end_line else None)
    return marks


def _window(dl: DisplayLine, spans: list[tuple[int, int]], avail: int) -> tuple[int, int, bool, bool]:
    """(lo, hi, left_ellipsis, right_ellipsis) cells of a line shown in `avail` cells."""
    total = dl.width
    if total <= avail or avail < 8:
        return 0, max(total, max((b for _, b in spans), default=0)), False, False
    focus_lo = min((a for a, _ in spans), default=0)
    focus_hi = max((b for _, b in spans), default=0)
    if focus_hi <= avail - 1:
        lo = 0
    else:
        lo = max(0, focus_lo - min(avail // 4, 16))
        lo = min(lo, max(0, total - (avail - 1)))
    left = lo > 0
    room = avail - (1 if left else 0)
    hi = lo + room
    right = hi < total
    if right:
        hi -= 1
    return lo, hi, left, right


class _Frame:
    def __init__(self, out: Out, gutter: int, opts: RenderOptions, sev_style: str):
        self.out = out
        self.gutter = gutter
        self.opts = opts
        self.sev_style = sev_style
        self.avail = max(opts.width - gutter - 3, 8)

    def bar(self, extra: str = "") -> None:
        self.out.line((" " * self.gutter + " |", "gutter"), (extra, None))

    def ellipsis(self) -> None:
        self.out.line(("...", "gutter"))

    def source(self, number: int | None, marker: str, text: str, style: str | None) -> None:
        num = str(number) if number is not None else ""
        self.out.line((num.rjust(self.gutter) + " " + marker, "gutter"), (" " + text if text else "", style))

    def annotated_line(self, number: int, dl: DisplayLine, marks: list[Mark]) -> None:
        cells = [(dl.cell(m.first), max(dl.cell(m.last), dl.cell(m.first) + 1)) for m in marks]
        lo, hi, left, right = _window(dl, cells, self.avail)
        shown = (ELLIPSIS if left else "") + dl.render(lo, hi) + (ELLIPSIS if right else "")
        self.source(number, "|", shown, None)
        shift = (1 if left else 0) - lo
        order = sorted(range(len(marks)), key=lambda i: (not marks[i].primary, cells[i][0]))
        for i in order:
            m = marks[i]
            a, b = cells[i]
            a, b = max(a + shift, 0), b + shift
            limit = (hi - lo) + (1 if left else 0)
            if a >= limit + (1 if right else 0):
                a = limit  # the span lies past the cropped edge: point at the ellipsis
                b = a + 1
            b = max(min(b, limit + (1 if right else 0)), a + 1)
            ch = "^" if m.primary else "-"
            style = self.sev_style if m.primary else "label"
            gutter = (" " * self.gutter + " |", "gutter")
            text = m.text or ""
            tw = cell_len(text)
            if not text or b + 1 + tw <= self.avail:
                self.out.line(
                    gutter, (" " + " " * a, None), (ch * (b - a), style), ((" " + text) if text else "", style)
                )
            elif tw + 1 <= a:
                # No room on the right: the text goes left of its marker.
                self.out.line(gutter, (" " + " " * (a - tw - 1), None), (text + " ", style), (ch * (b - a), style))
            else:
                self.out.line(gutter, (" " + " " * a, None), (ch * (b - a), style))
                if tw > self.avail:
                    text = _crop_from(text, self.avail, 0)
                    tw = cell_len(text)
                self.out.line(gutter, (" " + " " * max(0, min(a, self.avail - tw)), None), (text, style))


def _annotations(d: Diagnostic) -> list[Annotation]:
    s = d.span
    anns = [Annotation(s.path, s.start_line, s.start_col, s.end_line, s.end_col, True, None)]
    for lab in d.labels:
        t = lab.span
        anns.append(Annotation(t.path, t.start_line, t.start_col, t.end_line, t.end_col, False, lab.text))
    return anns


def _wrap(out: Out, head: str, style: str, body: str, width: int) -> None:
    indent = " " * (len(head) + 2)
    paragraphs = body.split("\n")
    first = True
    for para in paragraphs:
        import textwrap  # only for a long line

        lines = textwrap.wrap(
            para, width=max(width - len(indent), 20), break_long_words=False, break_on_hyphens=False
        ) or [""]
        for ln in lines:
            if first:
                out.line((head + ":", style), (" " + ln, None))
                first = False
            else:
                out.line((indent + ln, None))


def _fix_blocks(fix: Fix, sources: Mapping[str, SourceFile]) -> list[tuple[str, int, list[str], list[str]]]:
    """Per edited file: (path, first_line, old_lines, new_lines) for the fix preview."""
    by_path: dict[str, list[Edit]] = {}
    for e in fix.edits:
        by_path.setdefault(e.span.path, []).append(e)
    blocks = []
    for path, edits in by_path.items():
        sf = sources.get(path)
        if sf is None:
            continue
        starts = _starts(sf)
        try:
            resolved = resolve_edits(sf.text, edits, starts)
        except ValueError:
            continue
        first = sf.position(resolved[0][0])[0]
        last = sf.position(resolved[-1][1])[0]
        a = starts[first - 1]
        b = starts[last] - 1 if last < len(starts) else len(sf.text)  # at the newline
        b = max(b, resolved[-1][1])
        old_block = sf.text[a:b]
        new_block = splice(old_block, [(x - a, y - a, c) for x, y, c in resolved])
        old_lines = old_block.split("\n")
        new_lines = new_block.split("\n")
        # Drop the unchanged lines an edit's range merely touches.
        while len(old_lines) > 1 and len(new_lines) > 1 and old_lines[-1] == new_lines[-1]:
            old_lines.pop()
            new_lines.pop()
        while len(old_lines) > 1 and len(new_lines) > 1 and old_lines[0] == new_lines[0]:
            old_lines.pop(0)
            new_lines.pop(0)
            first += 1
        blocks.append((path, first, old_lines, new_lines))
    return blocks


def _first_difference(old: list[str], new: list[str]) -> int:
    """The first column (1-based) where the two blocks differ, over their first lines."""
    a, b = (old[0] if old else ""), (new[0] if new else "")
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    return i + 1


def _crop_from(text: str, avail: int, lo: int) -> str:
    """`text` shown from cell `lo`, in `avail` cells, ellipses marking cut ends."""
    dl = DisplayLine.of(text)
    if dl.width <= avail and lo == 0:
        return dl.render(0, dl.width)
    left = lo > 0
    room = avail - (1 if left else 0)
    hi = lo + room
    right = hi < dl.width
    if right:
        hi -= 1
    return (ELLIPSIS if left else "") + dl.render(lo, hi) + (ELLIPSIS if right else "")


def _crop_plain(text: str, avail: int, focus_col: int = 1) -> str:
    dl = DisplayLine.of(text)
    c = dl.cell(focus_col)
    lo, hi, left, right = _window(dl, [(c, c + 1)], avail)
    return (ELLIPSIS if left else "") + dl.render(lo, hi) + (ELLIPSIS if right else "")


def render_one(
    out: Out, d: Diagnostic, sources: Mapping[str, SourceFile], rules: Mapping[str, RuleInfo], opts: RenderOptions
) -> None:
    sev = d.severity.value
    s = d.span
    out.line(
        (f"{s.path}:{s.start_line}:{s.start_col}:", "path"),
        (" ", None),
        (sev, sev),
        (" ", None),
        (d.code, sev),
        (f" [{d.name}]" if d.name else "", "name"),
        (" " + d.message, None),
    )

    anns = _annotations(d)
    by_path: dict[str, list[Annotation]] = {}
    for a in anns:
        by_path.setdefault(a.path, []).append(a)

    frames = []  # (path, {line: [Mark]}, lines_to_show, sf)
    missing: list[Annotation] = []
    for path, group in by_path.items():
        sf = sources.get(path)
        if sf is None:
            missing.extend(a for a in group if not a.primary)
            continue
        per_line: dict[int, list[Mark]] = {}
        n = _real_line_count(sf)
        show: set[int] = set()
        hidden: set[int] = set()  # inside an elided span: never shown as filler
        for a in group:
            marks = _marks_for(a, sf, opts.max_span_lines)
            for ln, m in marks.items():
                per_line.setdefault(ln, []).append(m)
            first, last = min(marks), max(marks)
            show.update(marks)
            show.update(range(max(1, first - opts.context), first))
            show.update(range(last + 1, min(n, last + opts.context) + 1))
            hidden.update(ln for ln in range(first, last + 1) if ln not in marks)
        show -= hidden
        frames.append((path, per_line, sorted(show), sf, hidden))

    fix_blocks = _fix_blocks(d.fix, sources) if (d.fix and opts.show_fixes) else []
    numbers = [max(f[2]) for f in frames if f[2]]
    for _, first, old, new in fix_blocks:
        numbers.append(first + max(len(old), len(new)))
    gutter = len(str(max(numbers, default=1)))
    frame = _Frame(out, gutter, opts, sev)

    for path, per_line, shown, sf, hidden in frames:
        if path != s.path:
            first_ann = min((a for a in by_path[path]), key=lambda a: (a.start_line, a.start_col))
            out.line((" " * gutter + "::: ", "gutter"), (f"{path}:{first_ann.start_line}:{first_ann.start_col}", None))
        frame.bar()
        prev = None
        for ln in shown:
            if prev is not None and ln > prev + 1:
                if ln == prev + 2 and prev + 1 not in hidden:
                    frame.source(prev + 1, "|", _crop_plain(sf.line_text(prev + 1), frame.avail), None)
                else:
                    frame.ellipsis()
            dl = DisplayLine.of(sf.line_text(ln))
            if ln in per_line:
                frame.annotated_line(ln, dl, per_line[ln])
            else:
                lo, hi, left, right = _window(dl, [], frame.avail)
                frame.source(
                    ln, "|", (ELLIPSIS if left else "") + dl.render(lo, hi) + (ELLIPSIS if right else ""), None
                )
            prev = ln
        frame.bar()

    for a in missing:
        out.line(
            (" " * gutter + "::: ", "gutter"),
            (f"{a.path}:{a.start_line}:{a.start_col}", None),
            (f": {a.text}" if a.text else "", "label"),
        )

    width = opts.width
    if d.condition:
        _wrap(out, "note", "note", f"only when {d.condition}", width)
    if d.help:
        _wrap(out, "help", "help", d.help, width)
    if d.fix:
        if fixable(d, opts.unsafe_fixes):  # `[*]`: what --fix applies in this run, as in the summary
            head, tail = "fix [*]", ""
        elif d.fix.applicability == Applicability.UNSAFE:
            head, tail = "fix", " (unsafe: applied with --unsafe-fixes)"
        else:
            head, tail = "fix", " (not applied automatically)"
        _wrap(out, head, "help", d.fix.message + tail, width)
        for path, first, old, new in fix_blocks:
            if path != s.path:
                out.line((" " * gutter + "::: ", "gutter"), (path, None))
            frame.bar()
            focus = _first_difference(old, new)
            ref = max(old + new, key=lambda t: DisplayLine.of(t).width)
            dl = DisplayLine.of(ref)
            c = dl.cell(focus)
            lo = _window(dl, [(c, c + 1)], frame.avail)[0]
            for i, line in enumerate(old):
                frame.source(first + i, "-", _crop_from(line, frame.avail, lo), "remove")
            for i, line in enumerate(new):
                frame.source(first + i, "+", _crop_from(line, frame.avail, lo), "add")
            frame.bar()
    url = doc_url(d, rules)
    if url:
        out.line(("docs:", "dim"), (" ", None), (url, "link"))


def render(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, SourceFile],
    rules: Mapping[str, RuleInfo],
    options: RenderOptions | None = None,
) -> str:
    opts = options or RenderOptions()
    out = Out(opts.color)
    for i, d in enumerate(sort_diagnostics(diagnostics)):
        if i:
            out.line(("", None))
        render_one(out, d, sources, rules, opts)
    if opts.summary:
        if diagnostics:
            out.line(("", None))
        for line in summary_line(diagnostics, opts.unsafe_fixes).split("\n"):
            out.line((line, "note" if line.startswith("Found") else None))
    text = out.text()
    return text + "\n" if text else ""
