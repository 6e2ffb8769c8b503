"""Skipping unread statements, on random mixes of snippets (needs hypothesis, the test extra)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shell.test_relevance import SNIPPETS, _both


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=25))
def test_snippet_mixes_see_the_same_launches(lines):
    got = _both(os.path.join("/nonexistent", "mix.sh"), "".join(lines))
    if got is not None:
        assert got[0] == got[1]
