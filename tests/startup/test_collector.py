"""The command line sets the garbage collector for a run (cli/check.py): what it imported is
frozen, and the youngest objects are collected every GC_THRESHOLD allocations, not Python's 700."""

from __future__ import annotations

import json
import subprocess
import sys

from megalint.cli.check import GC_THRESHOLD
from tests.startup.child import child_env


def test_a_run_collects_less_often_and_leaves_its_imports_frozen(tmp_path):
    (tmp_path / "clean.sh").write_text("#!/bin/bash\necho hello\n")
    probe = (
        "import gc, json, sys\n"
        "before = gc.get_threshold()\n"
        "from megalint.cli import main\n"
        "rc = main(['--isolated', '--no-cache', 'clean.sh'])\n"
        "sys.stderr.write(json.dumps([rc, before, gc.get_threshold(), gc.get_freeze_count()]))\n"
    )
    env = child_env(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    rc, before, after, frozen = json.loads(done.stderr.strip().splitlines()[-1])
    assert rc == 0 and before[0] == 700
    assert after == [GC_THRESHOLD, 10, 10]
    assert frozen > 10_000, "the modules imported for the check are left out of every collection"
