"""A newcomer's first hour, scripted from the README: a fresh virtual environment (no system
site-packages), the quick start's commands as printed, the README's pre-commit snippet blocking a
bad script in a scratch repository, and the Action's steps run from a `working-directory`, whose
annotations must name files from the repository root. One venv serves every step.

Installs are offline, from the session's wheelhouse (built from PyPI once); the second quick-start
command installs the test extra, which needs PyPI, and is skipped when PyPI cannot be reached."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys

import pytest
import yaml
from conftest import GIT_ID, ROOT, offline_pip, run, venv_bin
from test_actionlint import CompositeRun

pytestmark = pytest.mark.integration

EXAMPLES = ROOT / "fixtures" / "examples"


def _readme() -> str:
    return (ROOT / "README.md").read_text("utf-8")


def _quick_start() -> list[str]:
    section = _readme()[_readme().index("## Quick start") :]
    section = section[: section.index("\n## ", 3)]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def _pre_commit_snippet() -> dict:
    section = _readme()[_readme().index("## pre-commit") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    return yaml.safe_load(block.group(1))


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def newcomer(snapshot, wheelhouse, tmp_path_factory):
    """(checkout, venv, environment with the venv first on PATH)."""
    src, _ = snapshot
    checkout = tmp_path_factory.mktemp("newcomer") / "megalint"
    shutil.copytree(src, checkout)
    venv = checkout.parent / ".venv"
    run([sys.executable, "-m", "venv", venv], timeout=300)
    env = offline_pip(wheelhouse, PATH=f"{venv_bin(venv, 'python').parent}{os.pathsep}{os.environ['PATH']}")
    env["VIRTUAL_ENV"] = str(venv)
    return checkout, venv, env


def test_first_quick_start_command_lints_the_examples(newcomer):
    checkout, venv, env = newcomer
    install_and_lint = _quick_start()[0]
    res = run(["bash", "-c", install_and_lint], cwd=checkout, env=env, timeout=600, check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out  # two examples have mistakes on purpose
    assert "error ML101" in out or "ML101" in out
    assert re.search(r"^Found \d+ error", res.stdout, re.M), out
    assert (venv_bin(venv, "megalint")).exists()


def test_readme_pre_commit_snippet_blocks_a_bad_script(newcomer, snapshot, tmp_path):
    src, sha = snapshot
    _, _, env = newcomer
    repo = tmp_path / "project"
    repo.mkdir()
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", repo / "train.sbatch")
    shutil.copy(EXAMPLES / "gpt_1b_single_node.sh", repo / "smoke.sh")
    config = _pre_commit_snippet()
    assert config["repos"][0]["rev"].startswith("v")
    config["repos"][0].update(repo=str(src), rev=sha)
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    run(["git", *GIT_ID, "init", "-q"], cwd=repo)
    run(["git", *GIT_ID, "add", "-A"], cwd=repo)
    hook_env = dict(env, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    res = run([sys.executable, "-m", "pre_commit", "run"], cwd=repo, env=hook_env, timeout=600, check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "train.sbatch:27:36: error ML101" in res.stdout, res.stdout
    assert "smoke.sh:" not in res.stdout


def test_action_from_a_working_directory_annotates_from_the_workspace(newcomer, snapshot, tmp_path):
    src, _ = snapshot
    _, _, env = newcomer
    workspace = tmp_path / "workspace"
    (workspace / "jobs" / "gpt").mkdir(parents=True)
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", workspace / "jobs" / "gpt" / "train.sbatch")
    runner = CompositeRun(
        src, workspace, tmp_path / "runner", env, {"working-directory": "jobs/gpt", "sarif-file": "out.sarif"}
    )
    res = runner.step("install")
    assert res.returncode == 0, res.stdout + res.stderr
    res = runner.step("lint")
    assert res.returncode == 1, res.stdout + res.stderr
    files = set(re.findall(r"^::\w+ file=([^,]+),", res.stdout, re.M))
    assert files == {"jobs/gpt/train.sbatch"}, res.stdout
    sarif = (workspace / "jobs" / "gpt" / "out.sarif").read_text()
    assert '"uri": "jobs/gpt/train.sbatch"' in sarif


def test_second_quick_start_command_installs_the_test_extra(newcomer):
    if not _pypi_reachable():
        pytest.skip("PyPI cannot be reached: the test extra cannot be installed")
    checkout, _, env = newcomer
    install_and_test = _quick_start()[1]
    online = {k: v for k, v in env.items() if k not in ("PIP_NO_INDEX",)}
    # The command as printed; the suite it starts is this one, so it runs one small file of it.
    online["PYTEST_ADDOPTS"] = "-p no:cacheprovider tests/test_release_version.py"
    res = run(["bash", "-c", install_and_test], cwd=checkout, env=online, timeout=600, check=False)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "passed" in res.stdout
