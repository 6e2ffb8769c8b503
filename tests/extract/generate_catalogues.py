"""Regenerate megalint/data/catalogue-extracted/<version>.json from a Megatron-LM git repository's tags.

    python tests/extract/generate_catalogues.py GIT_DIR [--out DIR] [--head REV] [TAG ...]

Each tag's `megatron/` is exported with `git archive` into a temporary directory (never into this checkout),
read by the extractor, and written as `<version>.json` (core_v0.19.0 -> 0.19.0; --head REV -> main-<short sha>).
Without TAG arguments every final core_vX.Y.Z tag is used. Prints per-version counts and timings.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "megalint" / "data" / "catalogue-extracted"
_FINAL_TAG = re.compile(r"^core_v(\d+)\.(\d+)\.(\d+)$")


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def export(git_dir: str, rev: str, dest: Path) -> None:
    proc = subprocess.run(["git", "--git-dir", git_dir, "archive", rev, "megatron"], check=True, capture_output=True)
    with tempfile.TemporaryFile() as fp:
        fp.write(proc.stdout)
        fp.seek(0)
        with tarfile.open(fileobj=fp) as tar:
            tar.extractall(dest, filter="data")


def write_catalogue(data: dict, path: Path) -> None:
    """One flag per line: small diffs between versions, still plain JSON."""
    head = json.dumps({"version": data["version"], "generated_from": data["generated_from"]}, ensure_ascii=False)
    lines = [head[:-1] + ', "flags": [']
    flags = [json.dumps(f, ensure_ascii=False) for f in data["flags"]]
    lines.extend(f + ("," if i < len(flags) - 1 else "") for i, f in enumerate(flags))
    lines.append("]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from megalint.megatron.extract import extract_catalogue

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("git_dir")
    p.add_argument("tags", nargs="*")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--head", metavar="REV", help="also extract this revision of the main branch")
    args = p.parse_args(argv)
    tags = args.tags or sorted(
        (t for t in git(args.git_dir, "tag", "--list", "core_v*").split() if _FINAL_TAG.match(t)),
        key=lambda t: tuple(int(x) for x in _FINAL_TAG.match(t).groups()),  # type: ignore[union-attr]
    )
    jobs = [(t, t[len("core_v") :], f"tag {t}") for t in tags]
    if args.head:
        sha = git(args.git_dir, "rev-parse", args.head).strip()
        jobs.append((sha, f"main-{sha[:8]}", "main branch"))
    args.out.mkdir(parents=True, exist_ok=True)
    for rev, label, what in jobs:
        sha = git(args.git_dir, "rev-parse", f"{rev}^{{commit}}").strip()
        with tempfile.TemporaryDirectory() as tmp:
            export(args.git_dir, rev, Path(tmp))
            start = time.perf_counter()
            cat = extract_catalogue(
                tmp,
                version_label=label,
                generated_from=f"NVIDIA/Megatron-LM {what} (commit {sha}); arguments.py and config dataclasses "
                "read with libcst by megalint catalogue",
            )
            elapsed = time.perf_counter() - start
        write_catalogue(cat.to_json(), args.out / f"{label}.json")
        options = sum(len(f.option_strings) for f in cat.flags)
        print(
            f"{label:16s} {len(cat.flags):4d} actions {options:4d} option strings  {elapsed:5.2f} s  "
            f"{len(cat.parsed_files):2d} files parsed  {len(cat.warnings)} warnings"
        )
        for w in cat.warnings:
            print(f"    warning: {w}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
