"""The pre-commit hooks, run by pre-commit itself: it builds megalint from this repository into
an environment of its own (offline, from the session's wheelhouse) and runs the hook entry on the
files it is given."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import GIT_ID, ROOT, offline_pip, run

pytestmark = pytest.mark.integration

EXAMPLES = ROOT / "fixtures" / "examples"
# Clean but for one blank after a continuation backslash, which megalint fixes safely.
FIXABLE = (
    "#!/bin/bash\n"
    "# Small GPT smoke test on one node.\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
    "    --num-layers 24 \\  \n"
    "    --hidden-size 1024 \\\n"
    "    --num-attention-heads 16\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A user's repository with launch scripts, a megalint.toml excluding legacy/, all committed."""
    repo = tmp_path_factory.mktemp("user-project") / "project"
    (repo / "scripts").mkdir(parents=True)
    (repo / "legacy").mkdir()
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", repo / "scripts" / "train_bad.sh")
    shutil.copy(EXAMPLES / "gpt_1b_single_node.sh", repo / "scripts" / "train_ok.sh")
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", repo / "legacy" / "old_bad.sh")
    shutil.copy(EXAMPLES / "fp8_on_a100.sh", repo / "scripts" / "fp8.sbatch")
    (repo / "scripts" / "fixme.sh").write_text(FIXABLE)
    # Extensionless and not executable: scripts by their shebang only; a Makefile beside them.
    shutil.copy(EXAMPLES / "gpt_13b_multinode.sbatch", repo / "scripts" / "launch_bad")
    shutil.copy(EXAMPLES / "gpt_1b_single_node.sh", repo / "scripts" / "launch_ok")
    (repo / "scripts" / "Makefile").write_text("all:\n\tsbatch fp8.sbatch\n")
    (repo / "megalint.toml").write_text('exclude = ["legacy/**"]\n')
    run(["git", *GIT_ID, "init", "-q"], cwd=repo)
    run(["git", *GIT_ID, "add", "-A"], cwd=repo)
    run(["git", *GIT_ID, "commit", "-q", "--no-verify", "-m", "scripts"], cwd=repo)
    return repo


def pre_commit(args, cwd: Path, env: dict) -> subprocess.CompletedProcess:  # noqa: F821
    return run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, timeout=600, check=False)


def test_try_repo_fails_on_a_faulty_script(snapshot, wheelhouse, project, tmp_path):
    src, sha = snapshot
    res = pre_commit(
        ["try-repo", str(src), "megalint", "--ref", sha, "--files", "scripts/train_bad.sh"],
        cwd=project,
        env=offline_pip(wheelhouse, TMPDIR=str(tmp_path)),
    )
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "megalint" in out and "Failed" in out
    assert "scripts/train_bad.sh:27:36: error ML101 [world-size-divisibility] world size 32" in out, out
    assert "ML011" in out


@pytest.fixture(scope="module")
def installed_hooks(snapshot, wheelhouse, project, tmp_path_factory):
    """A .pre-commit-config.yaml using this repository's hooks, their environment built once."""
    src, sha = snapshot
    home = tmp_path_factory.mktemp("pre-commit-home")
    config = {"repos": [{"repo": str(src), "rev": sha, "hooks": [{"id": "megalint"}, {"id": "megalint-fix"}]}]}
    cfg = project / ".pre-commit-config.yaml"
    cfg.write_text(yaml.safe_dump(config, sort_keys=False))
    env = offline_pip(wheelhouse, PRE_COMMIT_HOME=str(home))
    res = pre_commit(["install-hooks", "--config", str(cfg)], cwd=project, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return cfg, env


def test_hook_passes_a_clean_script_and_honours_config_excludes(installed_hooks, project):
    cfg, env = installed_hooks
    # legacy/old_bad.sh has the same mistakes as train_bad.sh, but megalint.toml excludes legacy/**:
    # with the file named explicitly, only --force-exclude in the hook's entry keeps it out.
    res = pre_commit(
        ["run", "--config", str(cfg), "megalint", "--files", "scripts/train_ok.sh", "legacy/old_bad.sh"],
        cwd=project,
        env=env,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Passed" in out and "ML101" not in out
    # The same file outside the excluded folder fails: the pass above is the exclude, not a blind hook.
    res = pre_commit(["run", "--config", str(cfg), "megalint", "--files", "scripts/train_bad.sh"], cwd=project, env=env)
    assert res.returncode == 1 and "ML101" in res.stdout


def test_fix_hook_repairs_the_script(installed_hooks, project):
    cfg, env = installed_hooks
    script = project / "scripts" / "fixme.sh"
    assert script.read_text() == FIXABLE
    res = pre_commit(["run", "--config", str(cfg), "megalint", "--files", "scripts/fixme.sh"], cwd=project, env=env)
    assert res.returncode == 1 and "ML012" in res.stdout, res.stdout
    res = pre_commit(["run", "--config", str(cfg), "megalint-fix", "--files", "scripts/fixme.sh"], cwd=project, env=env)
    out = res.stdout + res.stderr
    # pre-commit fails a hook that changed files, so the fix gets reviewed and staged.
    assert res.returncode == 1 and "files were modified by this hook" in out, out
    assert script.read_text() == FIXABLE.replace("\\  \n", "\\\n")
    res = pre_commit(["run", "--config", str(cfg), "megalint", "--files", "scripts/fixme.sh"], cwd=project, env=env)
    assert res.returncode == 0, res.stdout


def test_sbatch_and_extensionless_scripts_are_linted(installed_hooks, project):
    cfg, env = installed_hooks
    # Neither executable nor *.sh, so not shell files to pre-commit: the hook's selection takes them
    # anyway, and megalint lints the scripts among them and passes over the Makefile.
    files = ["scripts/fp8.sbatch", "scripts/launch_bad", "scripts/launch_ok", "scripts/Makefile"]
    res = pre_commit(["run", "--config", str(cfg), "megalint", "--files", *files], cwd=project, env=env)
    assert res.returncode == 1, res.stdout
    assert "scripts/fp8.sbatch:10:37: error ML201" in res.stdout, res.stdout
    assert "scripts/launch_bad:27:36: error ML101 [world-size-divisibility]" in res.stdout, res.stdout
    assert "launch_ok:" not in res.stdout and "Makefile" not in res.stdout
    # The clean script and the Makefile alone pass.
    res = pre_commit(
        ["run", "--config", str(cfg), "megalint", "--files", "scripts/launch_ok", "scripts/Makefile"],
        cwd=project,
        env=env,
    )
    assert res.returncode == 0 and "Passed" in res.stdout, res.stdout
