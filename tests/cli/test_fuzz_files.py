"""A short, seeded run of the file fuzzing campaign (tools/fuzz_files.py): odd folders, special
files, odd names and --fix on mutated scripts, each through the command line in its own process
under a memory limit and a timeout."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from tools.fuzz_files import campaign  # noqa: E402


def test_a_seeded_campaign_finds_nothing():
    assert campaign(8, seed=17) == 8
