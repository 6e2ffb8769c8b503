"""The environment of a fresh interpreter that runs this checkout's megalint with a cache folder
of the test's own (the start-up tests each look at one such process)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child_env(cache: Path, *, caching: bool = False, **extra: str) -> dict[str, str]:
    """This process's environment, megalint imported from this checkout, its caches in `cache`;
    with `caching`, without the MEGALINT_NO_CACHE the test session sets (tests/conftest.py)."""
    dropped = ("PYTHONPATH", "MEGALINT_NO_CACHE") if caching else ("PYTHONPATH",)
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(MEGALINT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **extra)
    return env
