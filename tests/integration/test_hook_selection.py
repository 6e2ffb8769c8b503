"""The pre-commit hooks hand megalint exactly the files its folder search takes: pre-commit's own
file selection (identify's tags, the hook's `files`, `types`, `exclude_types`), read from
.pre-commit-hooks.yaml, then megalint's `--force-exclude`, which passes over a named file a folder
search would not take. pre-commit only reads the shebang of an executable file and knows no
.sbatch or .slurm, so `types: [shell]` alone would miss SLURM batch files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from megalint.discovery import discover

pytestmark = pytest.mark.integration
run_module = pytest.importorskip("pre_commit.commands.run")

BASH = "#!/bin/bash\necho hi\n"
FILES = {
    "a.sh": "echo hi\n",
    "b.bash": "echo hi\n",
    "train.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\necho hi\n",
    "job.slurm": "echo hi\n",
    "sub/run": BASH,  # extensionless, not executable: a script by its shebang only
    "sub/tool": BASH,  # executable
    "sub/launch": "#!/usr/bin/env sh\necho hi\n",
    "Makefile": "all:\n\techo hi\n",
    "README": "A text file without an extension.\n",
    "notes.txt": "hi\n",
    "x.zsh": "echo hi\n",
    "zrun": "#!/bin/zsh\necho hi\n",  # executable zsh
    "pyrun": "#!/usr/bin/env python3\nprint('hi')\n",  # executable python
    "convert.py": "print('hi')\n",
    ".bashrc": "alias ll='ls -l'\n",
    "t.bats": "#!/usr/bin/env bats\n@test x { true; }\n",
    "blob": b"\x00\x01\x02",
}
EXECUTABLE = {"sub/tool", "zrun", "pyrun"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        if name in EXECUTABLE:
            p.chmod(0o755)
    return tmp_path


def _hook(hook_id: str) -> dict:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    return next(h for h in hooks if h["id"] == hook_id)


def _taken(paths: list[str], force_exclude: bool) -> set[str]:
    problems: list[str] = []
    jobs = {os.path.normpath(j.path) for j in discover(paths, lambda p, d: False, problems.append, force_exclude)}
    assert not problems, problems
    return jobs


@pytest.mark.parametrize("hook_id", ["megalint", "megalint-fix"])
def test_the_hook_passes_what_a_folder_search_takes(tree, monkeypatch, hook_id):
    monkeypatch.chdir(tree)
    hook = _hook(hook_id)
    assert "--force-exclude" in hook["entry"].split()
    names = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
    classifier = run_module.Classifier(names)
    files = run_module.filter_by_include_exclude(names, hook.get("files", ""), hook.get("exclude", "^$"))
    handed = list(
        classifier.by_types(files, hook.get("types", ["file"]), hook.get("types_or", []), hook.get("exclude_types", []))
    )
    searched = _taken(["."], force_exclude=False)
    assert searched == {
        "a.sh",
        "b.bash",
        "train.sbatch",
        "job.slurm",
        os.path.join("sub", "run"),
        os.path.join("sub", "tool"),
        os.path.join("sub", "launch"),
    }
    # pre-commit may hand over a few more candidates (extensionless text files); megalint, named
    # them with --force-exclude, keeps exactly the scripts.
    assert set(handed) >= searched
    assert _taken(handed, force_exclude=True) == searched
