"""Nothing checked is not "All checks passed": a run that finds no script says so with its own
status (4), and a missing or binary file prints its error and no summary (2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "megalint", "--isolated", "--no-cache", *argv], capture_output=True, text=True, cwd=cwd
    )


def test_a_folder_without_scripts_is_no_files_found(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a script\n")
    done = _run("empty", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (4, "")
    assert "no files found to check in empty" in done.stderr


def test_a_missing_file_prints_its_error_and_no_summary(tmp_path: Path) -> None:
    done = _run("missing.sh", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "missing.sh: no such file or folder" in done.stderr


def test_a_binary_file_prints_its_error_and_no_summary(tmp_path: Path) -> None:
    (tmp_path / "b.sh").write_bytes(b"\x00\x01binary")
    done = _run("b.sh", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert "binary file" in done.stderr


def test_a_clean_script_still_passes(tmp_path: Path) -> None:
    (tmp_path / "ok.sh").write_text("#!/bin/bash\necho hi\n")
    done = _run("ok.sh", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "All checks passed.\n")


def test_files_named_but_all_excluded_are_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "megalint.toml").write_text('exclude = ["skip.sh"]\n')
    (tmp_path / "skip.sh").write_text("#!/bin/bash\necho hi\n")
    done = subprocess.run(
        [sys.executable, "-m", "megalint", "--no-cache", "--force-exclude", "skip.sh"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (0, "")
