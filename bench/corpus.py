"""megalint beside ShellCheck on a whole corpus of public launch scripts, and per file.

    python bench/corpus.py [--root DIR] [--repos FILE] [--rounds N] [--sample N] [--seed S]
                           [--megalint CMD] [--shellcheck CMD] [--jobs N] [--skip PART ...]
                           [--profile FILE]

The files are those bench/real_scripts.py reads (bench/realbench/files.py: shell-like and mentioning
Megatron) in the checkouts under the root (default: $MEGALINT_REPOS, else
~/.cache/megalint-bench/repos). Printed, one table, each megalint figure beside ShellCheck's taken in
the same run, the two alternated:

- corpus: every file in one call (`megalint --isolated`, `shellcheck`), wall and CPU, medians over
  the rounds, and the peak resident memory of the largest process (`wait4`'s `ru_maxrss`);
- cached: megalint's second call on the same files, with what the first kept (its replay, and
  the results of each file);
- per process: one file per call over a seeded sample, medians of wall and CPU; and the same
  calls again once a call has kept them (as a hook re-run on an unchanged file: the replay);
- in process: the time megalint's pipeline takes on each file (parse to findings), p50/p95/max,
  measured in this process as `--isolated` checks a file with its checkout as the root;
- branches: a script of k independent `if` blocks that each set a flag of the launch, k = 1…30,
  its time in process (median of 5): it should grow no faster than k.

The calls run in a scratch folder (their working folder and so the cache's root), never in a
checkout. With `--profile FILE` the in-process pass runs under cProfile and its statistics go to
FILE.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.realbench.files import select_files
from bench.realbench.repos import load_repos
from bench.realbench.worker import catalogue_flags

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = ("corpus", "cached", "process", "inprocess", "branches")
BRANCHES = (1, 5, 10, 15, 20, 25, 30)


@dataclass
class Run:
    """One call: wall seconds, CPU seconds (user + system, its children included), peak RSS in MiB."""

    wall: float
    cpu: float
    rss: float
    code: int


def run(cmd: Sequence[str], cwd: str) -> Run:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode)


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")


def corpus_files(root: str, repos_file: str) -> list[tuple[str, str]]:
    known = catalogue_flags()
    files: list[tuple[str, str]] = []
    for repo in load_repos(repos_file):
        checkout = os.path.join(root, repo.checkout)
        if os.path.isdir(checkout):
            chosen, _ = select_files(checkout, repo.folders, known)
            files += [(p, checkout) for p in chosen]
    return files


def in_process(files: Sequence[tuple[str, str]], profile: str | None) -> list[float]:
    """Seconds per file of `megalint --isolated`'s pipeline, read to findings, in this process."""
    import gc

    from megalint import probes
    from megalint.checking.one_file import finalise
    from megalint.checking.setup import AnalysisOptions, Configs, Setups
    from megalint.cli.check import GC_THRESHOLD
    from megalint.pipeline import lint_text
    from megalint.source import decode

    # The collector as the command sets it (cli/check.py): what was imported is frozen, and the
    # youngest objects are collected every GC_THRESHOLD allocations.
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 10, 10)

    configs = Configs(None, isolated=True)
    assert configs.fixed is not None
    setup = Setups(AnalysisOptions(), configs).setup(configs.fixed)
    # What a run reads once before its first file (the packaged rules, from the rule cache or
    # read and compiled when it is empty) is not a file's analysis: it is read here, untimed.
    setup.settings  # noqa: B018 - read for its effect
    times: list[float] = []

    def one(path: str, checkout: str) -> None:
        with open(path, "rb") as fh:
            data = fh.read()
        t0 = time.perf_counter()
        try:
            text = decode(path, data)
            settings = replace(setup.settings, root_dir=checkout)
            finalise(lint_text(path, text, settings), text, setup, path)
        except Exception:  # noqa: BLE001,S110 - a failing file still took its time
            pass
        times.append(time.perf_counter() - t0)

    # One run, as the command makes of many files (checking/run.py): what the scripts of a run
    # share (the folders above them, their entry files) is looked at once.
    with probes.one_run():
        if profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
            for p, c in files:
                one(p, c)
            prof.disable()
            prof.dump_stats(profile)
        else:
            for p, c in files:
                one(p, c)
    return times


def branches_script(k: int) -> str:
    """k undecided tests, each setting one flag of the launch when it holds."""
    lines = ["#!/bin/bash", "ARGS=()"]
    for i in range(k):
        lines += [f'if [ "$USE_{i}" = 1 ]; then', f"  ARGS+=(--seed {i})", f"  FLAG_{i}=1", "fi"]
    lines.append('torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 "${ARGS[@]}"')
    return "\n".join(lines) + "\n"


def branches(ks: Sequence[int]) -> list[float]:
    """Seconds megalint's pipeline takes on `branches_script(k)`, median of 5, per k."""
    from megalint.checking.setup import AnalysisOptions, Configs, Setups
    from megalint.pipeline import lint_text

    configs = Configs(None, isolated=True)
    assert configs.fixed is not None
    settings = Setups(AnalysisOptions(), configs).setup(configs.fixed).settings
    out = []
    for k in ks:
        text = branches_script(k)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            lint_text("branches.sh", text, settings)
            times.append(time.perf_counter() - t0)
        out.append(median(times))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_root = os.environ.get("MEGALINT_REPOS") or os.path.expanduser("~/.cache/megalint-bench/repos")
    ap.add_argument("--root", default=default_root, help="folder of checkouts named owner+name")
    ap.add_argument("--repos", default=os.path.join(HERE, "real_repos.toml"), help="the repository list (TOML)")
    ap.add_argument("--rounds", type=int, default=3, help="whole-corpus calls of each tool")
    ap.add_argument("--sample", type=int, default=50, help="files checked one per process")
    ap.add_argument("--seed", type=int, default=16, help="seed of the sample")
    ap.add_argument("--megalint", default="megalint", help="the megalint command")
    ap.add_argument("--shellcheck", default="shellcheck", help="the ShellCheck command")
    ap.add_argument("--jobs", default=None, help="megalint's --jobs (default: its own)")
    ap.add_argument("--skip", nargs="*", default=[], choices=PARTS, help="parts not measured")
    ap.add_argument("--profile", default=None, metavar="FILE", help="cProfile the in-process pass into FILE")
    args = ap.parse_args(argv)
    files = corpus_files(os.path.abspath(args.root), args.repos)
    if not files:
        print(f"error: no checkout under {args.root}", file=sys.stderr)
        return 2
    paths = [p for p, _ in files]
    ml = [*shlex.split(args.megalint), "--isolated", "--output-format", "concise", "--exit-zero"]
    if args.jobs is not None:
        ml += ["--jobs", args.jobs]
    sc = [*shlex.split(args.shellcheck), "-f", "gcc"]
    helptext = subprocess.run([*shlex.split(args.megalint), "--help"], capture_output=True, text=True).stdout
    # A megalint without a cache of results (before it had one) is measured as it is.
    no_cache = ["--no-cache"] if "--no-cache" in helptext else []
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, m: float, s: float | None, unit: str = "s") -> None:
        ratio = f"{m / s:.2f}x" if s else "-"
        rows.append((name, f"{m:.3f} {unit}", f"{s:.3f} {unit}" if s is not None else "-", ratio))

    with tempfile.TemporaryDirectory(prefix="megalint-corpus-") as scratch:
        if "corpus" not in args.skip:
            mine: list[Run] = []
            theirs: list[Run] = []
            for _ in range(args.rounds):
                mine.append(run([*ml, *no_cache, *paths], scratch))
                theirs.append(run([*sc, *paths], scratch))
            row(f"corpus, {len(paths)} files, wall", median([r.wall for r in mine]), median([r.wall for r in theirs]))
            row("corpus, CPU", median([r.cpu for r in mine]), median([r.cpu for r in theirs]))
            row("corpus, peak RSS", max(r.rss for r in mine), max(r.rss for r in theirs), "MiB")
        if "cached" not in args.skip:
            first = run([*ml, *paths], scratch)
            again = [run([*ml, *paths], scratch) for _ in range(args.rounds)]
            row("corpus, first run filling the cache, wall", first.wall, None)
            # Beside the first run (not ShellCheck): the bound is a fraction of it.
            row("corpus, cached run, wall (vs megalint's first)", median([r.wall for r in again]), first.wall)
            row("corpus, cached run, CPU (vs megalint's first)", median([r.cpu for r in again]), first.cpu)
        if "process" not in args.skip:
            sample = random.Random(args.seed).sample(paths, min(args.sample, len(paths)))
            mine, theirs, kept = [], [], []
            for p in sample:
                mine.append(run([*ml, *no_cache, p], scratch))
                theirs.append(run([*sc, p], scratch))
                if no_cache:
                    run([*ml, p], scratch)  # fills the file's entry (a pre-commit call on an unchanged file)
                    kept.append(run([*ml, p], scratch))
            row(f"one file per process, {len(sample)} files, wall", median([r.wall for r in mine]),
                median([r.wall for r in theirs]))  # fmt: skip
            row("one file per process, CPU", median([r.cpu for r in mine]), median([r.cpu for r in theirs]))
            if kept:
                row("one file per process, from the cache, wall", median([r.wall for r in kept]),
                    median([r.wall for r in theirs]))  # fmt: skip
    if "inprocess" not in args.skip:
        times = in_process(files, args.profile)
        for name, q in (("p50", 0.5), ("p95", 0.95), ("max", 1.0)):
            row(f"in process, per file {name}", quantile(times, q) * 1000, None, "ms")
        row("in process, all files", sum(times), None)
    if "branches" not in args.skip:
        for k, t in zip(BRANCHES, branches(BRANCHES), strict=True):
            row(f"{k} independent if blocks, in process", t * 1000, None, "ms")
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'megalint':>12}  {'ShellCheck':>12}  {'ratio':>7}")
    for name, m, s, ratio in rows:
        print(f"{name:<{width}}  {m:>12}  {s:>12}  {ratio:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
