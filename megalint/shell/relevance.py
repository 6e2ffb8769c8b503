"""Which top-level statements of a script cannot change what a launch sees.

Most lines of a launch script are bookkeeping: `echo`, `mkdir -p`, a run name built from
`$(date)`, a loop that prints, a token count nobody reads. Evaluating them costs most of the
time and, when they sit under an undecided `if`, doubles the paths for nothing. A top-level
statement is skipped when both hold:

1. **It has no effect but assignments.** Every command in it is one whose only effects the
   evaluator ignores anyway (`echo`, `mkdir`, `date`, tests, …; see SAFE_COMMANDS); it
   declares, exports, unsets and defines nothing; it cannot stop the script (`exit`,
   `${X:?}`); no expansion assigns (`${X:=1}`, `$((i++))`); and it holds nothing the
   evaluator reports on (a division in `$(( ))`, a `\\` followed by blanks, a parse error).
2. **Nothing evaluated reads what it assigns.** "Reads" is over-approximated lexically: every
   identifier in the text of the statements that are evaluated counts, so `let "a=b+1"`,
   `[[ $x -gt LIMIT ]]`, `${A[i]}`, heredoc bodies and single-quoted `bash -c` strings are all
   covered without modelling each. The skipped set is the greatest fixpoint: start from every
   candidate, put back each one that assigns a name some evaluated statement mentions, repeat.

Text the evaluator only meets while it runs (a sourced file, the string of an `eval` or
`bash -c`, a here-document script) is checked then: when it names a variable a skipped statement
assigns, the evaluation starts again with those names read (interp/core.py, NeedsReads). Code that reads
variables by a name no text spells turns condition 2 off, so only statements that assign nothing
are skipped: indirection `${!name}`, namerefs (`declare -n`), `set -a` (everything is exported).
Commands recorded, their arguments and environment are the same with and without skipping;
tests/shell/test_relevance.py checks that on every fixture and on generated scripts.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from megalint import lazy_re
from megalint.shell.parse import ParsedScript

# Commands the evaluator neither records nor follows (interp/commands.py: INERT ∩ NOT_LAUNCH, plus the
# path helpers and tests): running them changes nothing it tracks.
SAFE_COMMANDS = frozenset(
    "echo mkdir rm cp mv ls cat sleep touch chmod ln tee sed awk grep head tail sort uniq wc tr cut "
    "hostname date true false : wait [ test cd pwd dirname basename realpath readlink".split()
)
_SAFE = frozenset(c.encode() for c in SAFE_COMMANDS)

_CANDIDATES = frozenset(
    {
        "variable_assignment",
        "variable_assignments",
        "command",
        "if_statement",
        "for_statement",
        "while_statement",
        "case_statement",
        "list",
        "pipeline",
        "redirected_statement",
        "subshell",
        "negated_command",
        "test_command",
        "compound_statement",
    }
)


# Reads by a name no text spells: `${!x}`, `declare -n`/`local -n`, `set -a`/`set -o allexport`.
# One literal-led pattern each: an alternation would be tried at every position.
_NAMEREF = tuple((kw, re.compile(kw + rb"\s+-\w*n")) for kw in (b"declare", b"local", b"typeset"))
_ALLEXPORT = lazy_re.compile(rb"set\s+(?:-\w*a|-o\s+allexport)")
_IDENT_B = lazy_re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# In `$(( ))`: an assignment, `++`/`--`, a base (`16#ff`), `**` (a negative exponent fails), or a
# division that is not by a non-zero number written out (division by 0 is reported).
_ARITH_UNSAFE = lazy_re.compile(rb"(?<![=!<>])=(?!=)|\+\+|--|#|\*\*|[/%](?!\s*[1-9][0-9]*(?![0-9A-Za-z_.\[]))")
# `${X:=v}`, `${X=v}` assign; `${X:?msg}`, `${X?}` stop the script: a `=` or `?` before the `}`.
# Read over the whole text: a match inside quotes or a comment only keeps a statement that could
# have been skipped.
_EXPANSION_UNSAFE = lazy_re.compile(rb"\$\{[^}=?]*[=?]")
_STRAY_BACKSLASH = lazy_re.compile(rb"\\[ \t]+\n")


def _dynamic(data: bytes) -> bool:
    if b"${!" in data or (b"set" in data and _ALLEXPORT.search(data)):
        return True
    return any(kw in data and pattern.search(data) for kw, pattern in _NAMEREF)


def names_read(text: str) -> frozenset[str] | None:
    """The names text may read (every identifier in it), or None when it may read names it
    does not spell."""
    data = text.encode("utf-8", "replace")
    if _dynamic(data):
        return None
    return frozenset(n.decode() for n in _IDENT_B.findall(data))


class Skip(NamedTuple):
    statements: frozenset[tuple[int, int]]  # (start_byte, end_byte) of the top-level statements to pass over
    names: frozenset[str]  # the variables those statements assign


NOTHING = Skip(frozenset(), frozenset())


def skippable(ps: ParsedScript, also_read: frozenset[str] | None = frozenset()) -> Skip:
    """The top-level statements the evaluator may pass over. `also_read`: names read by text
    met at run time; None when that text reads names no text spells (keep every assignment)."""
    data = ps.parse_text
    # each statement's (start, end, may be skipped): one read of each node
    shapes: list[tuple[int, int, bool]] = []
    for n in ps.top_level():
        t = n.type
        if t != "comment":
            shapes.append((n.start_byte, n.end_byte, t in _CANDIDATES))
    if not any(shape[2] for shape in shapes):
        return NOTHING
    functions = {n.text for n in ps.syntax("function")}
    unsafe: list[int] = []
    for n in ps.syntax("command_name"):
        name = n.text
        if name not in _SAFE or name in functions:
            unsafe.append(n.start_byte)
    unsafe.extend(n.start_byte for n in ps.syntax("unsafe"))
    unsafe.extend(n.start_byte for n in ps.syntax("compound") if data[n.start_byte : n.end_byte].startswith(b"(("))
    unsafe.extend(n.start_byte for n in ps.syntax("arith") if _ARITH_UNSAFE.search(data[n.start_byte : n.end_byte]))
    if b"${" in data:
        unsafe.extend(m.start() for m in _EXPANSION_UNSAFE.finditer(data))
    if b"\\" in data:
        unsafe.extend(m.start() for m in _STRAY_BACKSLASH.finditer(data))
    unsafe.sort()
    assigned = sorted(ps.assigned_names().items())
    assigned_at = [a[0] for a in assigned]
    assigned_names = [a[1] for a in assigned]

    # candidate statement -> the names it assigns; one sweep, the three lists are in file order
    candidates: dict[tuple[int, int], list[bytes]] = {}
    kept: list[tuple[int, int]] = []
    ui = ai = 0
    n_unsafe, n_assigned = len(unsafe), len(assigned_at)
    for a, b, candidate in shapes:
        while ui < n_unsafe and unsafe[ui] < a:
            ui += 1
        while ai < n_assigned and assigned_at[ai] < a:
            ai += 1
        if not candidate or (ui < n_unsafe and unsafe[ui] < b):
            kept.append((a, b))
            continue
        lo = ai
        while ai < n_assigned and assigned_at[ai] < b:
            ai += 1
        candidates[(a, b)] = assigned_names[lo:ai]
    if not candidates:
        return NOTHING
    if also_read is None or _dynamic(data):
        # Names may be read that no text here spells: keep every statement that assigns.
        return Skip(frozenset(key for key, names in candidates.items() if not names), frozenset())

    # The greatest fixpoint, as a work list: a statement is put back (and what it reads becomes
    # read) when a name it assigns is read.
    read: set[bytes] = {name.encode() for name in also_read}
    findall = _IDENT_B.findall
    for a, b in kept:
        read.update(findall(data, a, b))
    waiting: dict[bytes, list[tuple[int, int]]] = {}  # name -> the pending statements that assign it
    back: list[tuple[int, int]] = []
    pending: dict[tuple[int, int], list[bytes]] = {}
    for key, names in candidates.items():
        if not names:
            continue
        if not read.isdisjoint(names):
            back.append(key)
        else:
            pending[key] = names
            for name in names:
                waiting.setdefault(name, []).append(key)
    while back:
        a, b = back.pop()
        for ident in findall(data, a, b):
            if ident in read:
                continue
            read.add(ident)
            for key in waiting.pop(ident, ()):
                if pending.pop(key, None) is not None:
                    back.append(key)
    skipped_names: set[bytes] = set()
    for assigned_here in pending.values():
        skipped_names.update(assigned_here)
    skipped = [key for key, assigned_here in candidates.items() if not assigned_here or key in pending]
    return Skip(frozenset(skipped), frozenset(n.decode("utf-8", "replace") for n in skipped_names))
