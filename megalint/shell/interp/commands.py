"""Simple commands: their words expanded, the builtins that change the state (a dispatch table),
calls of the script's functions, and the record of every other command as it would run.

`source`, `eval` and `bash -c` run text as a script of its own: nested_scripts.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.shell import arith
from megalint.shell.facts import CommandRecord, ShellFindingKind
from megalint.shell.interp import arithmetic, assignments, expansion, nested_scripts, variables
from megalint.shell.interp.state import MAX_CALL_DEPTH, Frame, Node, State, Var, resite
from megalint.shell.interp.syntax import local_names, plain_name, split_at_dollar
from megalint.shell.values import Unknown, Word
from megalint.source import Span

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

# A builtin: (evaluator, its name, its arguments, the command, where it is, the path, the frame).
Builtin = Callable[["Evaluator", str, list[Word], Node, Span, State, Frame], list[State]]

NOT_LAUNCH = frozenset(
    "echo printf mkdir cd rm cp mv ls cat sleep wait set trap ulimit touch chmod ln pushd popd "
    "true false : hostname date tee sed awk grep head tail sort uniq wc tr cut basename dirname "
    "pwd realpath readlink shift return exit test [ [[ unset read getopts".split()
)
# Commands whose arguments change nothing the evaluator tracks: their words need not be
# expanded unless an expansion itself assigns (`${X:=1}`, `$((i++))`) or may hold a finding.
INERT = frozenset(
    "echo printf mkdir rm cp mv ls cat sleep touch chmod ln tee sed awk grep head tail sort uniq wc tr "
    "cut hostname date true false : wait nvidia-smi pip mkdir find xargs".split()
)
_ASSIGNING = lazy_re.compile(r"\$\(\(|\(\(|\$\[|\$\{[^}]*=|\\|`|\$\(")
_NAME = lazy_re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def command(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    """A simple command: `VAR=x cmd args…`, or assignments alone."""
    assigns_nodes = []
    name_node = node.child_by_field_name("name")
    if name_node is not None:
        name_start = name_node.start_byte
        for c in node.children:  # `VAR=x cmd`: the assignments before the name
            if c.start_byte >= name_start:
                break
            if c.type == "variable_assignment":
                assigns_nodes.append(c)
    arg_nodes = node.children_by_field_name("argument")
    if name_node is not None and any(split_at_dollar(v) == name_node for v in _values(assigns_nodes)):
        # `X=$E/c/$D/t` read by the parser as `X=$E/c/$` then a command `D/t`: an assignment.
        name_node = None
    if name_node is None:
        for a in assigns_nodes:
            assignments.assign(ev, a, st, frame)
        return [st]
    name_text = plain_name(name_node)
    if name_text in INERT and not assigns_nodes and name_text not in st.funcs:
        args_text = frame.ps.parse_text[name_node.end_byte : node.end_byte]
        if not _ASSIGNING.search(args_text.decode("utf-8", "replace")):
            return [st]
    words: list[Word] = []
    words.extend(expansion.expand_word(ev, name_node, st, frame))
    cut_off = None
    for a in arg_nodes:
        if a.type in ("file_redirect", "heredoc_redirect", "herestring_redirect") or a == cut_off:
            continue
        words.extend(expansion.expand_word(ev, a, st, frame))
        cut_off = split_at_dollar(a)  # the rest of this word, read with it
    assigns = {}
    for a in assigns_nodes:
        n = a.child_by_field_name("name")
        v = a.child_by_field_name("value")
        if n is None:
            continue
        segs = expansion.expand_scalar(ev, v, st, frame) if v is not None else ()
        assigns[frame.ps.text(n)] = Word(resite(segs, frame.ps.span(v)) if v is not None else ())
    span = frame.ps.span(node)
    if not words:
        return [st]
    first = words[0].text
    if first is None and name_text is not None and not name_text.startswith("$"):
        first = name_text
    _check_flag_as_command(ev, node, name_node, first, frame)
    args = words[1:]
    builtin = BUILTINS.get(first) if first is not None else None
    if builtin is not None and first is not None:
        return builtin(ev, first, args, node, span, st, frame)
    if first in st.funcs:
        return _call_function(ev, first, args, st, frame)
    inner = nested_scripts.shell_c(words)
    if inner is not None:
        idx, script_word = inner
        return nested_scripts.run_shell_c(ev, words, idx, script_word, assigns, node, st, frame)
    if first is None or first not in NOT_LAUNCH or first in ("[", "test"):
        if first not in ("[", "test"):
            record(ev, words, assigns, span, st, frame)
    return [st]


def record(ev: Evaluator, words: list[Word], assigns: dict[str, Word], span: Span, st: State, frame: Frame) -> None:
    """Keep a command as it would run on this path, with the environment it would get."""
    env = {}
    for name, var in st.vars.items():
        if var.exported:
            env[name] = variables.var_word(ev, var)
    st.commands.append(
        CommandRecord(tuple(words), assigns, env, span, st.cond, frame.wrappers, st.in_loop, ev.headers_stack)
    )


def _call_function(ev: Evaluator, name: str, args: list[Word], st: State, frame: Frame) -> list[State]:
    if frame.depth >= MAX_CALL_DEPTH:
        return [st]
    body, ps = st.funcs[name]
    saved_pos = st.positional
    saved_vars = {k: v for k, v in st.vars.items()}
    st.positional = tuple(w.segments for w in args) if all(w.splat is None for w in args) else None
    key = (id(ps), body.start_byte, body.end_byte)
    known = ev.locals_of.get(key)
    if known is None or known[0] is not ps:
        names: set[str] = set()
        local_names(body, ps, names)
        known = ev.locals_of[key] = (ps, frozenset(names))
    declared_local = known[1]
    results = ev.stmt(body, [st], Frame(ps, frame.wrappers, frame.depth + 1))
    out = []
    for r in results:
        r.positional = saved_pos
        if r.returning:
            r.returning = False
            r.stopped = False
        for nm in declared_local:
            if nm in saved_vars:
                r.vars[nm] = saved_vars[nm]
            else:
                r.vars.pop(nm, None)
        out.append(r)
    return out


def _check_flag_as_command(ev: Evaluator, node: Node, name_node: Node, first: str | None, frame: Frame) -> None:
    if first is None or not first.startswith("--") or len(first) < 3:
        return
    if frame.ps.root.has_error:
        return
    prev = node.prev_named_sibling
    span = frame.ps.span(name_node)
    data = frame.ps.parse_text
    line_start = data.rfind(b"\n", 0, name_node.start_byte)
    if line_start > 0:
        prev_start = data.rfind(b"\n", 0, line_start) + 1
        if data[prev_start:line_start].rstrip().endswith(b"\\"):
            return
    if prev is None:
        return
    ev.finding(
        ShellFindingKind.FLAG_RUN_AS_COMMAND,
        span,
        f"`{first}` runs as a command: the line before it does not end in `\\`, so the "
        "command above stopped there and every flag from here on is lost",
        flag=first,
    )


# ---------------------------------------------------------------------- builtins


def _source(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    return nested_scripts.source(ev, args, span, st, frame)


def _eval(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    return nested_scripts.eval_string(ev, args, span, st, frame)


def _exit(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    st.stopped = True
    return [st]


def _return(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    st.stopped = True
    st.returning = True
    return [st]


def _break(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    st.stopped = True
    st.breaking = True
    return [st]


def _shift(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    n = 1
    count = args[0].text if args else None
    if count is not None and count.isdigit():
        n = int(count)
    if st.positional is not None:
        st.positional = st.positional[n:]
    return [st]


def _set(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    if args and args[0].text == "--":
        st.positional = tuple(w.segments for w in args[1:]) if all(w.splat is None for w in args[1:]) else None
    return [st]


def _let(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    for a in args:
        if a.text is not None:
            try:
                arithmetic.arith_eval(ev, a.text, st, frame, span)
            except (arith.ArithUnknown, arith.ArithError):
                pass
    return [st]


def _read(ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame) -> list[State]:
    """`read`, `readarray`, `mapfile`, `getopts`: the variables they name are set at run time."""
    for a in args:
        t = a.text
        if t and _NAME.fullmatch(t):
            st.vars[t] = Var(unknown=Unknown(f"`{t}` is read at run time by `{name}`", span), site=span)
    return [st]


def _declared(
    ev: Evaluator, name: str, args: list[Word], node: Node, span: Span, st: State, frame: Frame
) -> list[State]:
    # A declaration whose name came from an expansion (`$CMD X=1`): not followed, not a launch.
    return [st]


BUILTINS: dict[str, Builtin] = {
    "source": _source,
    ".": _source,
    "eval": _eval,
    "exit": _exit,
    "return": _return,
    "break": _break,
    "shift": _shift,
    "set": _set,
    "let": _let,
    "read": _read,
    "readarray": _read,
    "mapfile": _read,
    "getopts": _read,
    "export": _declared,
    "declare": _declared,
    "local": _declared,
    "readonly": _declared,
    "typeset": _declared,
}


# ---------------------------------------------------------------------- declarations


def declaration_command(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    """`export`, `declare`, `typeset`, `local`, `readonly`: their assignments, exports and locals."""
    kind = node.child(0).type if node.child(0) is not None else "declare"
    export = kind == "export"
    unexport = False
    for c in node.named_children:
        if c.type == "word":
            flag = frame.ps.text(c)
            if flag.startswith("-"):
                export = export or "x" in flag
                unexport = "n" in flag and kind == "export"
                continue
            name = flag
            var = st.vars.get(name)
            if var is None:
                var = st.vars[name] = variables.input_var(ev, name, frame.ps.span(c))
            if kind == "local":
                # A bare `local x` makes x empty inside the function.
                st.vars[name] = variables.input_var(ev, name, frame.ps.span(c), empty=True)
                var = st.vars[name]
            if export:
                st.vars[name] = variables.exported(ev, var) if not unexport else replace(var, exported=False)
        elif c.type == "variable_name":
            name = frame.ps.text(c)
            var = st.vars.get(name)
            if var is None:
                var = st.vars[name] = variables.input_var(ev, name, frame.ps.span(c))
            if export:
                st.vars[name] = variables.exported(ev, var)
        elif c.type == "variable_assignment":
            assigned = assignments.assign(ev, c, st, frame)
            if assigned and export and assigned in st.vars:
                st.vars[assigned] = variables.exported(ev, st.vars[assigned])
    return [st]


def unset_command(ev: Evaluator, node: Node, st: State, frame: Frame) -> list[State]:
    for c in node.named_children:
        name = frame.ps.text(c)
        if not name.startswith("-"):
            st.vars[name] = Var(scalar=None, unknown=None, site=frame.ps.span(c))
            st.vars.pop(name, None)
    return [st]


def _values(assigns_nodes: list[Node]) -> list[Node]:
    return [v for a in assigns_nodes if (v := a.child_by_field_name("value")) is not None]
