"""Fuzz the files megalint is given: folder shapes (links that loop or lead out, FIFOs, special
files, names that are not UTF-8 or hold control characters, read-only and huge files) and
`--fix`/`--diff` on mutated scripts (CRLF, BOM, a trailing backslash, lines dropped or repeated),
through the command line, each run in its own process under a memory limit and a timeout.

    python tools/fuzz_files.py --minutes 10 [--seed 1]

Each run must end with exit status 0, 1 or 2 within the timeout and without an internal error;
every report written to a file must be valid UTF-8 (and JSON where the format is JSON); a file
outside the folder checked, a read-only file and a FIFO must be left as they were; a file `--fix`
rewrote must keep its line endings and still parse with `bash -n` when it did before. The first
failure found is printed with the tree that made it, so that it can become a regression test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("full", "concise", "grouped", "json", "json-lines", "sarif", "github", "gitlab", "junit")
MEMORY_LIMIT = 2 << 30
TIMEOUT_S = 60


def _seed_scripts() -> list[bytes]:
    """The scripts of the fixtures, the raw material of the mutations."""
    found = sorted((ROOT / "fixtures").rglob("*.sh"))
    return [p.read_bytes() for p in found if p.stat().st_size < 20_000]


SEEDS = _seed_scripts()

# Names: the awkward bytes a pull request can put in a file name.
_NAME_PARTS = [b"job", b"a b", b"\xff", b"\xc3\x28", b"\n", b"\r", b"\x1b[31m", b"%", b":", b",", b"\xe2\x80\xae", b"-"]
_SUFFIXES = [b".sh", b".bash", b".slurm", b"", b".txt"]


@st.composite
def names(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.sampled_from(_NAME_PARTS), min_size=1, max_size=3))
    name = b"".join(parts).replace(b"/", b"_").lstrip(b"-") or b"x"
    return name + draw(st.sampled_from(_SUFFIXES))


@st.composite
def scripts(draw: st.DrawFn) -> bytes:
    """A fixture script, mutated."""
    text = draw(st.sampled_from(SEEDS)) if SEEDS else b"torchrun pretrain_gpt.py --num-layers 2\n"
    lines = text.split(b"\n")
    for op in draw(st.lists(st.sampled_from(["drop", "repeat", "backslash", "blank", "swap"]), max_size=4)):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "drop":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "backslash":
            lines[i] = lines[i] + draw(st.sampled_from([b" \\", b"\\", b"\\  "]))
        elif op == "blank":
            lines.insert(i, b"")
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    out = b"\n".join(lines)
    if draw(st.booleans()):
        out = out.rstrip(b"\n") + b"\n"
    if draw(st.booleans()):
        out = out.replace(b"\n", b"\r\n")
    if draw(st.integers(0, 9)) == 0:
        out = b"\xef\xbb\xbf" + out
    return out


@dataclass
class Entry:
    kind: str  # file, readonly, dir, fifo, link
    name: bytes
    data: bytes = b""
    target: bytes = b""  # of a link: relative, or one of the special targets


_LINK_TARGETS = [b".", b"..", b"../..", b"SELF", b"OUTSIDE", b"/dev/zero", b"/dev/null", b"missing.sh", b"sub"]


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(["file", "file", "file", "readonly", "dir", "fifo", "link", "link"]))
    name = draw(names())
    if kind in ("file", "readonly"):
        return Entry(kind, name, draw(scripts()))
    if kind == "link":
        return Entry(kind, name, target=draw(st.sampled_from(_LINK_TARGETS)))
    return Entry(kind, name)


@dataclass
class Case:
    tree: list[tuple[bytes, Entry]]  # (folder below the root, entry)
    fix: str  # "", "--fix", "--diff", "--fix --unsafe-fixes"
    outputs: list[str] = field(default_factory=list)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    folders = [b"", b"sub", b"sub/deeper"]
    tree = [(draw(st.sampled_from(folders)), draw(entries())) for _ in range(draw(st.integers(1, 6)))]
    fix = draw(st.sampled_from(["", "--fix", "--diff", "--fix --unsafe-fixes"]))
    outputs = draw(st.lists(st.sampled_from(FORMATS), max_size=3, unique=True))
    return Case(tree, fix, outputs)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _build(case: Case, base: Path) -> tuple[bytes, dict[bytes, bytes]]:
    """Make the tree under base/tree; return its path and what must stay as it is (path -> bytes)."""
    top = os.fsencode(base / "tree")
    outside = os.fsencode(base / "outside.sh")
    with open(outside, "wb") as fh:
        fh.write(b"torchrun pretrain_gpt.py \\\n    --num-layers 2 \\\n")  # a fixable finding
    kept = {outside: open(outside, "rb").read()}
    for folder, e in case.tree:
        d = os.path.join(top, folder)
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, e.name)
        if os.path.lexists(p):
            continue
        if e.kind in ("file", "readonly"):
            with open(p, "wb") as fh:
                fh.write(e.data)
            if e.kind == "readonly":
                os.chmod(p, 0o444)
                kept[p] = e.data
        elif e.kind == "dir":
            os.makedirs(p, exist_ok=True)
        elif e.kind == "fifo":
            os.mkfifo(p)
        else:
            target = {b"SELF": e.name, b"OUTSIDE": outside}.get(e.target, e.target)
            os.symlink(target, p)
    return top, kept


def _line_endings(data: bytes) -> tuple[int, int]:
    crlf = data.count(b"\r\n")
    return crlf, data.count(b"\n") - crlf


def _bash_ok(data: bytes, base: Path) -> bool:
    probe = base / "probe.sh"
    probe.write_bytes(data)
    return subprocess.run(["bash", "-n", str(probe)], capture_output=True, timeout=30).returncode == 0


def run_case(case: Case, base: Path) -> str | None:
    """Run megalint on the case's tree; None when every invariant holds, else what broke."""
    top, kept = _build(case, base)
    originals = {}
    for folder, _dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(folder, f)
            if os.path.isfile(p) and not os.path.islink(p):
                originals[p] = open(p, "rb").read()
    argv = [sys.executable, "-m", "megalint", "--isolated", "--no-cache", *case.fix.split()]
    reports = {fmt: os.fsencode(base / f"report.{fmt}") for fmt in case.outputs}
    for fmt, path in reports.items():
        argv += ["--output-format", f"{fmt}:{os.fsdecode(path)}"]
    argv += [os.fsdecode(top)]
    # Its own session: on a timeout its worker processes are killed with it.
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limits, cwd=base, start_new_session=True
    )
    try:
        _out, raw_err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return f"timed out after {TIMEOUT_S} s"
    err = raw_err.decode("utf-8", "replace")
    if proc.returncode not in (0, 1, 2, 4) or "internal error" in err or "Traceback" in err:
        return f"exit status {proc.returncode}: {err.strip()[-2000:]}"
    for fmt, path in reports.items() if "--diff" not in case.fix else ():  # --diff writes no report
        try:
            text = open(path, "rb").read().decode("utf-8")
            if fmt in ("json", "sarif", "gitlab"):
                json.loads(text)
            elif fmt == "json-lines":
                [json.loads(line) for line in text.splitlines()]
        except (OSError, ValueError) as exc:
            return f"report {fmt}: {exc}"
    for p, data in kept.items():
        if open(p, "rb").read() != data:
            return f"{p!r} was written"
    for p, before in originals.items():
        after = open(p, "rb").read()
        if after == before:
            continue
        if "--fix" not in case.fix:
            return f"{p!r} changed without --fix"
        crlf, lf = _line_endings(before)
        if (crlf and not lf) and _line_endings(after)[1]:
            return f"{p!r}: a bare LF in a CRLF file after --fix"
        if (lf and not crlf) and _line_endings(after)[0] > before.count(b"\r\n"):
            return f"{p!r}: a CRLF in an LF file after --fix"
        if _bash_ok(before, base) and not _bash_ok(after, base):
            return f"{p!r}: parsed before --fix, not after"
    return None


def _clean(base: Path) -> None:
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            p = os.path.join(folder, name)
            if not os.path.islink(p):
                os.chmod(p, 0o755)
    shutil.rmtree(base, ignore_errors=True)


def campaign(examples: int, seed: int) -> int:
    """Run `examples` cases drawn from `seed`; the number run. Raises AssertionError (shrunk to
    a small case) on the first case that breaks an invariant."""
    count = [0]

    @hypothesis.seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cases())
    def one(case: Case) -> None:
        base = Path(tempfile.mkdtemp(prefix="megalint-fuzz-"))
        try:
            count[0] += 1
            problem = run_case(case, base)
        finally:
            _clean(base)
        assert problem is None, f"{problem}\ncase: {case!r}"

    one()
    return count[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    start = time.monotonic()
    runs = 0
    seed = args.seed
    while time.monotonic() - start < args.minutes * 60:
        runs += campaign(25, seed)
        seed += 1
        print(f"{runs} executions, {time.monotonic() - start:.0f} s, no failure", flush=True)


if __name__ == "__main__":
    main()
