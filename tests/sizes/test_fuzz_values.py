"""A short, seeded run of bench/fuzz_values.py: hostile values of the int and float flags end in
findings, never in an exception or a hang."""

from __future__ import annotations

from bench.fuzz_values import HOSTILE, numeric_flags, run


def test_hostile_flag_values_end_in_findings() -> None:
    assert numeric_flags("HEAD") and "nan" in HOSTILE
    done, failures = run(seconds=60, version="HEAD", seed=0, limit=150)
    assert done == 150
    assert failures == []
