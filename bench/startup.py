"""Start-up of the installed megalint, each case beside ShellCheck on the same input.

    python bench/startup.py [-n 21] [--megalint CMD] [--shellcheck CMD] [--script FILE]

Measures a new process per call, as a pre-commit hook or an editor runs it: `--version`, `--help`,
a 3-line clean script and one real launch script (`--script`; default: Megatron-LM's GPT-3 example
under $MEGALINT_REPOS, else the largest fixture), each script as a repeated call finds it (the
replay of the same command, megalint/replay.py) and with `--no-cache` (checked from scratch). Each round runs every case once for megalint and
once for ShellCheck, alternated, so both see the same machine load; the table gives the medians of
wall time and CPU time (user + system of the child). A last row times the interpreter the megalint
script runs, doing nothing (`-c pass`): the floor of any Python command. Run it on a non-editable
install: an editable install's import hook costs time of its own.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLEAN_SCRIPT = "#!/bin/bash\nset -euo pipefail\necho hello\n"
REAL_SCRIPT = os.path.join("NVIDIA+Megatron-LM", "examples", "gpt3", "train_gpt3_175b_distributed.sh")


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, wall: float, cpu: float) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)


def run_once(argv: list[str], cwd: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `argv` (in `cwd`), its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd
    )
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4: keep Popen from waiting again
    return wall, usage.ru_utime + usage.ru_stime


def default_script() -> str:
    repos = os.environ.get("MEGALINT_REPOS") or os.path.expanduser("~/.cache/megalint-bench/repos")
    candidate = os.path.join(repos, REAL_SCRIPT)
    if os.path.isfile(candidate):
        return candidate
    fixtures = os.path.join(ROOT, "fixtures")
    scripts = [os.path.join(d, f) for d, _, fs in os.walk(fixtures) for f in fs if f.endswith(".sh")]
    return max(scripts, key=os.path.getsize)


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:8.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=21, help="rounds (default 21; medians of these)")
    ap.add_argument("--megalint", default="megalint", help="the megalint command (default: megalint on PATH)")
    ap.add_argument("--shellcheck", default="shellcheck", help="the ShellCheck command (default: on PATH)")
    ap.add_argument("--script", help="the real launch script to time")
    args = ap.parse_args(argv)
    megalint = shlex.split(args.megalint)
    shellcheck = shlex.split(args.shellcheck)
    for cmd in (megalint, shellcheck):
        if shutil.which(cmd[0]) is None:
            ap.error(f"not found: {cmd[0]}")
    real = args.script or default_script()
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean.sh")
        with open(clean, "w", encoding="utf-8") as fh:
            fh.write(CLEAN_SCRIPT)
        cases = [
            ("--version", ["--version"], ["--version"]),
            ("--help", ["--help"], ["--help"]),
            ("3-line clean script", [clean], [clean]),
            ("3-line clean script, --no-cache", ["--no-cache", clean], [clean]),
            (os.path.basename(real), [real], [real]),
            (f"{os.path.basename(real)}, --no-cache", ["--no-cache", real], [real]),
        ]
        python = interpreter_of(megalint)
        if python is not None:
            # The floor of any Python command: the interpreter megalint's script runs, doing nothing,
            # beside ShellCheck on the 3-line script.
            cases.append(("python -c pass (the floor), vs the 3-line script", [*python, "-c", "pass"], [clean]))
        timings = {(name, tool): Timing() for name, _, _ in cases for tool in ("megalint", "shellcheck")}
        for cmd, extra in ((megalint, cases[0][1]), (shellcheck, cases[0][2])):
            run_once(cmd + extra, tmp)  # warm the file cache
        # A script written less than two seconds ago is not trusted by its times (replay.py), so its
        # repeated calls would not be replayed: measured as a hook finds files, settled, after one
        # round that keeps the cache and the replays.
        time.sleep(2.1)
        for _name, ml_args, _ in cases:
            run_once(command(megalint, ml_args), tmp)
        # The calls run in the scratch folder: the root of the cache megalint keeps there.
        for _ in range(args.n):
            for name, ml_args, sc_args in cases:
                timings[(name, "megalint")].add(*run_once(command(megalint, ml_args), tmp))
                timings[(name, "shellcheck")].add(*run_once(shellcheck + sc_args, tmp))
    print(f"median of {args.n} runs each, alternated; {' '.join(megalint)} vs {' '.join(shellcheck)}")
    print(f"{'case':<46} {'megalint wall':>14} {'cpu':>8} {'shellcheck wall':>16} {'cpu':>8} {'wall ratio':>11}")
    for name, _, _ in cases:
        ml, sc = timings[(name, "megalint")], timings[(name, "shellcheck")]
        ratio = statistics.median(ml.wall) / max(statistics.median(sc.wall), 1e-9)
        print(
            f"{name:<46} {ms(ml.wall):>11} ms {ms(ml.cpu):>5} ms {ms(sc.wall):>13} ms {ms(sc.cpu):>5} ms {ratio:>10.1f}x"
        )
    if wrapper_imports_re(megalint):
        print("the megalint script imports `re` before megalint starts (pip before 25.2 writes it so)")
    return 0


def command(megalint: list[str], args: list[str]) -> list[str]:
    """megalint with `args`; the floor's case names its interpreter itself."""
    return args if args[-2:] == ["-c", "pass"] else megalint + args


def _script_text(cmd: list[str]) -> str:
    found = shutil.which(cmd[0])
    if found is None:
        return ""
    try:
        with open(found, "rb") as fh:
            return fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return ""


def interpreter_of(cmd: list[str]) -> list[str] | None:
    """The interpreter a console script names on its `#!` line, or None (not a script)."""
    first = _script_text(cmd).split("\n", 1)[0]
    return shlex.split(first[2:]) if first.startswith("#!") else None


def wrapper_imports_re(cmd: list[str]) -> bool:
    return "\nimport re\n" in _script_text(cmd)


if __name__ == "__main__":
    sys.exit(main())
