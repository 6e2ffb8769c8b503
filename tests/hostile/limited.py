"""Run megalint's command line in a child process under a memory limit and a timeout: these
tests feed it input that once hung or filled the machine's memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MEMORY_LIMIT = 2 << 30
TIME_LIMIT_S = 120


@dataclass
class Ran:
    rc: int
    out: str
    err: str


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def megalint(*argv: str | Path, cwd: Path, timeout: float = TIME_LIMIT_S) -> Ran:
    """`megalint ARGV…` in `cwd`, with no cache and no configuration above `cwd` but its own."""
    env = {**os.environ, "MEGALINT_NO_CACHE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "megalint", *map(str, argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_limit,
        check=False,
    )
    return Ran(res.returncode, res.stdout, res.stderr)
