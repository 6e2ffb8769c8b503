"""The paths of the CI formats (github `file=`, SARIF `artifactLocation.uri`, GitLab
`location.path`) are relative to the repository's root, whatever folder megalint runs in: the
Action's `working-directory`, or a `cd` in a CI job, must not move the annotations to another file."""

from __future__ import annotations

import json
import re

import pytest

from megalint.output.paths import repository_root

from .conftest import ERROR


def _github_files(out: str) -> list[str]:
    return re.findall(r"^::error file=([^,]+),line=1,", out, re.M)


def _sarif_uris(out: str) -> list[str]:
    results = json.loads(out)["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    for r in results:
        uris += [loc["physicalLocation"]["artifactLocation"]["uri"] for loc in r.get("relatedLocations", [])]
    return uris


def _gitlab_paths(out: str) -> list[str]:
    return [issue["location"]["path"] for issue in json.loads(out)]


READERS = {"github": _github_files, "sarif": _sarif_uris, "gitlab": _gitlab_paths}


@pytest.fixture
def workspace(tmp_path, scripts):
    """A checkout with a launch script two folders down, and another outside it."""
    scripts("repo/sub/dir/train.sh", ERROR)
    scripts("elsewhere/job.sh", ERROR)
    return tmp_path / "repo"


@pytest.mark.parametrize("fmt", sorted(READERS))
@pytest.mark.parametrize("variable", ["GITHUB_WORKSPACE", "CI_PROJECT_DIR"])
def test_paths_from_a_subfolder_are_relative_to_the_workspace(megalint, monkeypatch, workspace, fmt, variable):
    monkeypatch.setenv(variable, str(workspace))
    for named in (".", "train.sh", str(workspace / "sub" / "dir" / "train.sh")):
        r = megalint("--output-format", fmt, named, cwd=workspace / "sub" / "dir")
        paths = READERS[fmt](r.out)
        assert paths and set(paths) == {"sub/dir/train.sh"}, (named, r.out[-2000:])


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_a_path_outside_the_workspace_stays_absolute(megalint, monkeypatch, workspace, fmt):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    outside = workspace.parent / "elsewhere" / "job.sh"
    r = megalint("--output-format", fmt, "../../../elsewhere/job.sh", cwd=workspace / "sub" / "dir")
    want = f"file://{outside}" if fmt == "sarif" else str(outside)
    assert set(READERS[fmt](r.out)) == {want}, r.out[-2000:]


def test_github_notes_name_the_labelled_file_from_the_workspace(megalint, monkeypatch, workspace):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace))
    r = megalint("--output-format", "github", "train.sh", cwd=workspace / "sub" / "dir")
    assert "(sub/dir/train.sh:1:27)" in r.out, r.out


def test_without_a_ci_variable_the_git_top_level_is_the_root(megalint, workspace):
    (workspace / ".git").mkdir()
    r = megalint("--output-format", "gitlab", ".", cwd=workspace / "sub" / "dir")
    assert set(_gitlab_paths(r.out)) == {"sub/dir/train.sh"}


def test_repository_root(tmp_path):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert repository_root({}, str(sub)) == str(sub)  # no checkout: the working folder
    (tmp_path / "a" / ".git").write_text("gitdir: ../elsewhere\n")  # a worktree's .git is a file
    assert repository_root({}, str(sub)) == str(tmp_path / "a")
    assert repository_root({"CI_PROJECT_DIR": str(tmp_path)}, str(sub)) == str(tmp_path)
    env = {"GITHUB_WORKSPACE": str(tmp_path / "gh"), "CI_PROJECT_DIR": str(tmp_path)}
    assert repository_root(env, str(sub)) == str(tmp_path / "gh")
    assert repository_root({"GITHUB_WORKSPACE": ""}, str(sub)) == str(tmp_path / "a")
