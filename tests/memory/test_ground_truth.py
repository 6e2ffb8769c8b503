"""The estimator against measured ground truth (H200 runs and Megatron-LM CI goldens)."""

import json
from pathlib import Path

from megalint.memory import estimate

DATA = Path(__file__).resolve().parent.parent / "data"


def _rows(name):
    return [json.loads(line) for line in (DATA / name).open()]


def test_h200_fit_or_oom_and_peak_within_10_percent():
    rows = _rows("h200_memory.jsonl")
    assert len(rows) >= 30
    assert sum(1 for r in rows if r.get("oom")) >= len(rows) // 4
    for r in rows:
        assert "error" not in r or r.get("oom"), r["name"]
        e = estimate(r["args"], r["world_size"])
        usable = r["env"]["total_memory"]
        fits = e.device_bytes <= usable
        assert fits == (not r["oom"]), (r["name"], e.device_bytes / 2**30)
        if not r["oom"]:
            assert abs(e.peak_bytes / r["peak_bytes"] - 1) <= 0.10, r["name"]
            assert e.stages[0].params == r["params"], r["name"]


def test_golden_rows_accuracy_guard():
    import statistics

    rows = _rows("golden_memory_rows.jsonl")
    errs = sorted(
        abs(estimate(r["args"], r["world_size"]).stage("last").peak_bytes / r["measured_peak_bytes"] - 1) for r in rows
    )
    med = statistics.median(errs)
    p90 = errs[int(round(0.9 * (len(errs) - 1)))]
    # shipped calibration, all rows: median 3.0 %, p90 22.7 % (held-out k-fold: 4.0 %, 22.7 %,
    # bench/memory_accuracy.py); the target is median <= 10 %, p90 <= 25 %
    assert med <= 0.10
    assert p90 <= 0.25


def test_golden_rows_held_out_accuracy_target():
    """The target holds out of sample: the fitted constant is re-fitted on each of 5
    folds grouped by test case and judged on the held-out case's rows."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "memory_accuracy.py"
    spec = importlib.util.spec_from_file_location("memory_accuracy", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = bench.evaluate(bench.load_rows(), k=5)
    n, med, p90 = res["table"]["all"]["held_out"]
    assert n == 461
    assert med <= 0.10
    assert p90 <= 0.25
