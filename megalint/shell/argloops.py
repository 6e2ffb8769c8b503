"""Argument-parsing loops: a `case` arm that takes an option's value from the wrong place.

Scripts parse their own options in three shapes, and each has its own way to lose a value:

- a `shift` loop (`while [[ $# -gt 0 ]]`, `while (( $# ))`, …) over `case $1 in` or over a
  copy of it (`key="$1"; case $key in`): an arm that reads its value as `$2` must shift the
  arguments twice in all (in the arm, or after `esac`), or the next turn parses the value as an
  option;
- a `for arg in "$@"` loop: it visits every word once and `shift` does not move it, so `$2` is
  the script's second argument, not the word after the option (`--tp=*)` with `${arg#*=}` is
  the form that works);
- a `getopts` loop: a value is in `$OPTARG`, an option letter must be in the option string,
  with a `:` after it when it takes a value.

Each finding is at the arm's read or pattern; an arm whose shifts depend on a condition, or
that leaves the loop (`exit`, `return`, `break`), is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from megalint.shell.facts import ShellFinding, ShellFindingKind
from megalint.shell.parse import ParsedScript

_LOOPS = ("while_statement", "for_statement", "c_style_for_statement")
_NESTED = ("if_statement", "case_statement", "while_statement", "for_statement", "c_style_for_statement", "list")
_LEAVES = ("exit", "return", "break")
_SPECIAL_ARMS = ("*", "\\?", "?", ":", "'?'", '"?"', "':'", '":"')


@dataclass(frozen=True)
class _ShiftLoop:
    """A `while`/`case` loop that reads options and moves past them with `shift`."""

    before: int  # shifts between `key="$1"` and the `case`: the option's place has moved by this


@dataclass(frozen=True)
class _ForLoop:
    """A `for` loop over the script's arguments."""

    var: str


@dataclass(frozen=True)
class _Getopts:
    """A `getopts` loop."""

    options: str | None  # the option string without a leading `:`; None when not literal


_Loop = _ShiftLoop | _ForLoop | _Getopts


def argument_loop_findings(ps: ParsedScript) -> list[ShellFinding]:
    out: list[ShellFinding] = []
    for case in ps.syntax("case"):
        name = _plain_variable(case.child_by_field_name("value"), ps)
        if name is None:
            continue
        loop = _loop_of(case, name, ps)
        if loop is None:
            continue
        for arm in case.named_children:
            if arm.type != "case_item" or _leaves(arm, ps):
                continue
            if isinstance(loop, _ShiftLoop):
                out.extend(_shift_arm(case, arm, loop, ps))
            elif isinstance(loop, _ForLoop):
                out.extend(_for_arm(case, arm, loop, ps))
            else:
                out.extend(_getopts_arm(arm, loop, ps))
    return out


# ------------------------------------------------------------------ which loop the case reads


def _plain_variable(node: Node | None, ps: ParsedScript) -> str | None:
    """`x` of `$x`, `"$x"`, `${x}` or `"${x}"`; None for anything else."""
    if node is None:
        return None
    if node.type == "string":
        inner = node.named_children
        if len(inner) != 1:
            return None
        node = inner[0]
    if node.type == "simple_expansion" or (node.type == "expansion" and node.named_child_count == 1):
        var = node.named_children[0] if node.named_children else None
        if var is not None and var.type in ("variable_name", "special_variable_name"):
            return ps.text(var)
    return None


def _loop_of(case: Node, name: str, ps: ParsedScript) -> _Loop | None:
    loop = _enclosing_loop(case)
    if loop is not None and loop.type == "for_statement":
        var = loop.child_by_field_name("variable")
        if var is not None and ps.text(var) == name and _over_arguments(loop, ps):
            return _ForLoop(name)
    if loop is not None and loop.type == "while_statement":
        opts = _getopts_options(loop, name, ps)
        if opts is not False:
            return _Getopts(opts if isinstance(opts, str) else None)
    if name == "1":
        return _ShiftLoop(0)
    before = _shifts_since_copy(case, name, ps)
    return None if before is None else _ShiftLoop(before)


def _enclosing_loop(node: Node) -> Node | None:
    cur = node.parent
    while cur is not None and cur.type not in _LOOPS:
        if cur.type in ("function_definition", "subshell", "command_substitution"):
            return None
        cur = cur.parent
    return cur


def _over_arguments(loop: Node, ps: ParsedScript) -> bool:
    """`for x in "$@"` (or `$@`, `"${@}"`, `$*`) or `for x` with no list, which is the same."""
    values = [c for c in loop.children_by_field_name("value")]
    if not values:
        return not any(c.type == "in" for c in loop.children)
    return len(values) == 1 and ps.text(values[0]).strip('"') in ("$@", "${@}", "$*", "${*}")


def _getopts_options(loop: Node, name: str, ps: ParsedScript) -> str | bool | None:
    """The option string of `while getopts OPTS name`, None when it is not literal, False when
    the loop is not a getopts loop over `name`."""
    cond = loop.child_by_field_name("condition")
    if cond is None or cond.type != "command":
        return False
    cmd = cond.child_by_field_name("name")
    args = [c for c in cond.named_children if c != cmd and c.type != "variable_assignment"]
    if cmd is None or ps.text(cmd) != "getopts" or len(args) < 2 or ps.text(args[1]) != name:
        return False
    opts = args[0]
    if opts.type == "raw_string":
        return ps.text(opts)[1:-1].lstrip(":")
    if opts.type == "word" or (opts.type == "string" and all(c.type == "string_content" for c in opts.named_children)):
        return ps.text(opts).strip("\"'").lstrip(":")
    return None


def _shifts_since_copy(case: Node, name: str, ps: ParsedScript) -> int | None:
    """For `key="$1"; …; case $key in`: the shifts between the copy and the case, in the same
    block. None when the block does not copy `$1` into `name` before the case."""
    parent = case.parent
    if parent is None:
        return None
    siblings = parent.named_children
    shifts: int | None = None
    for node in siblings[: siblings.index(case)]:
        copied = _copies_first_argument(node, name, ps)
        if copied is not None:
            shifts = 0 if copied else None
        elif shifts is not None:
            n = _shift_count(node, ps)
            if n is None:
                return None
            shifts += n
    return shifts


def _copies_first_argument(node: Node, name: str, ps: ParsedScript) -> bool | None:
    """True for `name="$1"` (also under `local`/`declare`), False for another value given to
    `name`, None when the statement does not assign it."""
    if node.type == "declaration_command":
        found = [c for c in node.named_children if c.type == "variable_assignment"]
        return next((v for v in (_copies_first_argument(c, name, ps) for c in found) if v is not None), None)
    if node.type != "variable_assignment":
        return None
    var = node.child_by_field_name("name")
    if var is None or ps.text(var) != name:
        return None
    value = node.child_by_field_name("value")
    return value is not None and _plain_variable(value, ps) == "1"


# ------------------------------------------------------------------ counting shifts and reads


def _shift_count(node: Node, ps: ParsedScript) -> int | None:
    """How many places a statement shifts: 0 for a statement that is not `shift`, None for a
    shift by an amount not written as a number."""
    if node.type != "command":
        return 0
    cmd = node.child_by_field_name("name")
    if cmd is None or ps.text(cmd) != "shift":
        return 0
    args = [c for c in node.named_children if c != cmd]
    if not args:
        return 1
    text = ps.text(args[0])
    return int(text) if text.isdigit() else None


def _mentions_shift(node: Node, ps: ParsedScript) -> bool:
    return b"shift" in ps.parse_text[node.start_byte : node.end_byte]


@dataclass(frozen=True)
class _Read:
    """An argument an option's arm reads."""

    node: Node
    index: int  # the argument read, counted from the option's own place (1) when the turn began


def _walk_arm(arm: Node, ps: ParsedScript, shifted_before: int) -> tuple[int, list[_Read]] | None:
    """(shifts made by the arm, positional reads in the order written), or None when a shift
    depends on a condition or on a value."""
    shifts = 0
    reads: list[_Read] = []
    stack = list(reversed(arm.named_children))
    while stack:
        n = stack.pop()
        if n.type == "command":
            count = _shift_count(n, ps)
            if count is None:
                return None
            if count:
                shifts += count
                continue
        elif n.type in _NESTED and _mentions_shift(n, ps):
            return None
        index = _positional(n, ps)
        if index is not None:
            reads.append(_Read(n, shifted_before + shifts + index))
            continue
        stack.extend(reversed(n.named_children))
    return shifts, reads


def _positional(node: Node, ps: ParsedScript) -> int | None:
    """j of a read of `$j`, `${j}` or `${j:-…}` (j ≥ 1)."""
    if node.type not in ("simple_expansion", "expansion"):
        return None
    var = node.named_children[0] if node.named_children else None
    if var is None or var.type != "variable_name":
        return None
    text = ps.text(var)
    return int(text) if text.isdigit() and text != "0" else None


def _shifts_around(case: Node, ps: ParsedScript) -> int | None:
    """Shifts in the case's own block after `esac` (the common `shift` at the end of the turn);
    None when one of them is by an amount not written as a number."""
    parent = case.parent
    if parent is None or parent.type != "do_group":
        return 0
    total = 0
    siblings = parent.named_children
    for node in siblings[siblings.index(case) + 1 :]:
        n = _shift_count(node, ps)
        if n is None:
            return None
        total += n
    return total


def _leaves(arm: Node, ps: ParsedScript) -> bool:
    for n in arm.named_children:
        if n.type == "command":
            cmd = n.child_by_field_name("name")
            if cmd is not None and ps.text(cmd) in _LEAVES:
                return True
    return False


def _pattern(arm: Node, ps: ParsedScript) -> str:
    return ps.text(arm).split(")", 1)[0].strip()


def _patterns(arm: Node) -> list[Node]:
    out = []
    for c in arm.children:
        if c.type == ")":
            break
        if c.is_named:
            out.append(c)
    return out


def _finding(node: Node, ps: ParsedScript, message: str, **data: object) -> ShellFinding:
    return ShellFinding(ShellFindingKind.SHIFT_MISMATCH, ps.span(node), message, dict(data))


def _shifted(n: int) -> str:
    if n == 0:
        return "nothing shifts the arguments in this turn"
    return f"the arguments are shifted {'only once' if n == 1 else f'only {n} times'} in this turn"


# ------------------------------------------------------------------ the three loops


def _shift_arm(case: Node, arm: Node, loop: _ShiftLoop, ps: ParsedScript) -> list[ShellFinding]:
    walked = _walk_arm(arm, ps, loop.before)
    after = _shifts_around(case, ps)
    if walked is None or after is None:
        return []
    shifts, reads = walked
    total = loop.before + shifts + after
    beyond = [r for r in reads if r.index >= 2 and r.index > total]
    if not beyond:
        return []
    read = max(beyond, key=lambda r: r.index)
    pat = _pattern(arm, ps)
    missing = read.index - total
    if loop.before == 0 and after == 0 and shifts <= 1 and read.index == 2:
        fix = "`shift 2` in this arm"
    else:
        fix = f"{'one' if missing == 1 else missing} more `shift` in this arm"
    return [
        _finding(
            read.node,
            ps,
            f"the `{pat})` arm reads its value as `{ps.text(read.node)}`, but {_shifted(total)}: "
            "the value stays in place and the next turn parses it as an option, so the options after it "
            f"shift by one; write {fix}",
            pattern=pat,
            shifts=total,
            loop="shift",
        )
    ]


def _for_arm(case: Node, arm: Node, loop: _ForLoop, ps: ParsedScript) -> list[ShellFinding]:
    parent = case.parent
    if (
        parent is not None
        and parent.type == "do_group"
        and any(_shift_count(s, ps) for s in parent.named_children if s != case)
    ):
        return []  # the turn shifts the arguments along with the loop: `$2` is the next word there
    walked = _walk_arm(arm, ps, 0)
    if walked is None:
        return []
    shifts, reads = walked
    beyond = [r for r in reads if r.index >= 2]
    if not beyond:
        return []
    read = beyond[0]
    pat = _pattern(arm, ps)
    shifted = " (and `shift` does not move it)" if shifts else ""
    return [
        _finding(
            read.node,
            ps,
            f'the `{pat})` arm reads its value as `{ps.text(read.node)}` inside `for {loop.var} in "$@"`, '
            f"which visits every argument once{shifted}: `{ps.text(read.node)}` is the script's argument "
            f"number {read.index} wherever the option stands, not the word after it, and the loop then "
            f"reads that word as an option; match `{_eq_form(pat)}` and read `${{{loop.var}#*=}}`, "
            "or parse with `while [[ $# -gt 0 ]]` and `shift 2`",
            pattern=pat,
            shifts=shifts,
            loop="for",
        )
    ]


def _eq_form(pattern: str) -> str:
    first = pattern.split("|")[-1].strip().strip("\"'")
    return f"{first}=*)" if first.startswith("-") else "--option=*)"


def _getopts_arm(arm: Node, loop: _Getopts, ps: ParsedScript) -> list[ShellFinding]:
    out: list[ShellFinding] = []
    pat = _pattern(arm, ps)
    letters = [(p, ps.text(p).strip("\"'")) for p in _patterns(arm)]
    letters = [(p, t) for p, t in letters if len(t) == 1 and t.isalnum() and ps.text(p) not in _SPECIAL_ARMS]
    walked = _walk_arm(arm, ps, 0)
    reads = walked[1] if walked is not None else []
    optarg = _reads_optarg(arm, ps)
    opts = loop.options
    if opts is not None:
        for node, letter in letters:
            if letter not in opts.replace(":", ""):
                out.append(
                    _finding(
                        node,
                        ps,
                        f"`-{letter}` is handled by this arm but missing from getopts' option string "
                        f'"{opts}": getopts reports it as an illegal option and the arm never runs; add '
                        f"`{letter}{':' if optarg is not None else ''}` to the option string",
                        pattern=pat,
                        loop="getopts",
                    )
                )
            elif optarg is not None and not _takes_value(opts, letter):
                out.append(
                    _finding(
                        optarg,
                        ps,
                        f'`-{letter}` takes no value in getopts\' option string "{opts}" (no `:` after '
                        f"`{letter}`), so `$OPTARG` is empty here and the value is parsed as the next "
                        f"option; write `{letter}:` in the option string",
                        pattern=pat,
                        loop="getopts",
                    )
                )
    if reads:
        read = reads[0]
        out.append(
            _finding(
                read.node,
                ps,
                f"the `{pat})` arm of a getopts loop reads `{ps.text(read.node)}`: getopts puts the "
                f"option's value in `$OPTARG` and does not shift, so this is the script's argument number "
                f"{read.index} wherever the option stands; read `$OPTARG`",
                pattern=pat,
                loop="getopts",
            )
        )
    return out


def _takes_value(opts: str, letter: str) -> bool:
    i = opts.find(letter)
    return i >= 0 and opts[i + 1 : i + 2] == ":"


def _reads_optarg(arm: Node, ps: ParsedScript) -> Node | None:
    stack = list(reversed(arm.named_children))
    while stack:
        n = stack.pop()
        if n.type in ("simple_expansion", "expansion"):
            var = n.named_children[0] if n.named_children else None
            if var is not None and ps.text(var) == "OPTARG":
                return n
        stack.extend(reversed(n.named_children))
    return None
