"""The small call forms rules use for places and edits: `flag(num_layers)`,
`replace_value(tensor_model_parallel_size, "{args.num_attention_heads}")`, `launch`.

A closed vocabulary, parsed at load time; each place maps to one `Locator` method and each
edit to one edit builder (see megalint/engine/locate.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from megalint import lazy_re
from megalint.engine.expressions import ExprError, unknown_dest
from megalint.engine.templates import parse_template

DEST = "dest"  # a Megatron argument's dest, as in `args.<dest>`
KEY = "key"  # a launcher quantity or option: nproc_per_node, --master-port
ENV = "env"  # an environment variable name
TEXT = "text"  # a template
NTH = "nth"  # 1, 2 …: one of a list the current item names

# form -> argument kinds
PLACES: dict[str, tuple[str, ...]] = {
    "launch": (),
    "entry": (),
    "gpu": (),
    "item": (),
    "last_export": (),
    "flag": (DEST,),
    "value": (DEST,),
    "origin": (DEST,),
    "launcher": (KEY,),
    "env": (ENV,),
    "expansion": (NTH,),
}

EDITS: dict[str, tuple[str, ...]] = {
    "replace_flag": (DEST, TEXT),
    "remove_flag": (DEST,),
    "replace_value": (DEST, TEXT),
    "add_flag": (TEXT,),
    "insert_export": (ENV, TEXT),
    "replace_item": (TEXT,),
}

_PATTERNS = {
    DEST: lazy_re.compile(r"^[a-z_][a-z0-9_]*$"),
    KEY: lazy_re.compile(r"^(?:--?)?[A-Za-z0-9_][A-Za-z0-9_.-]*$"),
    ENV: lazy_re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$"),
    NTH: lazy_re.compile(r"^[1-9][0-9]?$"),
}
_WHAT = {
    DEST: "a Megatron dest such as tensor_model_parallel_size",
    KEY: "a launcher quantity or option such as nproc_per_node or --master-port",
    ENV: "an environment variable name",
    NTH: "a position from 1, such as 2",
}
_NAME = lazy_re.compile(r"\s*([a-z_]+)\s*")
_BARE = lazy_re.compile(r"[^\s,()\"']+")


@dataclass(frozen=True)
class Call:
    """A place or edit builder named in a rule (`flag(num_layers)`), with its arguments."""

    name: str
    args: tuple[Any, ...]  # str for names, Template for text
    source: str

    def __str__(self) -> str:
        return self.source


def _parse_args(text: str, i: int) -> tuple[list[tuple[str, bool, int]], int]:
    """Arguments from text[i] (just after `(`): (value, quoted, offset) each, and the end."""
    args: list[tuple[str, bool, int]] = []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            raise ExprError("missing ')'", i)
        if text[i] == ")" and not args:
            return args, i + 1
        if text[i] in "\"'":
            q, j = text[i], i + 1
            while j < len(text) and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            if j >= len(text):
                raise ExprError("unterminated string", i)
            raw = text[i : j + 1]
            if q == '"':
                import json  # a rule being read: a first check reads them from the rule cache

                value = json.loads(raw)
            else:
                value = raw[1:-1]
            args.append((value, True, i))
            i = j + 1
        else:
            m = _BARE.match(text, i)
            if not m:
                raise ExprError(f"unexpected '{text[i]}'", i)
            args.append((m.group(), False, i))
            i = m.end()
        while i < len(text) and text[i].isspace():
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        if i < len(text) and text[i] == ")":
            return args, i + 1
        raise ExprError("missing ')'" if i >= len(text) else f"unexpected '{text[i]}'", i)


def parse_call(
    text: str,
    vocabulary: dict[str, tuple[str, ...]],
    what: str,
    names: Iterable[str] = (),
    dests: Collection[str] | None = None,
) -> Call:
    """Parse one form; `ExprError.offset` is relative to `text`. With `dests`, a DEST argument
    and the templates' `args.NAME` must be one of them."""
    m = _NAME.match(text)
    if not m:
        raise ExprError(f"cannot read {what} '{text}'", 0)
    name = m.group(1)
    if name not in vocabulary:
        known = ", ".join(
            f"{n}({', '.join(k.upper() for k in kinds)})" if kinds else n for n, kinds in vocabulary.items()
        )
        raise ExprError(f"unknown {what} '{name}' (known: {known})", m.start(1))
    kinds = vocabulary[name]
    i = m.end()
    raw_args: list[tuple[str, bool, int]] = []
    if i < len(text) and text[i] == "(":
        try:
            raw_args, i = _parse_args(text, i + 1)
        except ExprError as e:
            hint = " (inside a [flow, list] quote the whole form)" if e.message == "missing ')'" else ""
            raise ExprError(e.message + hint, e.offset) from None
    rest = text[i:]
    if rest.strip():
        raise ExprError(f"unexpected text after {what}: '{rest.strip()}'", i + len(rest) - len(rest.lstrip()))
    if len(raw_args) != len(kinds):
        want = f"{len(kinds)} argument{'s' if len(kinds) != 1 else ''}" if kinds else "no arguments"
        raise ExprError(f"{name} takes {want}, got {len(raw_args)}", m.start(1))
    args: list[Any] = []
    for (value, quoted, off), kind in zip(raw_args, kinds, strict=False):
        if kind == TEXT:
            try:
                args.append(
                    parse_template(value, names, dests)
                    if quoted
                    else parse_template(value.replace("{", "{{").replace("}", "}}"))
                )
            except ExprError as e:
                raise ExprError(e.message, off + (1 if quoted else 0) + e.offset) from None
            continue
        if not _PATTERNS[kind].match(value):
            hint = ""
            if kind == DEST and value.startswith("--"):
                hint = f"; write {value[2:].replace('-', '_')}"
            raise ExprError(f"{name} expects {_WHAT[kind]}, not '{value}'{hint}", off)
        if kind == DEST and dests is not None and value not in dests:
            raise ExprError(unknown_dest(value, dests), off)
        args.append(value)
    return Call(name, tuple(args), text.strip())
