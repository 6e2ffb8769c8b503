"""Bash arithmetic (`$(( ))`, `(( ))`, `let`) with bash's integer semantics.

Values are signed 64-bit integers that wrap; `/` and `%` truncate toward zero and fail on zero;
names are looked up through a callback that returns an int, None (unknown) or raises
`ArithUnknown` with a reason. Assignments (`=`, `+=`, `++` …) go through another callback.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from megalint import lazy_re
from megalint.errors import ScriptError

_TOKEN = lazy_re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|[0-9]+#[0-9a-zA-Z@_]+|[0-9]+)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op><<=|>>=|\*\*|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\^=|\|=|[-+*/%<>=!~&|^?:(),]))"
)


class ArithError(ScriptError):
    """The expression is not valid bash arithmetic (bash would fail too)."""


class ArithUnknown(Exception):
    """A value needed by the expression cannot be known statically; never leaves the shell front
    end, where its reason becomes an unknown value's."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= (1 << 63) else v


def parse_int(text: str) -> int:
    """An integer literal as bash reads it in arithmetic: 10, 0x1f, 017, 2#101."""
    t = text.strip()
    neg = t.startswith("-")
    if t[:1] in "+-":
        t = t[1:].strip()
    if not t:
        raise ValueError(text)
    if "#" in t:
        base_s, digits = t.split("#", 1)
        base = int(base_s)
        if not 2 <= base <= 64:
            raise ValueError(text)
        alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_"
        if base <= 36:
            digits = digits.lower()
        v = 0
        for ch in digits:
            d = alphabet.find(ch)
            if d < 0 or d >= base:
                raise ValueError(text)
            v = v * base + d
    elif t[:2].lower() == "0x":
        v = _int(t[2:], 16)
    elif len(t) > 1 and t[0] == "0":
        v = _int(t, 8)
    else:
        v = _int(t, 10)
    return _wrap(-v if neg else v)


def _int(digits: str, base: int) -> int:
    # Python refuses to convert very long decimal strings; bash just wraps at 64 bits.
    if len(digits) <= 256:
        return int(digits, base)
    v = 0
    for k in range(0, len(digits), 64):
        chunk = digits[k : k + 64]
        v = (v * base ** len(chunk) + int(chunk, base)) & ((1 << 64) - 1)
    return v


Token = tuple[str, str]  # (kind: "num", "name" or "op"; its text)

_TOKENS: dict[str, tuple[Token, ...]] = {}  # text -> its tokens: the same expression is met on every path and in loops


def tokenize(text: str) -> tuple[Token, ...]:
    got = _TOKENS.get(text)
    if got is None:
        got = _tokenize(text)
        if len(_TOKENS) > 4096:
            _TOKENS.clear()
        _TOKENS[text] = got
    return got


def _tokenize(text: str) -> tuple[Token, ...]:
    out: list[Token] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ArithError(f"unexpected {text[pos:].strip()[:10]!r} in arithmetic")
        pos = m.end()
        for kind in ("num", "name", "op"):
            if m.group(kind) is not None:
                out.append((kind, m.group(kind)))
                break
    return tuple(out)


_BINARY = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
    "**": 12,
}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="}


# bash gives up at 1024 levels ("expression recursion level exceeded"); a lower bound keeps
# the recursive parser well inside Python's stack.
MAX_NESTING = 40
MAX_TOKENS = 10_000

# What the parser sees past the last token: no kind, no text.
_END: Token = ("", "")


class _Parser:
    def __init__(
        self, tokens: tuple[Token, ...], lookup: Callable[[str], int], assign: Callable[[str, int], None]
    ) -> None:
        self.t = tokens
        self.i = 0
        self.lookup = lookup
        self.assign = assign
        self.depth = 0
        # Above zero inside an operand bash does not evaluate (the untaken branch of `?:`, the
        # right of `&&` after false and of `||` after true): it is parsed, but reads no
        # variable, assigns nothing and cannot fail (`M > 0 ? G / M : 1` with M=0 is 1).
        self.skipping = 0

    def read(self, name: str) -> int:
        return 0 if self.skipping else self.lookup(name)

    def write(self, name: str, value: int) -> None:
        if not self.skipping:
            self.assign(name, value)

    def skipped(self, skip: bool, operand: Callable[[], int]) -> int:
        """Parse `operand`, evaluating it only when `skip` is false."""
        self.skipping += skip
        try:
            return operand()
        finally:
            self.skipping -= skip

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ArithUnknown(f"the expression is nested more than {MAX_NESTING} levels deep")

    def peek(self) -> Token:
        return self.t[self.i] if self.i < len(self.t) else _END

    def take(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, op: str) -> None:
        kind, val = self.take()
        if val != op:
            raise ArithError(f"expected {op!r} in arithmetic")

    def comma(self) -> int:
        v = self.assignment()
        while self.peek()[1] == ",":
            self.take()
            v = self.assignment()
        return v

    def assignment(self) -> int:
        kind, val = self.peek()
        if kind == "name" and self.i + 1 < len(self.t) and self.t[self.i + 1][1] in _ASSIGN:
            name = val
            self.i += 1
            op = self.take()[1]
            self.deeper()
            rhs = self.assignment()
            self.depth -= 1
            if op == "=":
                v = rhs
            else:
                v = self.apply(op[:-1], self.read(name), rhs)
            v = _wrap(v)
            self.write(name, v)
            return v
        return self.ternary()

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek()[1] == "?":
            self.take()
            self.deeper()
            a = self.skipped(not cond, self.assignment)
            self.expect(":")
            b = self.skipped(bool(cond), self.assignment)
            self.depth -= 1
            return a if cond else b
        return cond

    def binary(self, min_prec: int) -> int:
        left = self.unary()
        while True:
            op = self.peek()[1]
            prec = _BINARY.get(op) if self.peek()[0] == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            # ** is right-associative
            self.deeper()
            short = (op == "&&" and not left) or (op == "||" and bool(left))
            right = self.skipped(short, partial(self.binary, prec if op == "**" else prec + 1))
            self.depth -= 1
            left = _wrap(self.apply(op, left, right))

    def unary(self) -> int:
        kind, val = self.peek()
        if kind == "op" and val in ("-", "+", "!", "~"):
            self.take()
            self.deeper()
            v = self.unary()
            self.depth -= 1
            return _wrap({"-": -v, "+": v, "!": int(not v), "~": ~v}[val])
        if kind == "op" and val in ("++", "--"):
            self.take()
            k2, name = self.take()
            if k2 != "name":
                raise ArithError("++/-- needs a variable")
            v = _wrap(self.read(name) + (1 if val == "++" else -1))
            self.write(name, v)
            return v
        return self.postfix()

    def postfix(self) -> int:
        kind, val = self.take()
        if kind == "num":
            try:
                return parse_int(val)
            except ValueError:
                raise ArithError(f"invalid number {val!r}") from None
        if kind == "name":
            v = self.read(val)
            nk, nv = self.peek()
            if nk == "op" and nv in ("++", "--"):
                self.take()
                self.write(val, _wrap(v + (1 if nv == "++" else -1)))
            return v
        if val == "(":
            self.deeper()
            v = self.comma()
            self.depth -= 1
            self.expect(")")
            return v
        raise ArithError("syntax error in arithmetic expression")

    def apply(self, op: str, a: int, b: int) -> int:
        return 0 if self.skipping else _apply(op, a, b)


def _apply(op: str, a: int, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op in ("/", "%"):
        if b == 0:
            raise ArithError("division by 0")
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q
        return q if op == "/" else a - q * b
    if op == "**":
        if b < 0:
            raise ArithError("exponent less than 0")
        return pow(a, b, 1 << 64)
    if op == "<<":
        return a << (b & 63)
    if op == ">>":
        return a >> (b & 63)
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "&&":
        return int(bool(a) and bool(b))
    if op == "||":
        return int(bool(a) or bool(b))
    return int({"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op])


def evaluate(text: str, lookup: Callable[[str], int], assign: Callable[[str, int], None] | None = None) -> int:
    """Evaluate bash arithmetic. `lookup(name)` returns the int value or raises ArithUnknown."""
    if len(text) > MAX_TOKENS * 4:
        raise ArithUnknown("the expression is too long to evaluate")
    tokens = tokenize(text)
    if len(tokens) > MAX_TOKENS:
        raise ArithUnknown("the expression is too long to evaluate")
    if not tokens:
        return 0
    p = _Parser(tokens, lookup, assign or (lambda n, v: None))
    v = p.comma()
    if p.i != len(tokens):
        raise ArithError(f"syntax error in arithmetic: unexpected {tokens[p.i][1]!r}")
    return v
