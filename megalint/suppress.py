"""Inline suppression comments.

Syntax (one directive per comment; codes are rule codes, code prefixes or rule names):

    cmd ...   # megalint: ignore[ML012]                 this physical line
    # megalint: ignore[ML012, fp16-and-bf16] -- reason  the next command, all its lines
    # megalint: disable[ML2]                            from here ...
    # megalint: enable[ML2]                             ... to here (same code text)
    # megalint: file-ignore[ML050] -- reason            the whole file, wherever it stands

- An own-line `ignore` covers the next command: the whole command when it spans lines
  (backslash continuations, `if … fi`, a function), found from the caller's command ranges
  or, by default, from tree-sitter-bash. Inside an array literal, where there is no command,
  it covers the next line and its backslash continuations.
- A trailing `ignore` covers findings that touch its line.
- `disable` without a matching `enable` runs to the end of the file.
- File scope is only ever explicit (`file-ignore`), never implied by position.
- `-- reason` is free text kept with the directive.

Findings about suppressions themselves:
ML001 unused-suppression (with a fix that removes what is unused),
ML002 unknown-rule-in-suppression, ML003 invalid-suppression (a malformed directive or an
`enable` without its `disable`). A code whose rule did not run (not enabled, or undecided
because its inputs were unknown) is never called unused: nothing proves it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from megalint import lazy_re
from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix
from megalint.engine.evaluate import emit
from megalint.engine.loader import packaged_rules
from megalint.engine.rule import Rule
from megalint.source import SourceFile, Span

UNUSED = "ML001"
UNKNOWN = "ML002"
INVALID = "ML003"

SUPPRESSION_CODES = (UNUSED, UNKNOWN, INVALID)


def suppression_rules() -> dict[str, Rule]:
    """ML001–ML003 by code, as the packaged rule files define them (rules/suppression/)."""
    rules = packaged_rules()
    return {code: rule for code in SUPPRESSION_CODES if (rule := rules.get(code)) is not None}


KINDS = ("ignore", "disable", "enable", "file-ignore")

_DIRECTIVE = lazy_re.compile(
    r"^#+[ \t]*megalint[ \t]*:[ \t]*(?P<kind>[A-Za-z][\w-]*)[ \t]*"
    r"(?:\[(?P<codes>[^\]]*)\])?[ \t]*(?P<tail>.*?)[ \t\r]*$",
    re.IGNORECASE,
)
_IS_DIRECTIVE = lazy_re.compile(r"^#+[ \t]*megalint[ \t]*:", re.IGNORECASE)
# A scheduler header (`#SBATCH`, `#PBS`, `#BSUB`, `#$`) with a directive after its options.
_HEADER_DIRECTIVE = lazy_re.compile(
    r"^#(?:SBATCH|PBS|BSUB|\$)\b[^#]*[ \t](?P<directive>#+[ \t]*megalint[ \t]*:.*)$", re.IGNORECASE
)
_TOKEN = lazy_re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_CODE_LIKE = lazy_re.compile(r"^(?:[A-Za-z]{1,8}[0-9]+|[A-Z]{1,8})$")

STATEMENT_TYPES = frozenset(
    {
        "command",
        "redirected_statement",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "test_command",
        "negated_command",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "if_statement",
        "case_statement",
        "pipeline",
        "list",
        "subshell",
        "compound_statement",
        "function_definition",
    }
)


@dataclass(frozen=True)
class CodeRef:
    """A rule code or name in a suppression comment, with where."""

    text: str
    span: Span
    # Lines this code covers; (0, -1) until known, e.g. for an `enable`.
    first_line: int = 0
    last_line: int = -1


@dataclass(frozen=True)
class Directive:
    """A `# megalint:` comment: what it suppresses or turns on, and where."""

    kind: str  # ignore | disable | enable | file-ignore | invalid
    path: str
    span: Span  # the whole comment
    codes: tuple[CodeRef, ...] = ()
    reason: str | None = None
    trailing: bool = False
    error: str | None = None  # for kind == "invalid"
    codes_span: Span | None = None  # inside the brackets
    removal: tuple[Edit, ...] = ()  # deletes the comment (and its line when alone on it)
    partners: tuple[int, ...] = ()  # indexes of the enable directives closing a disable


CommandRanges = Sequence[tuple[int, int]] | Callable[[int], "tuple[int, int] | None"]


def scan(text: str, path: str = "<script>") -> tuple[list[Span], list[tuple[int, int]]]:
    """Comment spans and statement line ranges of a script, from tree-sitter-bash."""
    from megalint.shell.parse import parse_bash  # not to describe the suppression rules to a report

    sf = SourceFile(path, text)
    tree = parse_bash(sf.data)
    comments: list[Span] = []
    ranges: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        t = node.type
        if t == "comment":
            comments.append(sf.span_bytes(node.start_byte, node.end_byte))
            continue
        if t in STATEMENT_TYPES:
            start = node.start_point[0] + 1
            end_row, end_col = node.end_point[0], node.end_point[1]
            end = end_row if (end_col == 0 and end_row + 1 > start) else end_row + 1
            ranges.append((start, max(end, start)))
        stack.extend(node.children)
    comments.sort(key=lambda s: s.start)
    return comments, ranges


def _range_lookup(command_ranges: CommandRanges) -> Callable[[int], tuple[int, int] | None]:
    if callable(command_ranges):
        return command_ranges
    widest: dict[int, int] = {}
    for a, b in command_ranges:
        widest[a] = max(widest.get(a, a), b)
    return lambda line: (line, widest[line]) if line in widest else None


def _continued_to(lines: list[str], line: int) -> int:
    """The last physical line of the logical line starting at `line` (backslash continuations)."""
    last = line
    while last <= len(lines) and lines[last - 1].rstrip("\r").endswith("\\") and last < len(lines):
        last += 1
    return last


def _removal(sf: SourceFile, comment: Span, trailing: bool) -> tuple[Edit, ...]:
    line_text = sf.line_text(comment.start_line)
    if trailing:
        before = line_text[: comment.start_col - 1]
        keep = len(before.rstrip(" \t"))
        start = comment.start - (len(before) - keep)
        return (Edit(sf.span(start, comment.end), ""),)
    line_start = comment.start - (comment.start_col - 1)
    end = line_start + len(line_text)
    if end < len(sf.text):
        end += 1  # the newline
    elif line_start > 0:
        line_start -= 1  # last line without a newline: take the one before it instead
        if line_start > 0 and sf.text[line_start - 1] == "\r":
            line_start -= 1
    return (Edit(sf.span(line_start, end), ""),)


def parse_directives(
    text: str, path: str, *, comments: Iterable[Span] | None = None, command_ranges: CommandRanges | None = None
) -> list[Directive]:
    """Every `# megalint:` directive of one script, with the lines each code covers.

    `comments` (spans of the script's comments) and `command_ranges` ((first, last) line of
    each command, or a function from a line to the command starting there) default to what
    tree-sitter-bash finds in `text`.
    """
    sf = SourceFile(path, text)
    if comments is None or command_ranges is None:
        found_comments, found_ranges = scan(text, path)
        comments = found_comments if comments is None else comments
        command_ranges = found_ranges if command_ranges is None else command_ranges
    lookup = _range_lookup(command_ranges)
    lines = text.split("\n")
    n_lines = len(lines) - (1 if text.endswith("\n") else 0)

    out: list[Directive] = []
    open_disables: dict[str, tuple[int, int]] = {}  # code text -> (directive index, code index)
    pending: dict[int, dict[int, CodeRef]] = {}  # disable index -> closed codes

    for c in comments:
        raw = text[c.start : c.end] if c.end > c.start else sf.line_text(c.start_line)[c.start_col - 1 :]
        inner = _HEADER_DIRECTIVE.match(raw) if not _IS_DIRECTIVE.match(raw) else None
        if inner is not None:
            # `#SBATCH --nodes=2  # megalint: ignore[…]`: the header line is one comment to bash,
            # the directive at its end trails the header as it would trail a command.
            cut = inner.start("directive")
            c, raw = sf.span(c.start + cut, c.end), raw[cut:]
        elif not _IS_DIRECTIVE.match(raw):
            continue
        before = sf.line_text(c.start_line)[: c.start_col - 1]
        trailing = bool(before.strip())
        m = _DIRECTIVE.match(raw)
        kind = m.group("kind").lower() if m else ""

        def invalid(msg: str, c: Span = c, trailing: bool = trailing) -> None:
            out.append(Directive("invalid", path, c, trailing=trailing, error=msg, removal=_removal(sf, c, trailing)))

        if m is None or kind not in KINDS:
            import difflib  # only for a name that is not known

            close = difflib.get_close_matches(kind, KINDS, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else f"; expected one of {', '.join(KINDS)}"
            invalid(f"unknown megalint directive `{kind or raw.strip()}`{hint}")
            continue
        if m.group("codes") is None:
            invalid(f"`{kind}` needs the codes in brackets, e.g. `# megalint: {kind}[ML012]`")
            continue
        tail = m.group("tail")
        reason = None
        if tail:
            if not tail.startswith("--"):
                invalid(f"unexpected text `{tail}` after the codes; write a reason as `-- reason`")
                continue
            reason = tail[2:].strip() or None
        base = c.start + m.start("codes")
        refs: list[CodeRef] = []
        bad = None
        pos = 0
        for part in m.group("codes").split(","):
            token = part.strip()
            offset = base + pos + (len(part) - len(part.lstrip()))
            pos += len(part) + 1
            if not token:
                bad = "an empty code in the list" if m.group("codes").strip() else "no codes in the brackets"
                break
            if not _TOKEN.match(token):
                bad = f"`{token}` is not a rule code or name"
                break
            refs.append(CodeRef(token, sf.span(offset, offset + len(token))))
        if bad:
            invalid(bad)
            continue
        codes_span = sf.span(c.start + m.start("codes"), c.start + m.end("codes"))
        line = c.start_line

        if kind == "file-ignore":
            refs = [replace(r, first_line=1, last_line=max(n_lines, 1)) for r in refs]
        elif kind == "ignore":
            if trailing:
                lo, hi = line, line
            else:
                nxt = line + 1
                while nxt <= n_lines and (not lines[nxt - 1].strip() or lines[nxt - 1].lstrip().startswith("#")):
                    nxt += 1
                if nxt > n_lines:
                    lo, hi = 0, -1  # nothing follows: covers nothing
                else:
                    found = lookup(nxt)
                    lo, hi = found if found else (nxt, _continued_to(lines, nxt))
            refs = [replace(r, first_line=lo, last_line=hi) for r in refs]
        elif kind == "disable":
            idx = len(out)
            for i, r in enumerate(refs):
                key = r.text.upper()
                if key in open_disables:
                    continue  # already disabled: the first disable keeps the range
                open_disables[key] = (idx, i)
            pending[idx] = {}
        elif kind == "enable":
            idx = len(out)
            unmatched = []
            for r in refs:
                key = r.text.upper()
                if key not in open_disables:
                    unmatched.append(r)
                    continue
                d_idx, r_idx = open_disables.pop(key)
                opener = out[d_idx]
                pending[d_idx][r_idx] = replace(opener.codes[r_idx], first_line=opener.span.start_line, last_line=line)
                if idx not in opener.partners:
                    out[d_idx] = replace(opener, partners=opener.partners + (idx,))
        out.append(Directive(kind, path, c, tuple(refs), reason, trailing, None, codes_span, _removal(sf, c, trailing)))
        if kind == "enable":
            for r in unmatched:
                out.append(
                    Directive(
                        "invalid",
                        path,
                        r.span,
                        trailing=trailing,
                        error=f"`enable[{r.text}]` has no matching `disable[{r.text}]` above it",
                    )
                )

    # Close the disables: matched codes end at their enable, the others at the end of the file.
    for d_idx, closed in pending.items():
        d = out[d_idx]
        closed_refs = tuple(
            closed.get(i, replace(r, first_line=d.span.start_line, last_line=max(n_lines, 1)))
            for i, r in enumerate(d.codes)
        )
        out[d_idx] = replace(d, codes=closed_refs)
    return out


# --- applying ------------------------------------------------------------------------------

KnownCodes = Mapping[str, object] | Iterable[str]


class _Catalogue:
    def __init__(self, known: KnownCodes):
        self.codes: set[str] = set()
        self.names: dict[str, str] = {}
        if isinstance(known, Mapping):
            for code, v in known.items():
                self.codes.add(code.upper())
                name = v if isinstance(v, str) else getattr(v, "name", None)
                if name:
                    self.names[name.lower()] = code.upper()
        else:
            for s in known:
                if _CODE_LIKE.match(s) and any(ch.isdigit() for ch in s):
                    self.codes.add(s.upper())
                else:
                    self.names[s.lower()] = s
        for code, rule in suppression_rules().items():
            self.codes.add(code)
            self.names[rule.name] = code

    def referred(self, token: str) -> set[str]:
        """The known codes a token stands for."""
        out: set[str] = set()
        if _CODE_LIKE.match(token):
            up = token.upper()
            out.update(c for c in self.codes if c.startswith(up))
        name = self.names.get(token.lower())
        if name:
            out.add(name.upper())
        return out

    def suggestion(self, token: str) -> str | None:
        pool = sorted(self.codes) + sorted(self.names)
        import difflib  # only for a name that is not known

        close = difflib.get_close_matches(token, pool, n=1, cutoff=0.6)
        return close[0] if close else None


def token_matches(token: str, d: Diagnostic) -> bool:
    if _CODE_LIKE.match(token) and d.code.upper().startswith(token.upper()):
        return True
    return bool(d.name) and token.lower() == d.name.lower()


def _covers(ref: CodeRef, directive: Directive, d: Diagnostic) -> bool:
    """Whether the code's lines cover the finding: the line it points at; for an `ignore`, also a
    line it labels in the same file (the assignment of a value it names) and, above a command, the
    command the finding is about (a launch whose `#SBATCH --nodes` line it points at)."""
    if directive.kind == "ignore" and directive.trailing:
        if d.span.start_line <= ref.first_line <= max(d.span.end_line, d.span.start_line):
            return True
        return any(lab.span.path == d.span.path and lab.span.start_line == ref.first_line for lab in d.labels)
    if ref.first_line <= d.span.start_line <= ref.last_line:
        return True
    if directive.kind != "ignore":
        return False
    if any(lab.span.path == d.span.path and ref.first_line <= lab.span.start_line <= ref.last_line for lab in d.labels):
        return True
    cmd = d.command
    return cmd is not None and cmd.path == d.span.path and ref.first_line <= cmd.start_line <= ref.last_line


def _finding(code: str, span: Span, finding: dict[str, object], fix: Fix | None = None) -> Diagnostic:
    return emit(suppression_rules()[code], span, finding, fix)


def apply_suppressions(
    diagnostics: Sequence[Diagnostic],
    directives: Iterable[Directive],
    known_codes: KnownCodes,
    *,
    enabled: Collection[str] | None = None,
    undecided: Collection[str] = (),
) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(kept, suppression_findings).

    `known_codes`: every rule code (a mapping code -> name or rule also makes names
    known). `enabled`: the codes that ran on these files (None: all known). `undecided`:
    codes whose rules ran but could not decide for lack of inputs. A suppression naming
    only rules outside `enabled`, or any rule in `undecided`, is not reported as unused.
    """
    directives = list(directives)
    cat = _Catalogue(known_codes)
    enabled_set = None if enabled is None else {c.upper() for c in enabled}
    undecided_set = {c.upper() for c in undecided}
    by_path: dict[str, list[int]] = {}
    for i, dv in enumerate(directives):
        by_path.setdefault(dv.path, []).append(i)
    used: set[tuple[int, int]] = set()

    def suppressed(d: Diagnostic) -> bool:
        hit = False
        for i in by_path.get(d.span.path, ()):
            dv = directives[i]
            if dv.kind not in ("ignore", "disable", "file-ignore"):
                continue
            for j, ref in enumerate(dv.codes):
                if token_matches(ref.text, d) and _covers(ref, dv, d):
                    used.add((i, j))
                    hit = True
        return hit

    kept = [d for d in diagnostics if not suppressed(d)]

    findings: list[Diagnostic] = []
    for dv in directives:
        if dv.kind == "invalid":
            findings.append(_finding(INVALID, dv.span, {"problem": dv.error or "invalid megalint directive"}))
            continue
        if dv.kind == "enable":
            continue
        for ref in dv.codes:
            if not cat.referred(ref.text):
                finding: dict[str, object] = {"code": ref.text}
                hint = cat.suggestion(ref.text)
                if hint:
                    finding["suggestion"] = hint
                findings.append(_finding(UNKNOWN, ref.span, finding))

    def provably_unused(ref: CodeRef) -> bool:
        codes = cat.referred(ref.text)
        if not codes or codes & undecided_set or UNUSED in codes:
            return False
        if enabled_set is not None and not (codes & (enabled_set | set(SUPPRESSION_CODES))):
            return False
        return True

    # Suppression findings can themselves be suppressed (e.g. `file-ignore[ML002]`).
    findings = [f for f in findings if not suppressed(f)]

    for i, dv in enumerate(directives):
        if dv.kind not in ("ignore", "disable", "file-ignore"):
            continue
        unused = [j for j, ref in enumerate(dv.codes) if (i, j) not in used and provably_unused(ref)]
        if not unused:
            continue
        first, last = dv.codes[unused[0]].span, dv.codes[unused[-1]].span
        span = Span(first.path, first.start_line, first.start_col, last.end_line, last.end_col, first.start, last.end)
        still = [ref.text for j, ref in enumerate(dv.codes) if j not in unused]
        # A code whose rule still fires in the file was written for that finding, which it does
        # not reach from here: the reader moves the comment; a fix must not delete it.
        firing = any(token_matches(dv.codes[j].text, d) for j in unused for d in kept if d.span.path == dv.path)
        fix = None if firing else _unused_fix(dv, still, directives)
        findings.append(_finding(UNUSED, span, {"codes": [dv.codes[j].text for j in unused]}, fix))
    findings = [f for f in findings if f.code != UNUSED or not suppressed(f)]
    findings.sort(key=lambda d: d.sort_key())
    return kept, findings


def _unused_fix(dv: Directive, still: list[str], directives: list[Directive]) -> Fix | None:
    if still:
        if dv.kind == "disable" or dv.codes_span is None:
            return None  # its enable would need the same change; left to the reader
        return Fix("remove the unused codes", Applicability.SAFE, (Edit(dv.codes_span, ", ".join(still)),))
    if dv.kind != "disable":
        return Fix("remove the suppression comment", Applicability.SAFE, dv.removal)
    mine = {r.text.upper() for r in dv.codes}
    edits = list(dv.removal)
    for p in dv.partners:
        enable = directives[p]
        if not {r.text.upper() for r in enable.codes} <= mine:
            return None
        edits.extend(enable.removal)
    return Fix("remove the disable comment and its enable", Applicability.SAFE, tuple(edits))
