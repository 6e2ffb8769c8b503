"""Glob patterns as bash matches them: `case` arms, `[[ x == pat ]]`, and the pattern operators
of `${X#pat}`, `${X%pat}` and `${X/pat/rep}`.

Matching a glob against every prefix or substring is quadratic (cubic for replacement), so
values past MAX_PATTERN_SUBJECT / MAX_PATTERN_REPLACE are not matched: the result is unknown.
"""

from __future__ import annotations

import fnmatch
import re

from megalint import lazy_re
from megalint.shell.interp.state import MAX_PATTERN_REPLACE, MAX_PATTERN_SUBJECT, MAX_VALUE_CHARS


def _glob_to_regex(pat: str) -> str:
    return fnmatch.translate(pat)


def glob_match(pat: str, text: str) -> bool:
    """Whether a glob (`case` arm, `[[ x == pat ]]`) matches the whole text."""
    return re.match(_glob_to_regex(pat), text, re.S) is not None


_GLOB_CHARS = lazy_re.compile(r"[*?\[\\]")


def strip_pattern(value: str, pat: str, op: str) -> str | None:
    """`${X#pat}`, `${X##pat}`, `${X%pat}`, `${X%%pat}`; None when the value is too long to match."""
    if not _GLOB_CHARS.search(pat):
        if op in ("#", "##"):
            return value[len(pat) :] if value.startswith(pat) else value
        return value[: len(value) - len(pat)] if pat and value.endswith(pat) else value
    if len(value) > MAX_PATTERN_SUBJECT:
        return None
    rx = re.compile(_glob_to_regex(pat), re.S)
    n = len(value)
    if op in ("#", "##"):
        rng = range(0, n + 1) if op == "#" else range(n, -1, -1)
        for i in rng:
            if rx.match(value[:i]):
                return value[i:]
        return value
    rng = range(n, -1, -1) if op == "%" else range(0, n + 1)
    for i in rng:
        if rx.match(value[i:]):
            return value[:i]
    return value


def replace_pattern(value: str, pat: str, rep: str, op: str) -> str | None:
    """`${X/pat/rep}`, `${X//pat/rep}`, `${X/#pat/rep}`, `${X/%pat/rep}`; None when too long."""
    if not _GLOB_CHARS.search(pat):
        if not pat:
            return value
        if op == "/#":
            return rep + value[len(pat) :] if value.startswith(pat) else value
        if op == "/%":
            return value[: len(value) - len(pat)] + rep if value.endswith(pat) else value
        if op == "//" and len(value) // len(pat) * max(len(rep), 1) > MAX_VALUE_CHARS:
            return None
        return value.replace(pat, rep, 1 if op == "/" else -1)
    if len(value) > MAX_PATTERN_REPLACE:
        return None
    rx = re.compile(_glob_to_regex(pat), re.S)
    n = len(value)
    if op == "/#":
        for j in range(n, -1, -1):
            if rx.match(value[:j]):
                return rep + value[j:]
        return value
    if op == "/%":
        for i in range(0, n + 1):
            if rx.match(value[i:]):
                return value[:i] + rep
        return value
    out: list[str] = []
    i = 0
    replaced = False
    while i <= n:
        if replaced and op == "/":
            out.append(value[i:])
            break
        hit = None
        for j in range(n, i, -1):
            if rx.match(value[i:j]):
                hit = j
                break
        if hit is not None:
            out.append(rep)
            i = hit
            replaced = True
            continue
        if i < n:
            out.append(value[i])
        i += 1
    return "".join(out)
