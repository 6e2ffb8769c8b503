"""A condition found false by one operand of its `&&` chain, without compiling it.

Most rule conditions test one argument (`args.fp8 != null && …`,
`… && args.recompute_granularity == 'full'`) that is false on most launches. CEL's `&&` is
commutative: it is false when either side is false, whatever the other side is, an error or a
missing input included (the CEL language definition's logical operators; the binding keeps it,
and the tests below compare each form with its verdict). So when any operand of a condition's
top-level `&&` chain is false, the condition is false, whatever the others are. Compiling a
condition costs about 0.13 ms (the first check of Megatron-LM's GPT-3 example compiled 189 of
them, 86 when only the first operand and fewer forms were read, 68 now); deciding such an
operand in Python costs a dictionary lookup.

Only forms whose CEL value is certain are read, on a value the context holds (a missing key is
left to CEL, which names it as a missing input; `has` asks about the key itself):

| operand          | false when the value is           |
|------------------|-----------------------------------|
| `R.K != null`    | null (None)                        |
| `R.K`            | false                              |
| `!R.K`           | true                               |
| `R.K == 'text'`  | anything but the string `text` (CEL's `==` across types is false) |
| `R.K != 'text'`  | the string `text`                  |
| `R.K == N`       | anything but a number equal to N (a bool is not a number) |
| `R.K != N`       | a number equal to N                |
| `R.K == true`, `== false` | anything but that boolean |
| `R.K > N`, `>= N`, `< N`, `<= N` | an integer (not a bool) for which the comparison fails |
| `R.K == null`    | anything but null                  |
| `has(R.K)`       | a map without the key              |
| `(A or B or …)`, written with `||` | each of A, B, … (forms above) false |

A condition with a top-level `||` or `?:` (which bind looser than `&&`) has no such operand.
tests/engine/test_short_circuit.py compares each form with CEL's own verdict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from megalint import lazy_re

# (form, root, key, operand): form is one of the table's rows.
Guard = tuple[str, str, str, Any]

# A string literal with no prefix, escape or line break: its text is its value.
PLAIN_STRING = lazy_re.compile(r"'[^'\\\n]*'|\"[^\"\\\n]*\"")
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_BRACKETS = _OPEN | _CLOSE
_MISSING = object()


def guards_of(toks: Sequence[tuple[str, str, int]]) -> tuple[Guard, ...]:
    """The operands of the top-level `&&` chain of an expression (its tokens, blanks left out)
    that are of the forms this module decides, in their order."""
    cuts = [-1]
    for i, text in _outside_brackets(toks):
        if text in ("||", "?"):
            return ()
        if text == "&&":
            cuts.append(i)
    cuts.append(len(toks))
    found = (_operand(toks[a + 1 : b]) for a, b in zip(cuts, cuts[1:], strict=False))
    return tuple(g for g in found if g is not None)


def _outside_brackets(toks: Sequence[tuple[str, str, int]]) -> Iterator[tuple[int, str]]:
    """(index, text) of each token not inside brackets (nor a bracket itself)."""
    return ((i, text) for i, text, depth in _levels(toks) if depth == 0 and text not in _BRACKETS)


def _levels(toks: Sequence[tuple[str, str, int]]) -> Iterator[tuple[int, str, int]]:
    """(index, text, depth) of each token: the brackets open around it (for a bracket, outside it)."""
    depth = 0
    for i, (_, text, _) in enumerate(toks):
        if text in _CLOSE:
            depth -= 1
        yield i, text, depth
        if text in _OPEN:
            depth += 1


def _operand(toks: Sequence[tuple[str, str, int]]) -> Guard | None:
    whole = next((i for i, text, depth in _levels(toks) if i and depth == 0), None) == len(toks) - 1
    if len(toks) > 2 and toks[0][1] == "(" and whole:
        # `(A || B || …)`, its bracket closing at its end: false when each of them is.
        parts = _split_or(toks[1:-1])
        guards = [_simple(p) for p in parts] if parts is not None else []
        if guards and all(g is not None for g in guards):
            return ("none-of", "", "", tuple(guards))
        return None
    return _simple(toks)


def _split_or(toks: Sequence[tuple[str, str, int]]) -> list[Sequence[tuple[str, str, int]]] | None:
    """The operands of a `||` chain; None when `&&` or `?` stands between them unbracketed."""
    parts, start = [], 0
    for i, text in _outside_brackets(toks):
        if text in ("&&", "?"):
            return None
        if text == "||":
            parts.append(toks[start:i])
            start = i + 1
    parts.append(toks[start:])
    return parts


def _simple(toks: Sequence[tuple[str, str, int]]) -> Guard | None:
    kinds = [k for k, _, _ in toks]
    texts = [t for _, t, _ in toks]
    n = len(texts)
    if n == 4 and texts[0] == "!" and _is_path(kinds, texts, 1):
        return ("not", texts[1], texts[3], None)
    if n == 6 and texts[0] == "has" and texts[1] == "(" and texts[5] == ")" and _is_path(kinds, texts, 2):
        return ("has", texts[2], texts[4], None)
    if n < 3 or not _is_path(kinds, texts, 0):
        return None
    root, key = texts[0], texts[2]
    if n == 3:
        return ("is", root, key, None)
    if n != 5:
        return None
    op, kind, literal = texts[3], kinds[4], texts[4]
    if literal == "null" and op in ("!=", "=="):
        return ("not-null" if op == "!=" else "null", root, key, None)
    if op in ("==", "!=") and kind == "str" and PLAIN_STRING.fullmatch(literal):
        return ("equals" if op == "==" else "differs", root, key, literal[1:-1])
    if op in ("==", "!=") and kind == "num" and literal.isdigit():
        return ("equals-number" if op == "==" else "differs-number", root, key, int(literal))
    if op == "==" and literal in ("true", "false"):
        return ("equals-bool", root, key, literal == "true")
    if op in _COMPARED and kind == "num" and literal.isdigit():
        return (_COMPARED[op], root, key, int(literal))
    return None


_COMPARED = {">": "above", ">=": "at-least", "<": "below", "<=": "at-most"}


def _is_path(kinds: list[str], texts: list[str], at: int) -> bool:
    """Whether `ROOT.KEY` is written at `at` (names, not keywords or namespaces)."""
    return (
        len(texts) >= at + 3
        and kinds[at] == "ident"
        and texts[at + 1] == "."
        and kinds[at + 2] == "ident"
        and texts[at] not in ("true", "false", "null")
        and (len(texts) == at + 3 or texts[at + 3] != "(")  # not a method call: `R.f(...)`
    )


def decides_false(guard: Guard, scope: Mapping[str, Any]) -> bool:
    """Whether the guarded operand is false on `scope` (the context, with any bound names)."""
    form, root, key, operand = guard
    if form == "none-of":
        return all(decides_false(g, scope) for g in operand)
    held = scope.get(root)
    if type(held) is not dict:
        return False
    value = held.get(key, _MISSING)
    if form == "has":
        return value is _MISSING
    if value is _MISSING:
        return False
    if form == "null":
        return value is not None
    if form == "not-null":
        return value is None
    if form == "is":
        return value is False
    if form == "not":
        return value is True
    if form == "equals":
        return type(value) is not str or value != operand
    if form == "differs":
        return type(value) is str and value == operand
    if form == "equals-number":
        return (type(value) is not int and type(value) is not float) or value != operand
    if form == "differs-number":
        return (type(value) is int or type(value) is float) and value == operand
    if form == "equals-bool":
        return value is not operand
    if type(value) is not int:
        return False
    bound: int = operand
    if form == "above":
        return value <= bound
    if form == "at-least":
        return value < bound
    return value >= bound if form == "below" else value > bound
