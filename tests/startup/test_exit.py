"""`megalint` exits without tearing the interpreter down: what it printed must all be there, and
its exit status must be main()'s."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from megalint.cli import main

ROOT = Path(__file__).resolve().parents[2]
ERROR = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"


def _megalint(tmp_path: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY")}
    env.update(MEGALINT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT), COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-m", "megalint", *argv], input=stdin, capture_output=True, text=True, env=env, cwd=tmp_path
    )


def test_the_output_is_complete_and_the_status_is_mains(tmp_path, capsys):
    script = tmp_path / "job.sh"
    script.write_text(ERROR * 200)  # a report longer than a pipe's buffer
    argv = ("--isolated", "--output-format", "json", str(script))
    rc = main(list(argv))
    printed = capsys.readouterr().out
    run = _megalint(tmp_path, *argv)
    assert run.returncode == rc == 1
    assert run.stdout == printed and len(printed) > 65536


def test_usage_errors_keep_their_status_and_message(tmp_path):
    run = _megalint(tmp_path, "--no-such-option")
    assert run.returncode == 2 and "--no-such-option" in run.stderr
    assert _megalint(tmp_path, "--version").stdout.startswith("megalint ")
