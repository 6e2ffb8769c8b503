"""Megatron-LM versions: how they are written, which ones megalint ships a catalogue for.

One grammar reads every version: a release `MAJOR.MINOR[.PATCH]`, maybe spelt as a tag
(`core_v0.12.0`), a release branch (`core_r0.15.0`) or `v0.8`, maybe followed by a pre-release or
build (`0.15.0rc3`, `0.13.0.dev1`), or the development head `HEAD` (also `main`, `dev`), which is
newer than every release. Missing components are zero: `0.15` == `0.15.0`. Users write versions
the way their environment shows them, so what they write may also be pip's (`megatron-core==0.19.2`)
or name the head `master`, `latest`, `trunk` or `nightly`; rules name versions without these.
Version ranges (`">=0.12,<0.16"`) say where a rule applies.

`resolve_version` maps a user's version to one of the shipped catalogue versions. A version
between two shipped ones takes the nearest lower one, because flags are mostly added over time
and a lower catalogue rarely invents a flag the real version lacks; the note says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from megalint import lazy_re
from megalint.errors import MegalintError
from megalint.megatron.known_versions import HEAD as HEAD
from megalint.megatron.known_versions import KNOWN_VERSIONS as KNOWN_VERSIONS

VersionKey = tuple[int, int, int]
HEAD_KEY: VersionKey = (10**6, 0, 0)  # newer than every release

HEAD_NAMES = frozenset({"head", "main", "dev"})
# What users also call the head.
HEAD_ALIASES = HEAD_NAMES | {"master", "latest", "trunk", "nightly"}
_PIP = lazy_re.compile(r"^megatron[-_](?:core|lm)\s*(?:==|@|\s)\s*", re.IGNORECASE)
_RELEASE = lazy_re.compile(
    r"""^(?:core_[vr]|core_|[vr])?                      # tags core_v0.12.0, branches core_r0.15.0, v0.8
    (?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?
    (?P<rest>[-.+]?(?:rc|a|b|dev|post)\d*.*)?$        # 0.15.0rc3, 0.13.0.dev1 ...""",
    re.VERBOSE | re.IGNORECASE,
)
_COMPARATOR = lazy_re.compile(r"^\s*(>=|<=|==|!=|>|<|=)?\s*(\S+)\s*$")


class VersionError(MegalintError, ValueError):
    """A version, or a version range, that megalint cannot read."""


@dataclass(frozen=True)
class Resolution:
    """The catalogue version chosen for what the user wrote, and why when it is not exact."""

    version: str  # one of KNOWN_VERSIONS
    requested: str | None
    note: str | None = None  # set when the chosen catalogue is not the requested version


def parse_version(text: str, *, aliases: bool = True) -> VersionKey:
    """(major, minor, patch) of a version; the head is newer than every release.

    With `aliases` (the default, for what users write) pip's spelling and the head's other
    names are read too; a rule's versions are read without them.
    """
    return _read(text, aliases)[0]


@lru_cache(maxsize=256)
def _read(text: str, aliases: bool) -> tuple[VersionKey, str | None]:
    """(key, the pre-release or build text after the release numbers, if any)."""
    t = text.strip()
    if t.lower() in (HEAD_ALIASES if aliases else HEAD_NAMES):
        return HEAD_KEY, None
    m = _RELEASE.match(_PIP.sub("", t, count=1) if aliases else t)
    if not m:
        raise VersionError(f"'{text}' is not a Megatron version (like 0.15, 0.15.1, core_v0.15.0 or HEAD)")
    return (int(m["major"]), int(m["minor"]), int(m["patch"] or 0)), m["rest"]


@lru_cache(maxsize=256)  # compared over and over as each launch is derived (deriver.at_least)
def version_key(version: str) -> tuple[int, int, int]:
    return parse_version(version)


@dataclass(frozen=True)
class VersionRange:
    """Versions as a rule names them: `*`, `>=0.13`, `<0.16`, `>=0.12,<0.16`, `==0.15`, `!=0.15`;
    a bare version (`0.15`) means that version."""

    text: str
    clauses: tuple[tuple[str, VersionKey], ...]  # () means any version

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        t = str(text).strip()
        if t in ("*", ""):
            return cls("*", ())
        clauses = []
        for part in t.split(","):
            m = _COMPARATOR.match(part)
            try:
                if not m:
                    raise VersionError(part)
                clauses.append((m.group(1) or "==", parse_version(m.group(2), aliases=False)))
            except VersionError:
                if m and m.group(1):
                    raise
                raise VersionError(
                    f"'{part.strip()}' is not a version comparison (like >=0.13, <0.16 or ==0.15)"
                ) from None
        return cls(t, tuple(clauses))

    @property
    def any(self) -> bool:
        return not self.clauses

    def contains(self, version: str) -> bool:
        key = parse_version(version, aliases=False)
        for op, bound in self.clauses:
            ok = {
                ">=": key >= bound,
                "<=": key <= bound,
                ">": key > bound,
                "<": key < bound,
                "==": key == bound,
                "=": key == bound,
                "!=": key != bound,
            }[op]
            if not ok:
                return False
        return True

    def __str__(self) -> str:
        return self.text


def in_range(version: str, spec: str | None) -> bool:
    """Whether `version` satisfies a range such as ">=0.12,<0.16" ("" or None: every version)."""
    return VersionRange.parse(spec or "*").contains(version)


def resolve(text: str | None) -> Resolution:
    """Map a user's version text to a shipped catalogue version, with a note when inexact."""
    if text is None or not text.strip() or text.strip().lower() in HEAD_ALIASES:
        return Resolution(HEAD, text)
    key, rest = _read(text, True)
    major, minor, patch = key
    exact = f"{major}.{minor}"
    if exact in KNOWN_VERSIONS:
        note = None
        if rest:
            note = f"{text.strip()} is a pre-release or development build; using the {exact} release catalogue"
        return Resolution(exact, text, note)
    numbered = [v for v in KNOWN_VERSIONS if v != HEAD]
    lower = [v for v in numbered if version_key(v) <= key]
    if not lower:
        oldest = min(numbered, key=version_key)
        return Resolution(
            oldest,
            text,
            f"Megatron-LM {text.strip()} is older than every shipped catalogue; using {oldest}, the oldest one",
        )
    chosen = max(lower, key=version_key)
    newest = max(numbered, key=version_key)
    if chosen == newest and key > version_key(newest):
        note = (
            f"no catalogue for Megatron-LM {text.strip()}; using {chosen}, the newest release "
            f"catalogue; HEAD may be closer"
        )
    else:
        note = f"no catalogue for Megatron-LM {text.strip()}; using {chosen}, the nearest lower one"
    return Resolution(chosen, text, note)


def resolve_version(text: str | None) -> str:
    """The shipped catalogue version for `text` ("0.15.3" -> "0.15", None -> "HEAD")."""
    return resolve(text).version


def known_versions() -> list[str]:
    """Shipped catalogue versions, newest first."""
    return list(KNOWN_VERSIONS)
