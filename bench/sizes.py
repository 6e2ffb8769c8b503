"""Time and peak memory of megalint on large scripts, each case in a process of its own.

    python bench/sizes.py [--quick] [--keep DIR]

Cases grow one shape of script: launches per file, lines of plain assignments (`X1=1`), the
elements of one array (`A=(0 1 2 …)`), the lines of one continued launch command, and functions.
Each runs `megalint --no-cache --jobs 1 --output-format concise FILE` under a 4 GB address-space
limit; wall time, CPU time and peak RSS come from `os.wait4` of that child. `result` says whether
the file was checked or reported as too large (ML019, `file-too-large`). Under each shape, the
slope is the cost per unit between its two largest checked cases, and `growth` the marginal CPU
cost of that last step over the marginal cost of the first (1.0: linear). Timings on a shared
machine are noisy: compare the figures of one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from megalint.shell.budget import MAX_LAUNCHES

MEMORY_LIMIT = 4_000_000_000
TIME_LIMIT_S = 300
LAUNCH = (
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --seed {i} --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --tensor-model-parallel-size 2\n"
)
TAIL = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 1024 --num-attention-heads 16\n"


def launches(n: int) -> str:
    return "#!/bin/bash\n" + "".join(LAUNCH.format(i=i) for i in range(n))


def assignments(size: int) -> str:
    """About `size` bytes of `X<i>=<i>` lines, then a launch."""
    lines, total, i = ["#!/bin/bash\n"], 12, 0
    while total < size:
        line = f"X{i}={i}\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines) + TAIL


def array(n: int) -> str:
    return "#!/bin/bash\nA=(" + " ".join(str(i) for i in range(n)) + ")\n" + TAIL


def continued(n: int) -> str:
    return (
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
        + "".join(f"    --data-path /data/{i} \\\n" for i in range(n))
        + "    --num-layers 2\n"
    )


def functions(n: int) -> str:
    return "#!/bin/bash\n" + "".join(f'f{i}() {{\n  local X=$1\n  echo "$X" {i}\n}}\n' for i in range(n)) + TAIL


@dataclass
class Shape:
    name: str
    units: str  # what `sizes` count
    per: int  # the slope is given per this many units
    make: Callable[[int], str]
    sizes: list[int]


SHAPES = [
    Shape("launches per file", "launches", 1000, launches, [100, 300, 1000, 3000, 22_500]),
    Shape(
        "lines of assignments",
        "bytes",
        1_000_000,
        assignments,
        [1_000_000, 2_000_000, 4_000_000, 5_000_000, 10_000_000, 50_000_000],
    ),
    Shape("array elements", "elements", 100_000, array, [10_000, 100_000, 300_000]),
    Shape("continued command lines", "lines", 10_000, continued, [2_000, 10_000, 30_000]),
    Shape("functions", "functions", 10_000, functions, [1_000, 10_000, 30_000]),
]
QUICK = {"launches per file": [100, 300], "lines of assignments": [1_000_000, 50_000_000]}


@dataclass
class Row:
    size: int
    nbytes: int
    wall: float
    cpu: float
    rss_mb: float
    result: str


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(path: str) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak RSS MB, result) of megalint on `path`, in a child process."""
    env = {**os.environ, "MEGALINT_NO_CACHE": "1", "COLUMNS": "200", "NO_COLOR": "1"}
    argv = [sys.executable, "-m", "megalint", "--no-cache", "--jobs", "1", "--output-format", "concise", path]
    with tempfile.TemporaryFile() as out:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_limit)
        deadline = start + TIME_LIMIT_S
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    rc = proc.returncode
    if "too many launches" in text:
        result = f"ML019: the first {MAX_LAUNCHES:,} launches checked"
    elif "ML019" in text:
        result = "ML019: not checked"
    elif rc in (0, 1):
        result = "checked"
    elif rc == 2 and "was not applied" in text:
        result = "checked; a rule over its CEL budget (exit 2)"
    else:
        result = f"exit {rc}: {text.strip().splitlines()[-1][:60] if text.strip() else ''}"
    # ru_maxrss is in kilobytes on Linux.
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, result


def _slope(shape: Shape, rows: list[Row]) -> str:
    checked = [r for r in rows if r.result.startswith("checked")]
    if len(checked) < 2:
        return "  (fewer than two checked cases: no slope)"

    def per(a: Row, b: Row) -> tuple[float, float]:
        units = (b.size - a.size) / shape.per
        return (b.cpu - a.cpu) / units, (b.rss_mb - a.rss_mb) / units

    cpu, rss = per(checked[-2], checked[-1])
    line = f"  slope per {shape.per:,} {shape.units}: {cpu:.2f} s CPU, {rss:.0f} MB"
    if len(checked) >= 3:
        # The marginal cost of the last step over that of the first: 1.0 when the cost is linear.
        first, _ = per(checked[0], checked[1])
        line += f"; growth of the marginal CPU cost, first step to last: {cpu / first:.2f}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two sizes of two shapes only")
    parser.add_argument("--keep", metavar="DIR", help="write the generated scripts here and keep them")
    args = parser.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="megalint-sizes-")
    os.makedirs(folder, exist_ok=True)
    print(f"{'case':<44} {'bytes':>12} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}  result")
    for shape in SHAPES:
        sizes = QUICK.get(shape.name) if args.quick else shape.sizes
        if not sizes:
            continue
        rows = []
        for size in sizes:
            path = os.path.join(folder, f"{shape.units}-{size}.sh")
            text = shape.make(size)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            wall, cpu, rss, result = run_case(path)
            row = Row(size, len(text.encode()), wall, cpu, rss, result)
            rows.append(row)
            case = f"{shape.name}: {size:,}"
            print(f"{case:<44} {row.nbytes:>12,} {wall:>8.2f} {cpu:>8.2f} {rss:>12.0f}  {result}", flush=True)
            if not args.keep:
                os.unlink(path)
        print(_slope(shape, rows), flush=True)
    if not args.keep:
        os.rmdir(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
