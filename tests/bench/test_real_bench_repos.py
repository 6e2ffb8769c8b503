"""bench/realbench/repos.py: the repository list, the commit check and the fetch commands (no network)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from bench.realbench.repos import (
    Repo,
    RepoListError,
    commit_note,
    fetch,
    fetch_commands,
    head_commit,
    load_repos,
    parse_repos,
)

ROOT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
ONE = f"""
[[repo]]
name = "acme/Megatron-Fork"
url = "https://example.org/acme/Megatron-Fork.git"
commit = "{SHA}"
folders = ["examples", "scripts"]
"""
REPO = Repo("acme/Megatron-Fork", "https://example.org/acme/Megatron-Fork.git", SHA, ("examples", "scripts"))


def test_a_repository_list_reads_into_repos_named_by_their_checkout_folder():
    (repo,) = parse_repos(ONE, "list.toml")
    assert repo == REPO
    assert repo.checkout == "acme+Megatron-Fork"


def test_folders_default_to_the_whole_repository():
    text = "\n".join(line for line in ONE.splitlines() if not line.startswith("folders"))
    assert parse_repos(text, "list.toml")[0].folders == (".",)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('commit = "' + SHA + '"', 'commit = "main"'), "`commit` must be 40 lowercase hex digits"),
        (('url = "https://example.org/acme/Megatron-Fork.git"', ""), "`url` is missing"),
        (('name = "acme/Megatron-Fork"', 'name = "Megatron-Fork"'), "`name` must be owner/name"),
        (('folders = ["examples", "scripts"]', 'folders = ["/etc"]'), "`folders` must be a list"),
        (('folders = ["examples", "scripts"]', 'folders = ["../up"]'), "`folders` must be a list"),
        (('folders = ["examples", "scripts"]', 'branch = "main"'), "unknown key(s) branch"),
        (("[[repo]]", "[[repo]"), "not valid TOML"),
    ],
)
def test_a_bad_repository_list_is_refused_with_where_and_why(change, message):
    with pytest.raises(RepoListError, match="^list.toml") as err:
        parse_repos(ONE.replace(*change), "list.toml")
    assert message in str(err.value)


def test_an_empty_list_and_a_repository_listed_twice_are_refused():
    with pytest.raises(RepoListError, match="no \\[\\[repo\\]\\] tables"):
        parse_repos("", "list.toml")
    with pytest.raises(RepoListError, match="listed twice: acme/Megatron-Fork"):
        parse_repos(ONE + ONE, "list.toml")


def test_a_missing_list_file_is_an_error_not_a_traceback(tmp_path):
    with pytest.raises(RepoListError, match="cannot read"):
        load_repos(str(tmp_path / "absent.toml"))


def test_the_shipped_list_records_the_five_repositories_at_a_commit():
    repos = load_repos(str(ROOT / "bench" / "real_repos.toml"))
    names = {r.name for r in repos}
    assert {
        "NVIDIA/Megatron-LM",
        "alibaba/Pai-Megatron-Patch",
        "Ascend/MindSpeed-LLM",
        "epfLLM/Megatron-LLM",
        "microsoft/Megatron-DeepSpeed",
    } <= names


def test_the_commit_note_says_when_a_checkout_is_elsewhere_or_not_a_repository():
    assert commit_note(REPO, SHA) is None
    assert commit_note(REPO, OTHER) == (
        "acme/Megatron-Fork: the checkout is at fedcba987654, not at the recorded commit 0123456789ab"
    )
    assert "not a git repository" in (commit_note(REPO, None) or "")


def test_head_commit_reads_a_real_checkout_and_is_none_elsewhere(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    sha = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert head_commit(str(tmp_path)) == sha
    assert head_commit(str(tmp_path / "absent")) is None
    (tmp_path / "plain").mkdir()
    assert head_commit(str(tmp_path / "plain"), lambda cmd: subprocess.CompletedProcess(cmd, 128, "", "")) is None


def test_fetch_commands_fetch_only_the_recorded_commit_shallowly():
    assert fetch_commands(REPO, "/r/acme+Megatron-Fork.partial") == [
        ["git", "init", "--quiet", "/r/acme+Megatron-Fork.partial"],
        ["git", "-C", "/r/acme+Megatron-Fork.partial", "remote", "add", "origin", REPO.url],
        ["git", "-C", "/r/acme+Megatron-Fork.partial", "fetch", "--quiet", "--depth", "1", "origin", SHA],
        [
            "git",
            "-C",
            "/r/acme+Megatron-Fork.partial",
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--detach",
            "FETCH_HEAD",
        ],
    ]


class FakeGit:
    """Records the commands; `git init` makes the folder, as git would; fails the command named."""

    def __init__(self, fail: str | None = None, head: str = SHA):
        self.calls: list[list[str]] = []
        self.fail = fail
        self.head = head

    def __call__(self, cmd: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(cmd))
        if self.fail is not None and self.fail in cmd:
            return subprocess.CompletedProcess(cmd, 128, "", "fatal: could not read from remote\n")
        if cmd[1] == "init":
            os.makedirs(cmd[-1])
        return subprocess.CompletedProcess(cmd, 0, self.head + "\n" if "rev-parse" in cmd else "", "")


def test_fetch_makes_the_checkout_in_a_side_folder_and_renames_it_when_complete(tmp_path):
    git = FakeGit()
    line = fetch(REPO, str(tmp_path), git)
    final = tmp_path / "acme+Megatron-Fork"
    assert git.calls == fetch_commands(REPO, str(final) + ".partial")
    assert final.is_dir() and not (tmp_path / "acme+Megatron-Fork.partial").exists()
    assert line == f"acme/Megatron-Fork: fetched 0123456789ab into {final}"


def test_a_failed_fetch_stops_and_leaves_no_checkout_that_looks_whole(tmp_path):
    git = FakeGit(fail="fetch")
    line = fetch(REPO, str(tmp_path), git)
    assert len(git.calls) == 3
    assert "failed: fatal: could not read from remote" in line
    assert not (tmp_path / "acme+Megatron-Fork").exists()
    assert "left from an earlier fetch" in fetch(REPO, str(tmp_path), FakeGit())


def test_an_existing_checkout_is_left_alone_and_its_commit_checked(tmp_path):
    (tmp_path / "acme+Megatron-Fork").mkdir()
    git = FakeGit(head=OTHER)
    line = fetch(REPO, str(tmp_path), git)
    assert [c[3:] for c in git.calls] == [["rev-parse", "HEAD"]]
    assert "already there; acme/Megatron-Fork: the checkout is at fedcba987654" in line
    assert fetch(REPO, str(tmp_path), FakeGit()).endswith("already there at the recorded commit")
