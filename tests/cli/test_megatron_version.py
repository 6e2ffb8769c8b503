"""A Megatron-LM version megalint does not know is never a silent fallback: too old to have any
catalogue near it is an error (exit 2, naming what is known), on the command line and in a
configuration (at file:line:col); one checked against another release's catalogue says so."""

from __future__ import annotations

import pytest

from .conftest import CLEAN


@pytest.mark.parametrize("command", [(), ("explain",)])
def test_unknown_old_version_is_an_error(megalint, scripts, command):
    p = scripts("job.sh", CLEAN)
    r = megalint(*command, "--isolated", "--megatron-version", "0.3", str(p))
    assert r.rc == 2
    assert r.err == (
        "megalint: --megatron-version: megalint knows no Megatron-LM `0.3`: the oldest release it knows "
        "is 0.4.0 (known: HEAD, 0.19, 0.15, 0.12, 0.8, and the releases 0.4.0 to 0.19.0)\n"
    )
    assert r.out == ""


def test_version_without_its_own_catalogue_is_said(megalint, scripts):
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--megatron-version", "0.21", str(p))
    assert r.rc == 0
    assert "megalint: --megatron-version 0.21: no catalogue for Megatron-LM 0.21; using 0.19" in r.err


@pytest.mark.parametrize("version", ["0.4", "0.8", "0.14.5", "0.19", "HEAD", "core_v0.12.0"])
def test_known_versions_run_quietly(megalint, scripts, version):
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--megatron-version", version, str(p))
    assert r.rc in (0, 1) and r.err == ""


def test_unknown_old_version_in_configuration_points_at_it(megalint, scripts):
    p = scripts("job.sh", CLEAN)
    cfg = scripts("megalint.toml", 'gpu = "h100"\nmegatron-version = "0.3"\n')
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err.startswith(f"megalint: {cfg}:2:20: megalint knows no Megatron-LM `0.3`: the oldest release")


@pytest.mark.parametrize("name", ["megalint.toml", "pyproject.toml"])
def test_version_without_its_own_catalogue_in_configuration_is_said_once(megalint, scripts, name):
    # The same note as --megatron-version gives, at the value in the file, once for all its scripts.
    table = "[tool.megalint]\n" if name == "pyproject.toml" else ""
    cfg = scripts(name, f'{table}select = ["ALL"]\nmegatron-version = "0.21"\n')
    a, b = scripts("a.sh", CLEAN), scripts("b.sh", CLEAN)
    line = 3 if table else 2
    r = megalint("--no-cache", str(a), str(b))
    assert r.rc == 0
    assert r.err == (
        f"megalint: {cfg}:{line}:20: megatron-version 0.21: no catalogue for Megatron-LM 0.21; using 0.19, "
        "the newest release catalogue; HEAD may be closer\n"
    )
    # The command line's version is the one used: the configuration's is then not said.
    assert megalint("--no-cache", "--megatron-version", "0.19", str(a)).err == ""
