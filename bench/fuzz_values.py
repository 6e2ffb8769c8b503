"""Fuzzing of flag values: every int and float flag of a catalogue, given one hostile value
(0, -1, a huge int, nan, inf, 1e40, ...) or two at once, on top of a valid GPT launch, through
`lint_text` with the memory estimate on. A run must end in findings, never in an exception or
past its deadline.

    python bench/fuzz_values.py --minutes 10 [--version HEAD] [--seed 0]

It prints the executions run and each failure (flags, exception); each failure found becomes a
regression test (tests/sizes/). `tests/sizes/test_fuzz_values.py` runs a short seeded version.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from types import FrameType

from megalint.engine.loader import packaged_rules
from megalint.megatron.catalogue import Catalogue
from megalint.pipeline import Settings, lint_text

BASE = (
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 "
    "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 "
    "--micro-batch-size 1 --global-batch-size 64 --bf16"
)
HOSTILE = ("0", "-1", "-7", "2", "3", "1" + "0" * 40, "9223372036854775808", "1000000000", "nan", "inf", "-inf", "1e40")
DEADLINE_S = 20


class Deadline(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Deadline


def numeric_flags(version: str) -> list[tuple[str, str]]:
    """(option, type) of each int or float flag that takes one value."""
    out = []
    for spec in Catalogue.load(version).flags:
        if spec.type in ("int", "float") and spec.takes_value and spec.nargs is None:
            out.append((spec.name, spec.type))
    return sorted(out)


def cases(flags: list[tuple[str, str]], rng: random.Random) -> Iterator[str]:
    """Each flag with each value first, then random pairs for as long as the caller wants."""
    for option, _ in flags:
        for value in HOSTILE:
            yield f"{option} {value}"
    while True:
        (a, _), (b, _) = rng.sample(flags, 2)
        yield f"{a} {rng.choice(HOSTILE)} {b} {rng.choice(HOSTILE)}"


def run(seconds: float, version: str, seed: int, limit: int | None = None) -> tuple[int, list[tuple[str, str]]]:
    settings = Settings(rules=packaged_rules(), megatron_version=version, gpu="H100-80GB")
    flags = numeric_flags(version)
    rng = random.Random(seed)
    failures: list[tuple[str, str]] = []
    done = 0
    end = time.monotonic() + seconds
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for extra in cases(flags, rng):
            if time.monotonic() > end or (limit is not None and done >= limit):
                break
            signal.alarm(DEADLINE_S)
            try:
                lint_text("fuzz.sh", f"{BASE} {extra}\n", settings)
            except Deadline:
                failures.append((extra, f"past the {DEADLINE_S} s deadline"))
            except Exception as exc:  # noqa: BLE001 - every exception is a finding of the campaign
                where = traceback.extract_tb(exc.__traceback__)[-1]
                failures.append((extra, f"{type(exc).__name__}: {exc} at {where.filename}:{where.lineno}"))
            finally:
                signal.alarm(0)
            done += 1
    finally:
        signal.signal(signal.SIGALRM, previous)
    return done, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--version", default="HEAD")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    start = time.monotonic()
    done, failures = run(ns.minutes * 60, ns.version, ns.seed)
    print(f"{done} executions in {time.monotonic() - start:.0f} s, {len(failures)} failures")
    for extra, what in failures:
        print(f"  {extra}: {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
