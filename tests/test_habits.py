"""The project's own habits, checked by the suite as they are before each commit
(.pre-commit-config.yaml): ruff, the formatter, mypy, and modules a newcomer can read whole."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 800


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} comes with the test extra (pip install '.[test]')")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_ruff_check_passes():
    _tool("ruff")
    res = _run("ruff", "check", ".")
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_ruff_format_leaves_every_file_as_it_is():
    _tool("ruff")
    res = _run("ruff", "format", "--check", ".")
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_mypy_passes_with_the_projects_configuration():
    _tool("mypy")
    res = _run("mypy")
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr


def test_no_module_is_longer_than_a_newcomer_can_read():
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "megalint").rglob("*.py"))
        if (n := len(p.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these modules (over {MAX_MODULE_LINES} lines): {long}"


def test_the_pre_commit_configuration_is_valid():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    config = clientlib.load_config(str(ROOT / ".pre-commit-config.yaml"))
    ids = {hook["id"] for repo in config["repos"] for hook in repo["hooks"]}
    assert {"ruff-check", "ruff-format", "mypy", "generated-docs", "constraints-coverage"} <= ids
