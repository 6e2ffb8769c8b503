"""The fast paths against the general code, on random mixes of snippets (needs hypothesis, the test extra)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shell.test_fast_paths import SNIPPETS, _same


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=20))
def test_snippet_mixes_evaluate_the_same(lines):
    _same(os.path.join("/nonexistent", "mix.sh"), "".join(lines))
