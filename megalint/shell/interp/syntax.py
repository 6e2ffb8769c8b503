"""Questions about the syntax tree that need no state: a command's plain name, whether a node is
a test, where an expansion inside "…" really starts, which variables a statement may assign."""

from __future__ import annotations

import re

from megalint import lazy_re
from megalint.shell.interp.state import Node
from megalint.shell.node_query import NodeQuery, Pattern
from megalint.shell.parse import LANGUAGE, ParsedScript

NOT_PLAIN = lazy_re.compile(rb"[^A-Za-z0-9_.,:/+@%=-]")  # a word outside this set may need expanding


def plain_name(node: Node | None) -> str | None:
    """The text of a command name (or word) that is written plainly, without quotes or `$`."""
    if node is None:
        return None
    t = node.type
    if t == "command_name":
        kids = node.named_children
        return plain_name(kids[0]) if kids else None
    if t == "word":
        return node.text.decode("utf-8", "replace") if node.text is not None else None
    return None


def is_test(node: Node) -> bool:
    """`[ … ]`, `[[ … ]]`, `test …` (or one negated): a test of strings, numbers or files."""
    if node.type == "test_command":
        return True
    if node.type == "command":
        name = node.child_by_field_name("name")
        return name is not None and plain_name(name) in ("[", "test", "[[")
    if node.type == "negated_command":
        return any(c.type in ("test_command", "command") and is_test(c) for c in node.named_children)
    return False


def effective_start(node: Node, data: bytes) -> int:
    """tree-sitter-bash lets an expansion that follows another inside "…" start with the blank
    between them (`"$A $B"`): the blank is literal text, not part of `$B`."""
    pos = node.start_byte
    while pos < node.end_byte and data[pos : pos + 1] in (b" ", b"\t", b"\n"):
        pos += 1
    return pos


def is_whole_expansion(node: Node) -> bool:
    """`$X`, `${X…}`, `$((…))`, `$(…)`, or one of the first three alone in "…"."""
    return node.type in ("simple_expansion", "expansion", "arithmetic_expansion", "command_substitution") or (
        node.type == "string"
        and len([c for c in node.named_children]) == 1
        and node.named_children[0].type in ("simple_expansion", "expansion", "arithmetic_expansion")
        and node.named_children[0].start_byte == node.start_byte + 1
        and node.named_children[0].end_byte == node.end_byte - 1
    )


def in_double_bracket(node: Node) -> bool:
    p = node.parent
    while p is not None:
        if p.type == "test_command":
            first = p.child(0)
            return first is not None and first.type == "[["
        p = p.parent
    return False


_ASSIGNED = NodeQuery(
    LANGUAGE,
    [
        Pattern("variable_assignment", field="name", child_capture="assign"),
        Pattern("for_statement", field="variable", child_capture="for"),
        Pattern("compound_statement", "arith"),
        Pattern("c_style_for_statement", "arith"),
        Pattern("arithmetic_expansion", "arith"),
        Pattern(
            "command",
            "reader",
            field="name",
            child="command_name",
            child_capture="name",
            any_of=("read", "let", "readarray", "mapfile", "getopts"),
        ),
    ],
)


def assigned_names(node: Node, ps: ParsedScript, acc: set[str]) -> None:
    """Add to `acc` every variable a statement may assign: assignments, loop variables,
    arithmetic assignments, and what `read`/`let`/`mapfile`/`getopts` set."""
    found = _ASSIGNED.captures(node)
    for nm in found.get("assign", ()):
        if nm.type == "subscript":
            nm = nm.child_by_field_name("name") or nm
        acc.add(ps.text(nm))
    for v in found.get("for", ()):
        acc.add(ps.text(v))
    for n in found.get("arith", ()):
        txt = ps.text(n)
        if "((" in txt:
            for m in re.finditer(
                r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)",
                txt,
            ):
                acc.add(m.group(1) or m.group(2) or m.group(3))
    for n in found.get("reader", ()):
        for c in n.named_children[1:]:
            w = ps.text(c)
            name = re.match(r"([A-Za-z_][A-Za-z0-9_]*)", w)
            if name and not w.startswith("-"):
                acc.add(name.group(1))


def local_names(body: Node, ps: ParsedScript, acc: set[str]) -> None:
    """Add to `acc` the variables a function body declares `local` (or `declare`/`typeset`),
    not counting functions defined inside it."""
    stack = [body]
    while stack:
        n = stack.pop()
        if (
            n.type == "declaration_command"
            and n.child(0) is not None
            and n.child(0).type in ("local", "declare", "typeset")
        ):
            for c in n.named_children:
                if c.type == "variable_assignment":
                    nm = c.child_by_field_name("name")
                    if nm is not None:
                        acc.add(ps.text(nm))
                elif c.type in ("variable_name", "word") and not ps.text(c).startswith("-"):
                    acc.add(ps.text(c))
        if n.type == "function_definition" and n is not body:
            continue
        stack.extend(n.children)


def split_at_dollar(node: Node) -> Node | None:
    """The node tree-sitter-bash cut off this word, when it cut the word in two at a `$NAME`.

    The grammar reads `X=$E/c/$D/t` as `X=$E/c/$` followed by a command `D/t`, and `cmd $E/c/$D/t`
    as two arguments (an expansion, then a word, then `$NAME` and more text). The sign is a word
    ending in a bare `$` with the next node starting right after it, with no blank between."""
    if node.type != "concatenation" or not node.children or node.children[-1].type != "$":
        return None
    up: Node | None = node
    while up is not None and up.next_sibling is None:  # `X=…` ends with its value
        up = up.parent
    after = up.next_sibling if up is not None else None
    if after is None or after.start_byte != node.end_byte:
        return None
    return after
