"""Megatron-LM versions: the ones megalint ships a flag catalogue for, and how to name them.

Users write versions the way their environment shows them: `0.15.3` (pip), `core_v0.12.0`
(git tag), `core_r0.15.0` (release branch), `v0.8`, `megatron-core==0.19.2`, `main`, `latest`.
`resolve_version` maps any of these to one of the shipped catalogue versions. A version between
two shipped ones takes the nearest lower one, because flags are mostly added over time and a
lower catalogue rarely invents a flag the real version lacks; the note says so.

Version ranges (`">=0.12,<0.16"`) are used by rules to say where a constraint applies.
`HEAD` (Megatron-LM `main` at the commit the catalogue was built from) is newer than every
numbered release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEAD = "HEAD"

# Newest first. HEAD is NVIDIA/Megatron-LM main at d98e8a64.
KNOWN_VERSIONS: tuple[str, ...] = ("HEAD", "0.19", "0.15", "0.12", "0.8")

_HEAD_ALIASES = {"head", "main", "master", "latest", "dev", "trunk", "nightly"}

_VERSION_RE = re.compile(
    r"""^\s*
    (?:megatron[-_]core\s*(?:==|@|\s)\s*|megatron[-_]lm\s*(?:==|@|\s)\s*)?   # pip spellings
    (?:core_)?[vr]?                                    # tags core_v0.12.0, branches core_r0.15.0, v0.8
    (?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?
    (?P<rest>[-.+]?(?:rc|a|b|dev|post)\d*.*)?          # 0.15.0rc3, 0.13.0.dev1 ...
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)


class VersionError(ValueError):
    """A version string megalint cannot read."""


@dataclass(frozen=True)
class Resolution:
    """The catalogue version chosen for what the user wrote, and why when it is not exact."""

    version: str  # one of KNOWN_VERSIONS
    requested: str | None
    note: str | None = None  # set when the chosen catalogue is not the requested version


def parse_version(text: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version string; HEAD is larger than any release."""
    if text.strip().lower() in _HEAD_ALIASES or text.strip() == HEAD:
        return (10**6, 0, 0)
    m = _VERSION_RE.match(text)
    if not m:
        raise VersionError(f"not a Megatron-LM version: {text!r}")
    return (int(m["major"]), int(m["minor"]), int(m["patch"] or 0))


def version_key(version: str) -> tuple[int, int, int]:
    return parse_version(version)


def resolve(text: str | None) -> Resolution:
    """Map a user's version text to a shipped catalogue version, with a note when inexact."""
    if text is None or not text.strip() or text.strip().lower() in _HEAD_ALIASES:
        return Resolution(HEAD, text)
    key = parse_version(text)
    major, minor, patch = key
    m = _VERSION_RE.match(text)
    rest = m["rest"] if m else None
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


_CLAUSE_RE = re.compile(r"^\s*(>=|<=|==|!=|>|<|=)?\s*([^\s,]+)\s*$")


def in_range(version: str, spec: str | None) -> bool:
    """Whether `version` satisfies a range such as ">=0.12,<0.16" ("" or None: every version).

    Bounds compare (major, minor, patch); a bare version means ==. `*` matches everything.
    """
    if spec is None or not spec.strip() or spec.strip() == "*":
        return True
    v = version_key(version)
    for clause in spec.split(","):
        if not clause.strip():
            continue
        m = _CLAUSE_RE.match(clause)
        if not m:
            raise VersionError(f"bad version range clause {clause!r} in {spec!r}")
        op, bound = m.group(1) or "==", version_key(m.group(2))
        ok = {
            ">=": v >= bound,
            "<=": v <= bound,
            ">": v > bound,
            "<": v < bound,
            "==": v == bound,
            "=": v == bound,
            "!=": v != bound,
        }[op]
        if not ok:
            return False
    return True
