"""A short, seeded run of tools/fuzz_hostile.py (the shell model, rule files and configuration
files mutated): every case ends in a result or one of megalint's own errors. The campaign itself
runs for minutes; this keeps what it found fixed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")  # the campaign is driven by it; the fast suite runs without it

ROOT = Path(__file__).resolve().parents[2]


def test_a_seeded_campaign_finds_nothing(tmp_path: Path) -> None:
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz_hostile.py"),
            "--cases",
            "40",
            "--seed",
            "3",
            "--case-seconds",
            "60",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "ran 120 cases: 0 failures" in res.stdout
