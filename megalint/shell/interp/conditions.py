"""Conditions: whether `[ … ]`, `[[ … ]]`, `test`, `(( ))`, `true`/`false` and their `&&`/`||`/`!`
combinations are known to succeed, and what an undecided test tells the rest of its path.

A test on values the script fixed is decided here. One that is not forks the path (control.py);
each side remembers the outcome it took, so the same test on the same values later goes the
same way, and `[ $X = a ]` decides `[ $X != a ]` (equality.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast

from megalint import lazy_re
from megalint.shell import arith, equality
from megalint.shell.interp import arithmetic, expansion
from megalint.shell.interp.patterns import glob_match
from megalint.shell.interp.state import MAX_CONDITION_DEPTH, Frame, Node, State, scalar_text
from megalint.shell.interp.syntax import in_double_bracket, is_test, plain_name

if TYPE_CHECKING:
    from megalint.shell.interp.core import Evaluator

# A test's text and the identity of every value it read: the same key means the same question.
TestKey = tuple[str, tuple[tuple[str, int], ...]]
# What a path remembers when an undecided test forks it: the key, the values read (kept alive
# while the key holds their identities), and the comparison the test makes, if a plain one.
Undecided = tuple[TestKey, tuple[object, ...], equality.Comparison | None]

# Tests of files, terminals and the like: their outcome may change as the script runs.
_MACHINE_TEST = lazy_re.compile(r"(?<![\w-])-(?:[a-hkprstuwxvGLNOS]|nt|ot|ef)(?![\w-])")
_INT = lazy_re.compile(r"\s*[-+]?\d+\s*")


def decide(ev: Evaluator, node: Node, st: State, frame: Frame) -> tuple[bool | None, Undecided | None]:
    """(verdict, key): the verdict of a condition, or the way this path already took the same
    test on the same values; key is what to remember when it forks (None: not repeatable)."""
    saved_reads, saved_impure = ev.reads, ev.impure
    reads: dict[str, object] = {}
    ev.reads, ev.impure = reads, False
    try:
        verdict = condition_value(ev, node, st, frame)
        impure = ev.impure
    finally:
        ev.reads, ev.impure = saved_reads, saved_impure
    if verdict is not None or impure:
        return verdict, None
    text = frame.ps.text(node)
    # Only tests of strings and numbers repeat: files and the environment change as it runs.
    if not is_test(node) or _MACHINE_TEST.search(text):
        return None, None
    key: TestKey = (text, tuple((name, id(v)) for name, v in reads.items()))
    got = st.taken.get(key)
    if got is not None:
        return cast(bool, got[0]), None
    cmp = equality.comparison(text)  # `= 70B` earlier decides `!= 70B` here
    recalled = equality.recall(st.taken, cmp, key[1]) if cmp is not None else None
    if recalled is not None:
        return recalled, None
    return None, (key, tuple(reads.values()), cmp)


def remember(st: State, key: Undecided | None, verdict: bool) -> None:
    """The path took an undecided test one way: the same question later gets the same answer."""
    if key is not None:
        st.taken[key[0]] = (verdict, key[1])
        if key[2] is not None:
            equality.learn(st.taken, key[2], key[0][1], verdict, key[1])


def condition_value(ev: Evaluator, node: Node | None, st: State, frame: Frame, depth: int = 0) -> bool | None:
    """True/False when the exit status of a condition is known statically, else None."""
    if node is None or depth > MAX_CONDITION_DEPTH:
        return None
    t = node.type
    if t == "test_command":
        inner = [c for c in node.named_children]
        if len(inner) != 1:
            return None if inner else False
        return _test_expr(ev, inner[0], st, frame)
    if t == "negated_command":
        inner = node.named_children
        v = condition_value(ev, inner[0], st, frame, depth + 1) if inner else None
        return None if v is None else not v
    if t == "command":
        name = node.child_by_field_name("name")
        nm = plain_name(name) if name is not None else None
        if nm in ("true", ":"):
            return True
        if nm == "false":
            return False
        if nm in ("[", "test"):
            words = []
            for i, c in enumerate(node.children):
                if node.field_name_for_child(i) == "argument":
                    words.extend(expansion.expand_word(ev, c, st, frame))
            if nm == "[" and words and words[-1].text == "]":
                words = words[:-1]
            return _test_words([w.text for w in words])
        return None
    if t == "compound_statement" and node.child(0) is not None and node.child(0).type == "((":
        try:
            return bool(arithmetic.arith_eval(ev, frame.ps.text(node)[2:-2], st.fork(), frame, None))
        except (arith.ArithUnknown, arith.ArithError):
            return None
    if t == "list":
        named = node.named_children
        ops = [c.type for c in node.children if not c.is_named]
        if len(named) == 2 and ops:
            a = condition_value(ev, named[0], st, frame, depth + 1)
            b = condition_value(ev, named[1], st, frame, depth + 1)
            if ops[0] == "&&":
                if a is False or b is False:
                    return False
                return True if a and b else None
            if ops[0] == "||":
                if a is True or b is True:
                    return True
                return False if a is False and b is False else None
    if t == "redirected_statement":
        body = node.child_by_field_name("body")
        return condition_value(ev, body, st, frame, depth + 1)
    return None


def _test_expr(ev: Evaluator, node: Node | None, st: State, frame: Frame, depth: int = 0) -> bool | None:
    """The outcome of the expression inside `[[ … ]]`, or None."""
    if node is None or depth > MAX_CONDITION_DEPTH:
        return None
    t = node.type
    if t == "parenthesized_expression":
        inner = node.named_children
        return _test_expr(ev, inner[0], st, frame, depth + 1) if inner else None
    if t == "unary_expression":
        op_node = node.child(0)
        operand = node.named_children[-1] if node.named_children else None
        op = frame.ps.text(op_node) if op_node is not None else ""
        if op == "!":
            v = _test_expr(ev, operand, st, frame, depth + 1) if operand is not None else None
            return None if v is None else not v
        val = scalar_text(expansion.expand_scalar(ev, operand, st, frame)) if operand is not None else ""
        if op == "-z":
            return None if val is None else val == ""
        if op == "-n":
            return None if val is None else val != ""
        return None  # file tests and others depend on the machine
    if t == "binary_expression":
        return _binary(ev, node, st, frame, depth)
    if t in ("word", "string", "simple_expansion", "expansion", "concatenation", "raw_string", "number"):
        text = scalar_text(expansion.expand_scalar(ev, node, st, frame))
        return None if text is None else text != ""
    return None


def _binary(ev: Evaluator, node: Node, st: State, frame: Frame, depth: int) -> bool | None:
    """`a && b`, `a -o b`, `x == y`, `n -lt m` … inside `[[ … ]]`."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    operator = node.child_by_field_name("operator")
    op = frame.ps.text(operator) if operator is not None else None
    if op is None:
        for c in node.children:
            if not c.is_named or c.type == "test_operator":
                op = frame.ps.text(c)
                break
    if op in ("&&", "-a"):
        a = _test_expr(ev, left, st, frame, depth + 1)
        b = _test_expr(ev, right, st, frame, depth + 1)
        if a is False or b is False:
            return False
        return True if a and b else None
    if op in ("||", "-o"):
        a = _test_expr(ev, left, st, frame, depth + 1)
        b = _test_expr(ev, right, st, frame, depth + 1)
        if a is True or b is True:
            return True
        return False if a is False and b is False else None
    lv = scalar_text(expansion.expand_scalar(ev, left, st, frame)) if left is not None else None
    pattern = op in ("==", "=", "!=") and node.parent is not None and in_double_bracket(node)
    rv = scalar_text(expansion.expand_scalar(ev, right, st, frame, pattern=pattern)) if right is not None else None
    return _compare(op, lv, rv, pattern)


def _compare(op: str | None, lv: str | None, rv: str | None, pattern: bool) -> bool | None:
    if lv is None or rv is None:
        return None
    if op in ("=", "=="):
        return glob_match(rv, lv) if pattern else lv == rv
    if op == "!=":
        return (not glob_match(rv, lv)) if pattern else lv != rv
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        if not (_INT.fullmatch(lv) and _INT.fullmatch(rv)):
            return None
        a, b = int(lv), int(rv)
        return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
    if op == "<":
        return lv < rv
    if op == ">":
        return lv > rv
    if op == "=~":
        # A group under a quantifier can backtrack for ever on a long subject: not decided.
        if len(lv) > 4096 or len(rv) > 256 or re.search(r"\)[*+?{]", rv):
            return None
        try:
            return re.search(rv, lv) is not None
        except (re.error, RecursionError, OverflowError):
            return None
    return None


def _test_words(words: list[str | None]) -> bool | None:
    """`[ … ]` / `test …` over expanded words (None for an unknown word)."""
    if not words:
        return False
    if words[0] == "!":
        v = _test_words(words[1:])
        return None if v is None else not v
    for i, w in enumerate(words):
        if w in ("-a", "-o") and 0 < i < len(words) - 1:
            a, b = _test_words(words[:i]), _test_words(words[i + 1 :])
            if w == "-a":
                if a is False or b is False:
                    return False
                return True if a and b else None
            if a is True or b is True:
                return True
            return False if a is False and b is False else None
    if len(words) == 1:
        return None if words[0] is None else words[0] != ""
    if len(words) == 2:
        op, operand = words
        if op == "-z":
            return None if operand is None else operand == ""
        if op == "-n":
            return None if operand is None else operand != ""
        return None
    if len(words) == 3:
        return _compare(words[1], words[0], words[2], False)
    return None
