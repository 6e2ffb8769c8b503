"""Shell-level hazards found in the text and tree, before any evaluation.

Each is a mistake bash accepts silently but which loses or corrupts the flags of a launch:
a `\\` followed by blanks (the next line becomes its own command), a parse error, an unfilled
template placeholder, an argument-parsing `case` arm that takes its value from the wrong place
(`argloops.py`).
"""

from __future__ import annotations

import re

from megalint import lazy_re
from megalint.shell.argloops import argument_loop_findings
from megalint.shell.facts import ShellFinding, ShellFindingKind
from megalint.shell.parse import ParsedScript

_SKIP_CONTEXT = {
    "comment",
    "string",
    "raw_string",
    "heredoc_body",
    "heredoc_content",
    "string_content",
    "ansi_c_string",
}
MAX_PARSE_ERRORS = 1  # later errors are mostly the same one, seen again by error recovery


def find_hazards(ps: ParsedScript) -> list[ShellFinding]:
    out: list[ShellFinding] = []
    out.extend(_trailing_blanks(ps))
    out.extend(_parse_errors(ps))
    for ph in ps.placeholders:
        text = ps.source.text[ph.start : ph.end]
        out.append(
            ShellFinding(
                ShellFindingKind.UNFILLED_PLACEHOLDER,
                ph,
                f"`{text}` is an unfilled template placeholder: bash reads `<` as a redirection "
                "and the value stays empty",
                {"placeholder": text},
            )
        )
    if ps.ends_with_continuation is not None:
        out.append(
            ShellFinding(
                ShellFindingKind.BACKSLASH_AT_EOF,
                ps.ends_with_continuation,
                "the file ends with a continuation `\\`: harmless to bash, but a line added "
                "below it later would silently join the command",
            )
        )
    out.extend(argument_loop_findings(ps))
    return out


def _context(ps: ParsedScript, byte: int) -> str | None:
    node = ps.root.descendant_for_byte_range(byte, byte + 1)
    while node is not None:
        if node.type in _SKIP_CONTEXT:
            return node.type
        node = node.parent
    return None


_BACKSLASH_BLANKS = lazy_re.compile(r"\\[ \t]+$", re.M)
_UNESCAPED_BACKSLASH_BLANKS = lazy_re.compile(r"(?<!\\)((?:\\\\)*)(\\)([ \t]+)$", re.M)


def _trailing_blanks(ps: ParsedScript) -> list[ShellFinding]:
    out: list[ShellFinding] = []
    text = ps.source.text
    if not _BACKSLASH_BLANKS.search(text):
        return out  # the full pattern tries every position: only run it where it can match
    for m in _UNESCAPED_BACKSLASH_BLANKS.finditer(text):
        start = m.start(2)
        byte = len(text[:start].encode("utf-8"))
        ctx = _context(ps, byte)
        if ctx in ("comment", "heredoc_body", "heredoc_content", "raw_string"):
            continue
        if ctx in ("string", "string_content"):
            continue  # reported by the evaluator as a stray `\` word
        span = ps.source.span(start, m.end(3))
        out.append(
            ShellFinding(
                ShellFindingKind.BACKSLASH_TRAILING_BLANK,
                span,
                "`\\` is followed by blanks, so it escapes a blank instead of continuing the line: "
                "the next line runs as a separate command",
                {"blanks": len(m.group(3))},
            )
        )
    return out


def _parse_errors(ps: ParsedScript) -> list[ShellFinding]:
    if not ps.root.has_error:
        return []
    out: list[ShellFinding] = []
    stack = [ps.root]
    while stack and len(out) < MAX_PARSE_ERRORS:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            size = len(ps.source.text)
            # A missing token at the very end (`(0` then EOF) is shown on the last character.
            start = min(ps.source.char_offset(node.start_byte), max(0, size - 1))
            line, _ = ps.source.position(start)
            line_end = len(ps.source.line_text(line)) + (start - ps.source.position(start)[1] + 1)
            end = min(max(start + 1, min(ps.source.char_offset(node.end_byte), line_end)), size)
            span = ps.source.span(start, end)
            what = f"missing `{node.type}`" if node.is_missing else "a construct megalint cannot read"
            out.append(
                ShellFinding(
                    ShellFindingKind.PARSE_ERROR,
                    span,
                    f"{what} here; the rest of the file is still checked, but values set in this part are unknown",
                    {"missing": node.is_missing},
                )
            )
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    out.sort(key=lambda f: f.span.start)
    return out
