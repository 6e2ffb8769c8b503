"""Shared set-up for the tests that install megalint the way users do.

The expensive parts are made once per test session: a snapshot of the working tree as a git
repository of its own (so pre-commit and pip see exactly the files of this checkout, committed or
not), and a wheelhouse holding megalint's wheel, its dependencies and its build requirements
(downloaded from the package index once; every later install in these tests is offline).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GIT_ID = [
    "-c",
    "user.name=megalint tests",
    "-c",
    "user.email=tests@megalint.invalid",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "init.defaultBranch=main",
]


def run(cmd, *, cwd=None, env=None, timeout=600, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout[-6000:]}\n--- stderr\n{proc.stderr[-6000:]}"
        )
    return proc


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH pointing into this checkout, no CI vars."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
        and not k.startswith(("GITHUB_", "MEGALINT_", "PRE_COMMIT"))
    }
    env.update(extra)
    return env


def _source_files() -> list[str]:
    """The files of this checkout that git would commit: tracked and untracked, not ignored."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "build", "dist", ".venv", "__pycache__", ".pytest_cache", ".hypothesis"}
        files = []
        for dirpath, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
            files += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names]
        return files


@pytest.fixture(scope="session")
def snapshot(tmp_path_factory) -> tuple[Path, str]:
    """(path, commit): this checkout's files committed in a fresh git repository."""
    dest = tmp_path_factory.mktemp("megalint-src") / "megalint"
    for rel in _source_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    run(["git", *GIT_ID, "init", "-q"], cwd=dest)
    run(["git", *GIT_ID, "add", "-A"], cwd=dest)
    run(["git", *GIT_ID, "commit", "-q", "--no-verify", "-m", "snapshot"], cwd=dest)
    sha = run(["git", "rev-parse", "HEAD"], cwd=dest).stdout.strip()
    return dest, sha


@pytest.fixture(scope="session")
def wheelhouse(snapshot, tmp_path_factory) -> Path:
    """megalint's wheel built from the snapshot, with its dependencies and build requirements."""
    src, _ = snapshot
    wh = tmp_path_factory.mktemp("wheelhouse")
    run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", str(src), "-w", wh],
        env=clean_env(),
        timeout=900,
    )
    build_requires = _build_requires(src / "pyproject.toml")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            *build_requires,
            "-d",
            wh,
        ],
        env=clean_env(),
        timeout=600,
    )
    return wh


def _build_requires(pyproject: Path) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return list(tomllib.loads(pyproject.read_text("utf-8"))["build-system"]["requires"])


def offline_pip(wheelhouse: Path, **extra: str) -> dict[str, str]:
    """An environment in which every pip (also one pre-commit or a build backend starts) installs
    from the wheelhouse only."""
    # PIP_COMPILE=0 (`--compile` off): byte-compiling every dependency at install time costs more
    # than the tests themselves on a small machine; Python compiles what it imports anyway.
    return clean_env(
        PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse), PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_COMPILE="0", **extra
    )


def the_wheel(wheelhouse: Path) -> Path:
    wheels = sorted(wheelhouse.glob("megalint-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def venv_bin(venv: Path, name: str) -> Path:
    for sub in ("bin", "Scripts"):
        for cand in (venv / sub / name, venv / sub / f"{name}.exe"):
            if cand.exists():
                return cand
    raise AssertionError(f"{name} is not in {venv}")
