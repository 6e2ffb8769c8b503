"""Which files a run checks: folders, shebangs, .gitignore, excludes, standard input."""

from __future__ import annotations

import pytest

from megalint.discovery import is_shell_script, shebang_is_shell

from .conftest import ERROR


def shown_files(r):
    return sorted({line.split(":")[0] for line in r.out.splitlines() if ": ML" in line})


@pytest.fixture
def tree(scripts, tmp_path):
    for name in (
        "a.sh",
        "b.bash",
        "sub/c.slurm",
        "sub/deep/d.sbatch",
        "notes.txt",
        "tool.py",
        "build/out.sh",
        "vendor/v.sh",
        "legacy/old.sh",
    ):
        scripts(name, ERROR)
    scripts("bin/train", "#!/usr/bin/env bash\n" + ERROR)
    scripts("bin/run", "#!/bin/sh\n" + ERROR)
    scripts("bin/py", "#!/usr/bin/env python3\nprint(1)\n")
    scripts("bin/plain", ERROR)
    scripts(".gitignore", "build/\n")
    scripts("vendor/.gitignore", "*.sh\n")
    (tmp_path / ".git").mkdir()
    return tmp_path


def test_recursive_with_gitignore_and_shebangs(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", ".", cwd=tree)
    assert shown_files(r) == [
        "a.sh",
        "b.bash",
        "bin/run",
        "bin/train",
        "legacy/old.sh",
        "sub/c.slurm",
        "sub/deep/d.sbatch",
    ]


def test_gitignore_of_a_parent_folder(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", "build", "sub", cwd=tree)
    assert shown_files(r) == ["sub/c.slurm", "sub/deep/d.sbatch"]


def test_default_path_is_the_current_folder(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", cwd=tree / "sub")
    assert shown_files(r) == ["c.slurm", "deep/d.sbatch"]


def test_explicit_files_are_always_checked(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", "notes.txt", "build/out.sh", "bin/plain", cwd=tree)
    assert shown_files(r) == ["bin/plain", "build/out.sh", "notes.txt"]


def test_exclude_from_the_command_line(megalint, tree):
    r = megalint(
        "--isolated", "--output-format", "concise", "--exclude", "legacy/", "--exclude", "*.bash", ".", cwd=tree
    )
    assert shown_files(r) == ["a.sh", "bin/run", "bin/train", "sub/c.slurm", "sub/deep/d.sbatch"]


def test_config_exclude_is_relative_to_the_config(megalint, tree, scripts):
    scripts("sub/megalint.toml", 'exclude = ["deep/"]\n')
    scripts("megalint.toml", 'exclude = ["legacy/**", "/a.sh"]\n')
    r = megalint("--output-format", "concise", ".", cwd=tree)
    assert shown_files(r) == ["b.bash", "bin/run", "bin/train", "sub/c.slurm"]


def test_force_exclude_for_explicit_files(megalint, tree, scripts):
    scripts("megalint.toml", 'exclude = ["legacy/"]\n')
    args = ("--output-format", "concise", "legacy/old.sh", "a.sh")
    assert shown_files(megalint(*args, cwd=tree)) == ["a.sh", "legacy/old.sh"]  # as pre-commit would pass them
    assert shown_files(megalint("--force-exclude", *args, cwd=tree)) == ["a.sh"]
    assert shown_files(megalint("--force-exclude", "--exclude", "a.sh", *args, cwd=tree)) == []


def test_a_file_named_twice_is_checked_once(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", "a.sh", "./a.sh", ".", cwd=tree)
    assert r.out.count("a.sh:") == 1


def test_stdin(megalint, tree):
    r = megalint("--isolated", "--output-format", "concise", "-", stdin=ERROR, cwd=tree)
    assert r.out.startswith("-:1:89: ML101") and r.rc == 1


def test_stdin_filename_names_and_configures(megalint, tree, scripts):
    scripts("jobs/megalint.toml", 'ignore = ["ML101"]\n')
    r = megalint("--output-format", "concise", "--stdin-filename", "x/train.sh", "-", stdin=ERROR, cwd=tree)
    assert r.out.startswith("x/train.sh:1:89: ML101")
    r = megalint("--output-format", "concise", "--stdin-filename", "jobs/train.sh", stdin=ERROR, cwd=tree)
    assert r.rc == 0 and "All checks passed." in r.out  # the configuration next to the name applies


def test_stdin_filename_with_force_exclude(megalint, tree, scripts):
    scripts("megalint.toml", 'exclude = ["legacy/"]\n')
    r = megalint(
        "--force-exclude", "--output-format", "concise", "--stdin-filename", "legacy/x.sh", "-", stdin=ERROR, cwd=tree
    )
    # Passed through unchecked: nothing was checked, so nothing "passed" either.
    assert (r.rc, r.out) == (0, "")


@pytest.mark.parametrize(
    "line, shell",
    [
        (b"#!/bin/bash\n", True),
        (b"#!/bin/sh", True),
        (b"#! /usr/bin/env bash\n", True),
        (b"#!/usr/bin/env -S bash -e\n", True),
        (b"#!/bin/dash\r\n", True),
        (b"#!/usr/bin/env python3\n", False),
        (b"#!/bin/zsh\n", False),
        (b"#!/usr/bin/bash-like\n", False),
        (b"# bash\n", False),
        (b"", False),
    ],
)
def test_shebangs(line, shell):
    assert shebang_is_shell(line) is shell


def test_is_shell_script(scripts):
    assert is_shell_script(str(scripts("x.sh", "")))
    assert not is_shell_script(str(scripts("x.py", "#!/bin/bash\n")))
    assert is_shell_script(str(scripts("run", "#!/bin/bash\n")))
    assert not is_shell_script(str(scripts("data", "\x00\x01")))
