"""The repositories the bench reads: their list (a TOML file), the commit each checkout is at, and
the git commands that make a checkout of the recorded commit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

COMMIT = re.compile(r"[0-9a-f]{40}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")


class RepoListError(ValueError):
    """The repository list cannot be read; the message says where."""


@dataclass(frozen=True)
class Repo:
    """One repository: `owner/name`, where it is fetched from, the commit the figures are taken
    on, and the folders of it that are read."""

    name: str
    url: str
    commit: str
    folders: tuple[str, ...]

    @property
    def checkout(self) -> str:
        """The checkout's folder name under the root: `owner+name`."""
        return self.name.replace("/", "+")


def parse_repos(text: str, where: str) -> list[Repo]:
    """The `[[repo]]` tables of a repository list; `where` names the file in messages."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RepoListError(f"{where}: not valid TOML: {exc}") from None
    tables = doc.get("repo")
    if not isinstance(tables, list) or not tables:
        raise RepoListError(f"{where}: no [[repo]] tables")
    repos: list[Repo] = []
    for i, t in enumerate(tables, 1):
        at = f"{where}: repo {i}"
        name, url, commit, folders = t.get("name"), t.get("url"), t.get("commit"), t.get("folders", ["."])
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise RepoListError(f"{at}: `name` must be owner/name, not {name!r}")
        if not isinstance(url, str) or not url:
            raise RepoListError(f"{at} ({name}): `url` is missing")
        if not isinstance(commit, str) or not COMMIT.fullmatch(commit):
            raise RepoListError(f"{at} ({name}): `commit` must be 40 lowercase hex digits, not {commit!r}")
        if (
            not isinstance(folders, list)
            or not folders
            or not all(isinstance(f, str) and f and not os.path.isabs(f) and ".." not in f.split("/") for f in folders)
        ):
            raise RepoListError(f"{at} ({name}): `folders` must be a list of folders inside the repository")
        unknown = sorted(set(t) - {"name", "url", "commit", "folders"})
        if unknown:
            raise RepoListError(f"{at} ({name}): unknown key(s) {', '.join(unknown)}")
        repos.append(Repo(name, url, commit, tuple(folders)))
    names = [r.name for r in repos]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RepoListError(f"{where}: listed twice: {', '.join(twice)}")
    return repos


def load_repos(path: str) -> list[Repo]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise RepoListError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_repos(text, path)


Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run_git(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, check=False)


def head_commit(checkout: str, run: Runner = run_git) -> str | None:
    """The commit a checkout is at (read only), or None when it is not a git checkout."""
    if not os.path.isdir(checkout):
        return None
    res = run(["git", "-C", checkout, "rev-parse", "HEAD"])
    return res.stdout.strip() if res.returncode == 0 else None


def commit_note(repo: Repo, head: str | None) -> str | None:
    """Why the figures of a checkout are not those of the recorded commit; None when they are."""
    if head is None:
        return f"{repo.name}: the checkout is not a git repository, its commit is unknown (recorded {repo.commit[:12]})"
    if head != repo.commit:
        return f"{repo.name}: the checkout is at {head[:12]}, not at the recorded commit {repo.commit[:12]}"
    return None


def fetch_commands(repo: Repo, dest: str) -> list[list[str]]:
    """The git commands that put the recorded commit, and nothing older, into the new folder `dest`."""
    return [
        ["git", "init", "--quiet", dest],
        ["git", "-C", dest, "remote", "add", "origin", repo.url],
        ["git", "-C", dest, "fetch", "--quiet", "--depth", "1", "origin", repo.commit],
        ["git", "-C", dest, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", "FETCH_HEAD"],
    ]


def fetch(repo: Repo, root: str, run: Runner = run_git) -> str:
    """Make the checkout of `repo` under `root` and say what was done. An existing checkout is left
    as it is; the commit is fetched into a side folder renamed into place only once it is complete,
    so that a failed fetch never leaves a checkout that looks whole."""
    final = os.path.join(root, repo.checkout)
    if os.path.exists(final):
        note = commit_note(repo, head_commit(final, run))
        return f"{repo.name}: already there" + (f"; {note}" if note else " at the recorded commit")
    partial = final + ".partial"
    if os.path.exists(partial):
        return f"{repo.name}: {partial} is left from an earlier fetch; remove it and fetch again"
    for cmd in fetch_commands(repo, partial):
        res = run(cmd)
        if res.returncode != 0:
            return f"{repo.name}: `{' '.join(cmd)}` failed: {(res.stderr or res.stdout).strip()[:300]}"
    os.rename(partial, final)
    return f"{repo.name}: fetched {repo.commit[:12]} into {final}"
