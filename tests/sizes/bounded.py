"""Running the command line on a hostile input in a child process with its address space and its
time bounded, so that a runaway estimate fails the test instead of the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

MEMORY_LIMIT = 2 * 1024**3
TIME_LIMIT = 60


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_cli(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEGALINT_NO_CACHE": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "megalint", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=TIME_LIMIT,
        preexec_fn=_limit_memory,
    )
