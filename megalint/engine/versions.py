"""The Megatron versions rules name: a rule's range (`megatron: ">=0.13"`) and an example's version.

The grammar is megalint/megatron/versions.py's; a rule names a release or `HEAD` (`main`, `dev`),
without the other spellings users may type (`latest`, `megatron-core==0.19.2`).
"""

from __future__ import annotations

from megalint.megatron.versions import VersionError, VersionKey, VersionRange
from megalint.megatron.versions import parse_version as _parse_version

__all__ = ["VERSION_ROOT", "VERSION_TESTS", "VersionError", "VersionRange", "parse_version"]


def parse_version(text: str) -> VersionKey:
    """A comparable key for a version as a rule names it."""
    return _parse_version(text, aliases=False)


# Version tests in conditions and messages. A rule writes `version_at_least('0.16')`; the compiled
# expression passes the job's version (the context's `megatron`) as the first argument. A version
# the tests cannot read is older than every release (megalint always resolves the job's version
# to a release or HEAD, so only a hand-made context has one).
VERSION_ROOT = "megatron"


def _job(version: object) -> VersionKey | None:
    if not isinstance(version, str):
        return None
    try:
        return parse_version(version)
    except VersionError:
        return None


def version_at_least(version: object, bound: str) -> bool:
    """The job's Megatron version is `bound` or newer (HEAD is newer than every release)."""
    key = _job(version)
    return key is not None and key >= parse_version(bound)


def version_before(version: object, bound: str) -> bool:
    """The job's Megatron version is older than `bound`."""
    return not version_at_least(version, bound)


def version_is(version: object, bound: str) -> bool:
    """The job's Megatron version is `bound` (`0.12` is 0.12.0; the job's version is a minor release or HEAD)."""
    key = _job(version)
    return key is not None and key == parse_version(bound)


VERSION_TESTS = {
    "version_at_least": version_at_least,
    "version_before": version_before,
    "version_is": version_is,
}
