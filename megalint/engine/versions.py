"""The Megatron versions rules name: a rule's range (`megatron: ">=0.13"`) and an example's version.

The grammar is megalint/megatron/versions.py's; a rule names a release or `HEAD` (`main`, `dev`),
without the other spellings users may type (`latest`, `megatron-core==0.19.2`).
"""

from __future__ import annotations

from megalint.megatron.versions import VersionError, VersionKey, VersionRange
from megalint.megatron.versions import parse_version as _parse_version

__all__ = ["VersionError", "VersionRange", "parse_version"]


def parse_version(text: str) -> VersionKey:
    """A comparable key for a version as a rule names it."""
    return _parse_version(text, aliases=False)
