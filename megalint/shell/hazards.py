"""Shell-level hazards found in the text and tree, before any evaluation.

Each is a mistake bash accepts silently but which loses or corrupts the flags of a launch:
a `\\` followed by blanks (the next line becomes its own command), a parse error, an unfilled
template placeholder, an argument-parsing `case` arm that reads `$2` but shifts only once.
"""

from __future__ import annotations

import re

from tree_sitter import Node

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
    out.extend(_shift_mismatch(ps))
    return out


def _context(ps: ParsedScript, byte: int) -> str | None:
    node = ps.root.descendant_for_byte_range(byte, byte + 1)
    while node is not None:
        if node.type in _SKIP_CONTEXT:
            return node.type
        node = node.parent
    return None


_BACKSLASH_BLANKS = re.compile(r"\\[ \t]+$", re.M)
_UNESCAPED_BACKSLASH_BLANKS = re.compile(r"(?<!\\)((?:\\\\)*)(\\)([ \t]+)$", re.M)


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


def _shift_mismatch(ps: ParsedScript) -> list[ShellFinding]:
    out: list[ShellFinding] = []
    for node in ps.syntax("case"):
        subject = node.child_by_field_name("value")
        if subject is None or ps.text(subject).strip('"') not in ("$1", "${1}"):
            continue
        after = _shifts_after(node, ps)
        for item in node.named_children:
            if item.type != "case_item":
                continue
            reads = _reads_dollar2(item, ps)
            if reads is None:
                continue
            shifts = _count_shifts(item, ps)
            if shifts is None:
                continue
            if shifts + after < 2:
                span = ps.span(reads)
                pat = ps.text(item).split(")")[0].strip()
                out.append(
                    ShellFinding(
                        ShellFindingKind.SHIFT_MISMATCH,
                        span,
                        f"the `{pat})` arm reads `$2` but shifts {shifts + after} time(s) in all: its value is "
                        "then parsed as the next option",
                        {"pattern": pat, "shifts": shifts + after},
                    )
                )
    return out


def _reads_dollar2(item: Node, ps: ParsedScript) -> Node | None:
    stack = [item]
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion") and ps.text(n) in ("$2", "${2}"):
            return n
        stack.extend(reversed(n.children))
    return None


def _count_shifts(item: Node, ps: ParsedScript) -> int | None:
    total = 0
    stack = [item]
    while stack:
        n = stack.pop()
        if n.type == "command":
            name = n.child_by_field_name("name")
            if name is not None and ps.text(name) == "shift":
                args = [c for c in n.named_children if c != name]
                if not args:
                    total += 1
                elif ps.text(args[0]).isdigit():
                    total += int(ps.text(args[0]))
                else:
                    return None
            continue
        if n.type in ("if_statement", "case_statement", "while_statement", "for_statement"):
            return None if "shift" in ps.text(n) else total
        stack.extend(n.children)
    return total


def _shifts_after(case_node: Node, ps: ParsedScript) -> int:
    parent = case_node.parent
    if parent is None or parent.type != "do_group":
        return 0
    total = 0
    seen = False
    for c in parent.named_children:
        if c == case_node:
            seen = True
            continue
        if seen and c.type == "command":
            name = c.child_by_field_name("name")
            if name is not None and ps.text(name) == "shift":
                args = [x for x in c.named_children if x != name]
                total += int(ps.text(args[0])) if args and ps.text(args[0]).isdigit() else 1
    return total
