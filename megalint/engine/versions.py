"""Megatron version ranges: `>=0.13`, `<0.16`, `>=0.12,<0.16`, `==0.15`, `!=0.15.0`, `*`.

Versions are release numbers (`0.15`, `0.15.1`, also spelt `core_v0.15.0`, `core_r0.15.0` or
`v0.15.0`) or the development head (`HEAD`, `main`, `dev`), which is newer than every release.
Missing trailing components are zero: `0.15` == `0.15.0`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

HEAD_NAMES = frozenset({"head", "main", "dev"})
_HEAD = (float("inf"),)
_NUMBER = re.compile(r"^(?:core_[vr]|v)?(\d+(?:\.\d+){0,3})(?:rc\d+|\.?dev\d*|a\d+|b\d+)?$")
_COMPARATOR = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\S+)\s*$")


class VersionError(ValueError):
    pass


@lru_cache(maxsize=256)
def parse_version(text: str) -> tuple:
    """A comparable key for a Megatron version string."""
    t = str(text).strip()
    if t.lower() in HEAD_NAMES:
        return _HEAD
    m = _NUMBER.match(t)
    if not m:
        raise VersionError(f"'{text}' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)")
    parts = [int(p) for p in m.group(1).split(".")]
    while len(parts) < 4:
        parts.append(0)
    return tuple(parts)


@dataclass(frozen=True)
class VersionRange:
    text: str
    clauses: tuple[tuple[str, tuple], ...]  # () means any version

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        t = str(text).strip()
        if t in ("*", ""):
            return cls("*", ())
        clauses = []
        for part in t.split(","):
            m = _COMPARATOR.match(part)
            if not m:
                raise VersionError(f"'{part.strip()}' is not a version comparison (like >=0.13, <0.16 or ==0.15)")
            clauses.append((m.group(1), parse_version(m.group(2))))
        return cls(t, tuple(clauses))

    @property
    def any(self) -> bool:
        return not self.clauses

    def contains(self, version: str) -> bool:
        key = parse_version(version)
        for op, bound in self.clauses:
            ok = {
                ">=": key >= bound,
                "<=": key <= bound,
                ">": key > bound,
                "<": key < bound,
                "==": key == bound,
                "!=": key != bound,
            }[op]
            if not ok:
                return False
        return True

    def __str__(self) -> str:
        return self.text
