"""Read a tree of real launch scripts in place and report what megalint resolves.

    python bench/real_scripts.py DIR [DIR ...] [--show-unresolved N]

Selection is the survey's rule: shell-like files (.sh/.bash/.slurm/.sbatch, or a sh/bash
shebang) that mention a Megatron entry point or a model-parallel flag. For every file it
records: a crash (should never happen), the launches found, and for every parallel-size
flag written in the file whether its value was resolved, and if not, why.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from megalint.discovery import is_shell_script  # noqa: E402
from megalint.errors import InputError  # noqa: E402
from megalint.launch.extract import extract_launches  # noqa: E402
from megalint.launch.view import pair_flags  # noqa: E402
from megalint.shell.analyze import analyze_file  # noqa: E402

PARALLEL_FLAGS = (
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--context-parallel-size",
    "--expert-model-parallel-size",
    "--expert-tensor-parallel-size",
    "--virtual-pipeline-model-parallel-size",
    "--num-layers-per-virtual-pipeline-stage",
)
SELECT = re.compile(
    r"(pretrain_\w*\.py|posttrain_\w*\.py|finetune_\w*\.py|train_rl\.py|tasks/main\.py|"
    r"--tensor-model-parallel-size|--pipeline-model-parallel-size|--context-parallel-size|"
    r"--expert-model-parallel-size|--expert-tensor-parallel-size|--sequence-parallel|"
    r"--virtual-pipeline-model-parallel-size|--num-layers-per-virtual-pipeline-stage)"
)
FLAG_RE = re.compile(r"(?<![\w-])(" + "|".join(re.escape(f) for f in PARALLEL_FLAGS) + r")(?![\w-])")


def shell_like(path: str) -> bool:
    return is_shell_script(path)


def categorise(reason: str) -> str:
    r = reason.lower()
    if "argument" in r and "script" in r:
        return 'a script argument ($1, "$@")'
    if "loop" in r:
        return "changed in a loop"
    if "sourced" in r or "may be set by" in r:
        return "a sourced file that is absent or outside the tree"
    if "slurm" in r or "pbs" in r:
        return "a scheduler variable without a literal header"
    if "environment" in r:
        return "an environment input"
    if "output of" in r or "run time" in r or "queried" in r:
        return "a command's output"
    if "placeholder" in r:
        return "a template placeholder"
    if "branches" in r:
        return "merged branches"
    return "other: " + reason[:60]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--show-unresolved", type=int, default=0)
    args = ap.parse_args()
    files = []
    for d in args.dirs:
        for root, _, names in os.walk(d):
            for n in sorted(names):
                p = os.path.join(root, n)
                if os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > 1 << 20:
                    continue
                if not shell_like(p):
                    continue
                try:
                    text = open(p, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                if SELECT.search(text):
                    files.append(p)
    crashes, input_errors, with_launch = [], 0, 0
    total_flags = resolved = 0
    reasons = collections.Counter()
    examples = collections.defaultdict(list)
    times = []
    # A flag written in a sourced config counts as resolved when a launch of any file that
    # sources it resolves it, so the bookkeeping is global: (file, line, flag) -> verdict.
    seen: dict = {}
    written = []
    for p in files:
        t0 = time.perf_counter()
        try:
            facts = analyze_file(p, root_dir=os.path.dirname(p))
            launches = extract_launches(facts)
        except InputError:
            input_errors += 1
            continue
        except Exception as exc:  # noqa: BLE001 - counting crashes is the point
            crashes.append((p, f"{type(exc).__name__}: {exc}"))
            continue
        times.append(time.perf_counter() - t0)
        if launches:
            with_launch += 1
        text = open(p, encoding="utf-8", errors="replace").read()
        for lineno, line in enumerate(text.split("\n"), 1):
            if line.lstrip().startswith("#"):
                continue
            for m in FLAG_RE.finditer(line):
                written.append((os.path.realpath(p), lineno, m.group(1)))
        for launch in launches:
            for f, v in pair_flags(launch.argv):
                if f.text not in PARALLEL_FLAGS or f.span is None:
                    continue
                key = (os.path.realpath(f.span.path), f.span.start_line, f.text)
                known = v is not None and v.text is not None
                reason = None if known else (v.unknown.reason if v is not None and v.unknown else "no value")
                prev = seen.get(key)
                if prev is None or (prev[0] and not known):
                    seen[key] = (known, reason)
    for key in written:
        total_flags += 1
        got = seen.get(key)
        where = f"{key[0]}:{key[1]}"
        if got is None:
            cat = "not in a launch megalint recognised"
            reasons[cat] += 1
            examples[cat].append(where)
        elif got[0]:
            resolved += 1
        else:
            cat = categorise(got[1])
            reasons[cat] += 1
            examples[cat].append(f"{where} ({got[1][:80]})")
    n = len(files)
    print(f"files selected: {n}")
    print(f"crashes: {len(crashes)}")
    for p, e in crashes[:20]:
        print(f"  {p}: {e}")
    print(f"input errors (binary / not UTF-8): {input_errors}")
    print(f"files with at least one Megatron launch: {with_launch}")
    share = resolved / total_flags if total_flags else 0.0
    print(f"parallel-size flags written: {total_flags}; resolved to a value: {resolved} ({share:.1%})")
    for cat, count in reasons.most_common():
        print(f"  unresolved, {cat}: {count}")
        for ex in examples[cat][: args.show_unresolved]:
            print(f"      {ex}")
    if times:
        times.sort()
        print(
            f"parse+evaluate+extract per file: median {times[len(times) // 2] * 1000:.2f} ms, "
            f"p95 {times[min(len(times) - 1, int(len(times) * 0.95))] * 1000:.1f} ms, "
            f"max {times[-1] * 1000:.1f} ms, total {sum(times):.2f} s"
        )
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
