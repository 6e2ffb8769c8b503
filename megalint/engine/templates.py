"""Message templates: literal text with `{expression|filter}` placeholders.

The expression is CEL (usually a path such as `args.num_layers`), so a message can show a
computed value (`{args.num_attention_heads % args.tensor_model_parallel_size}`). Filters format
the result: `flag` (a dest as its option, `tensor_model_parallel_size` -> `--tensor-model-parallel-size`),
`gib` (bytes as GiB with one decimal), `round(N)` (N decimals), `join` / `join(", ")` (a list),
`quote` (shell-quoted), `lower`, `upper`. `{{` and `}}` write literal braces.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from megalint import lazy_re
from megalint.engine.expressions import Env, EvalFailure, Expr, ExprError, NeedInputs, compile_expr

UNKNOWN_TEXT = "unknown"


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e16:
            return f"{value:.1f}"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, dict):
        import json  # a message showing a mapping: rare, and a first check of a clean script shows none

        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def _flag(value: Any, _arg: Any) -> str:
    text = str(value)
    return text if text.startswith("-") else "--" + text.replace("_", "-")


def _gib(value: Any, _arg: Any) -> str:
    return f"{float(value) / 2**30:.1f} GiB"


def _round(value: Any, arg: Any) -> str:
    digits = 0 if arg is None else int(arg)
    return f"{float(value):.{digits}f}"


def _join(value: Any, arg: Any) -> str:
    sep = ", " if arg is None else str(arg)
    if not isinstance(value, (list, tuple)):
        return format_value(value)
    return sep.join(format_value(v) for v in value)


def _quote(value: Any, _arg: Any) -> str:
    return shlex.quote(format_value(value))


# name -> (function, argument kind: None for no argument, "int" or "str" for an optional one)
FILTERS: dict[str, tuple[Callable[[Any, Any], str], str | None]] = {
    "flag": (_flag, None),
    "gib": (_gib, None),
    "round": (_round, "int"),
    "join": (_join, "str"),
    "quote": (_quote, None),
    "lower": (lambda v, a: format_value(v).lower(), None),
    "upper": (lambda v, a: format_value(v).upper(), None),
}

_FILTER = lazy_re.compile(r"^\s*([a-z]+)\s*(?:\(\s*(.*?)\s*\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class Placeholder:
    """An expression in a message template, with its filters."""

    expr: Expr
    filters: tuple[tuple[str, Any], ...]
    offset: int  # of the expression in the template

    def render(self, env: Env) -> str:
        value = self.expr.run(env)
        if not self.filters:
            return format_value(value)
        out: Any = value
        for name, arg in self.filters:
            try:
                out = FILTERS[name][0](out, arg)
            except (TypeError, ValueError) as e:
                raise EvalFailure(f"filter {name} cannot format {format_value(out)!r}: {e}") from None
        return format_value(out)


@dataclass(frozen=True)
class Template:
    """A message with `{{ expression }}` placeholders, split into text and placeholders."""

    source: str
    parts: tuple[str | Placeholder, ...]

    @property
    def exprs(self) -> list[Expr]:
        return [p.expr for p in self.parts if isinstance(p, Placeholder)]

    def render(self, env: Env, strict: bool = False) -> str:
        """The text; a placeholder whose value is unknown reads `unknown`, or raises when strict."""
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            try:
                out.append(part.render(env))
            except (NeedInputs, EvalFailure):
                if strict:
                    raise
                out.append(UNKNOWN_TEXT)
        return "".join(out)


def _skip_string(text: str, i: int) -> int:
    """The index just after the CEL string literal starting at text[i] (a quote)."""
    q = text[i]
    triple = text[i : i + 3] == q * 3
    end_seq = q * 3 if triple else q
    j = i + (3 if triple else 1)
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text.startswith(end_seq, j):
            return j + len(end_seq)
        j += 1
    raise ExprError("unterminated string in placeholder", i)


def _split_filters(body: str) -> list[tuple[str, int]]:
    """Split a placeholder body on `|` (not `||`) outside strings and brackets."""
    pieces, start, depth, i = [], 0, 0, 0
    while i < len(body):
        ch = body[i]
        if ch in "'\"":
            i = _skip_string(body, i)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "|" and depth == 0:
            if body[i : i + 2] == "||":
                i += 2
                continue
            pieces.append((body[start:i], start))
            start = i + 1
        i += 1
    pieces.append((body[start:], start))
    return pieces


def _parse_filter(text: str, offset: int) -> tuple[str, Any]:
    m = _FILTER.match(text)
    if not m or m.group(1) not in FILTERS:
        name = m.group(1) if m else text.strip()
        known = ", ".join(FILTERS)
        raise ExprError(f"unknown filter '{name}' (known: {known})", offset)
    name, arg = m.group(1), m.group(2)
    kind = FILTERS[name][1]
    if arg is None:
        return name, None
    if kind is None:
        raise ExprError(f"filter '{name}' takes no argument", offset)
    if kind == "int":
        if not re.fullmatch(r"\d+", arg):
            raise ExprError(f"filter '{name}' takes a whole number, not '{arg}'", offset)
        return name, int(arg)
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        return name, arg[1:-1]
    raise ExprError(f"filter '{name}' takes a quoted string, not '{arg}'", offset)


def parse_template(text: str, names: Iterable[str] = (), dests: Collection[str] | None = None) -> Template:
    """Compile a template (see `compile_expr` for `names` and `dests`); an `ExprError`'s offset is
    relative to `text`."""
    names = tuple(names)
    parts: list[str | Placeholder] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{" and text.startswith("{{", i):
            buf.append("{")
            i += 2
            continue
        if ch == "}":
            if text.startswith("}}", i):
                buf.append("}")
                i += 2
                continue
            raise ExprError("single '}' in template (write '}}' for a literal brace)", i)
        if ch != "{":
            buf.append(ch)
            i += 1
            continue
        # A placeholder: find its closing brace, skipping strings and nested braces.
        start, depth, j = i + 1, 1, i + 1
        while j < len(text):
            c = text[j]
            if c in "'\"":
                try:
                    j = _skip_string(text, j)
                except ExprError as e:
                    raise ExprError(e.message, j) from None
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        else:
            raise ExprError("unclosed '{' in template (write '{{' for a literal brace)", i)
        body = text[start:j]
        if buf:
            parts.append("".join(buf))
            buf = []
        pieces = _split_filters(body)
        expr_text, _ = pieces[0]
        if not expr_text.strip():
            raise ExprError("empty placeholder '{}'", i)
        lead = len(expr_text) - len(expr_text.lstrip())
        try:
            expr = compile_expr(expr_text.strip(), names, dests)
        except ExprError as e:
            raise ExprError(e.message, start + lead + e.offset) from None
        filters = tuple(_parse_filter(f, start + off) for f, off in pieces[1:])
        parts.append(Placeholder(expr, filters, start + lead))
        i = j + 1
    if buf:
        parts.append("".join(buf))
    return Template(text, tuple(parts))
