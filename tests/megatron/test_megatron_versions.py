from __future__ import annotations

import pytest

from megalint.megatron.versions import VersionError, in_range, parse_version, resolve


@pytest.mark.parametrize(
    "text,version,has_note",
    [
        ("0.15.3", "0.15", False),
        ("core_v0.12.0", "0.12", False),
        ("core_r0.15.0", "0.15", False),
        ("v0.8", "0.8", False),
        ("megatron-core==0.19.2", "0.19", False),
        ("latest", "HEAD", False),
        ("main", "HEAD", False),
        (None, "HEAD", False),
        ("", "HEAD", False),
        ("0.17.1", "0.15", True),
        ("0.13", "0.12", True),
        ("0.9", "0.8", True),
        ("0.20.0", "0.19", True),
        ("0.7", "0.8", True),
        ("0.15.0rc3", "0.15", True),
    ],
)
def test_resolve(text, version, has_note):
    res = resolve(text)
    assert res.version == version
    assert (res.note is not None) == has_note


def test_notes_say_what_was_chosen():
    assert "nearest lower" in resolve("0.17").note and "0.15" in resolve("0.17").note
    assert "older than" in resolve("0.6").note


def test_bad_version():
    with pytest.raises(VersionError):
        resolve("banana")


def test_ordering_and_ranges():
    assert parse_version("0.8") < parse_version("0.12") < parse_version("HEAD")
    assert in_range("0.15", ">=0.12,<0.16")
    assert not in_range("0.16", ">=0.12,<0.16")
    assert in_range("HEAD", ">=0.16")
    assert not in_range("0.8", ">=0.12")
    assert in_range("0.15", "0.15")
    assert in_range("0.15", None) and in_range("0.15", "*")
    with pytest.raises(VersionError):
        in_range("0.15", ">>0.1")
