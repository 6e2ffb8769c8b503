"""Run megalint over public repositories of real launch scripts, read in place at a recorded
commit, and print per repository what it found and what it could not check.

    python bench/real_scripts.py [--root DIR] [--repos FILE] [--jobs N] [--no-memory]
                                 [--show N] [--json FILE]
    python bench/real_scripts.py --fetch [--root DIR]     # shallow-fetch each recorded commit

The repositories, their commits and the folders read are listed in bench/real_repos.toml. The
root holds one checkout per repository, named `owner+name` (default: $MEGALINT_REPOS, else
~/.cache/megalint-bench/repos). A checkout whose HEAD is not the recorded commit is still read,
and the report says so. Nothing is ever written into a checkout.

Per repository: the files read (selection rule in bench/realbench/files.py), the launches found,
the files checked as fragments (Megatron flags, no launch), the files writing Megatron flags of
which no launch or fragment holds any, how many parallel/batch flags written were resolved to a
value, the errors and warnings per rule, as `megalint --isolated` reports them, and those of them
that rest on an assumption (a default of an input, what a loaded module sets).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.realbench.aggregate import Figures, aggregate
from bench.realbench.count import FileRecord
from bench.realbench.files import select_files
from bench.realbench.report import errors_json, render, total_line
from bench.realbench.repos import Repo, RepoListError, commit_note, fetch, head_commit, load_repos
from bench.realbench.worker import catalogue_flags, check_all

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REPOS = os.path.join(HERE, "real_repos.toml")


def default_root() -> str:
    return os.environ.get("MEGALINT_REPOS") or os.path.expanduser("~/.cache/megalint-bench/repos")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=None, help="folder of checkouts named owner+name")
    ap.add_argument("--repos", default=DEFAULT_REPOS, help="the repository list (TOML)")
    ap.add_argument("--fetch", action="store_true", help="fetch each recorded commit into the root, then stop")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory model, as megalint --no-memory")
    ap.add_argument("--show", type=int, default=0, metavar="N", help="print N example locations per category")
    ap.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="write every error finding, and every warning resting on an assumption, to FILE",
    )
    args = ap.parse_args(argv)
    if args.jobs < 1 or args.show < 0:
        ap.error("--jobs must be at least 1 and --show at least 0")
    args.root = os.path.abspath(args.root or default_root())
    return args


def do_fetch(repos: list[Repo], root: str) -> int:
    os.makedirs(root, exist_ok=True)
    failed = 0
    for repo in repos:
        line = fetch(repo, root)
        failed += " failed: " in line or " left from an earlier fetch" in line
        print(line, flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        repos = load_repos(args.repos)
    except RepoListError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.fetch:
        return do_fetch(repos, args.root)
    t0 = time.perf_counter()
    known = catalogue_flags()
    present: list[Repo] = []
    notes: dict[str, list[str]] = {}
    left_out: dict[str, list[str]] = {}
    jobs: list[tuple[str, str]] = []
    for repo in repos:
        checkout = os.path.join(args.root, repo.checkout)
        if not os.path.isdir(checkout):
            print(f"warning: {repo.name}: no checkout at {checkout} (run with --fetch); skipped", file=sys.stderr)
            continue
        present.append(repo)
        note = commit_note(repo, head_commit(checkout))
        notes[repo.name] = [note] if note else []
        if note:
            print(f"warning: {note}", file=sys.stderr)
        chosen, left_out[repo.name] = select_files(checkout, repo.folders, known)
        jobs += [(p, checkout) for p in chosen]
    if not present:
        print(f"error: none of the repositories is under {args.root}", file=sys.stderr)
        return 2
    records = list(check_all(jobs, min(args.jobs, max(1, len(jobs))), not args.no_memory, known))
    seconds = time.perf_counter() - t0
    by_repo: dict[str, list[FileRecord]] = {r.name: [] for r in present}
    owner = {os.path.realpath(os.path.join(args.root, r.checkout)): r.name for r in present}
    for (_, checkout), rec in zip(jobs, records, strict=True):
        by_repo[owner[os.path.realpath(checkout)]].append(rec)
    per_repo: list[Figures] = []
    total = Figures("total")
    for repo in present:
        fig = aggregate(repo.name, by_repo[repo.name], left_out[repo.name])
        fig.notes = notes[repo.name]
        per_repo.append(fig)
        total.add(fig)
        at = "at the recorded commit" if not fig.notes else "NOT at the recorded commit"
        print(render(fig, args.root, args.show, f"{repo.name} @ {repo.commit[:12]} ({at})"))
        print()
    print(total_line(total, seconds, args.jobs))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(errors_json(per_repo, args.root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
