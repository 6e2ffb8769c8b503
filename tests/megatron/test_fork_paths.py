"""A launch's fork and entry file are named by strings as `pathlib.Path` writes them
(megatron/forks.py reads no pathlib): the same text for every way an entry point can be written,
and the same folders above a script."""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path

import pytest

from megalint.megatron import forks


def _texts() -> list[str]:
    # Every text of up to four characters over the characters that make paths differ, and longer
    # random ones.
    alphabet = ["a", ".", "/", "\\", "b"]
    texts = ["".join(p) for n in range(1, 5) for p in itertools.product(alphabet, repeat=n)]
    rng = random.Random(20261205)
    texts += [
        "".join(rng.choice([*alphabet, "..", "./", "//"]) for _ in range(rng.randint(5, 14))) for _ in range(3000)
    ]
    return texts


@pytest.mark.skipif(os.sep != "/", reason="elsewhere the module asks pathlib itself")
def test_an_entry_point_is_written_as_pathlib_writes_it():
    for text in _texts():
        written = forks._written(text)
        assert written == str(Path(text)), text
        if not os.path.isabs(written):
            for folder in ("/", "/r", "/r/s.t"):
                assert forks._joined(folder, written) == str(Path(folder) / text), (folder, text)


def test_the_folders_above_a_script_are_those_pathlib_walks(tmp_path):
    deep = tmp_path / "repo" / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "repo" / "megatron_patch").mkdir()
    start = os.path.realpath(deep)
    # Outside a run (probes.one_run) each call looks again.
    assert forks.repository_root(start) == str(Path(start).parents[1])
    (tmp_path / "repo" / "a" / ".git").mkdir()  # the top of a git repository stops the walk
    assert forks.repository_root(start) is None


def test_a_fork_is_told_from_the_folders_above_its_script(tmp_path):
    repo = tmp_path / "repo"
    (repo / "megatron_patch").mkdir(parents=True)
    (repo / "examples").mkdir()
    script = repo / "examples" / "run.sh"
    script.write_text("#!/bin/bash\n")
    (repo / "examples" / "pretrain_x.py").write_text("import megatron_patch\n")
    fork = forks.detect_fork(str(script), "./pretrain_x.py", ())
    assert fork is not None and fork.name == forks.PAI_MEGATRON_PATCH
    assert fork.root == str(Path(os.path.realpath(repo)))
    assert fork.entry_file == str(Path(os.path.realpath(script)).parent / "pretrain_x.py")
    assert forks.entry_file_read(str(script), "examples//pretrain_x.py", ()) == str(
        Path(os.path.realpath(repo)) / "examples" / "pretrain_x.py"
    )
