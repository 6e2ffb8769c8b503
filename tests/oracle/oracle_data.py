"""Loading and reading the recorded Megatron oracle verdicts (tests/data/oracle)."""

from __future__ import annotations

import functools
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "oracle")
SCENARIOS = os.path.join(DATA, "scenarios")

# One recorded file per Megatron version; the label is what run_oracle.py wrote as "version".
VERSION_FILES = {
    "HEAD": "HEAD.jsonl",
    "0.19.0": "core_v0.19.0.jsonl",
    "0.15.0": "core_v0.15.0.jsonl",
    "0.12.0": "core_v0.12.0.jsonl",
    "0.8.0": "core_v0.8.0.jsonl",
}

STAGES = ("parse_args", "validate_args", "microbatches", "parallel_state", "transformer_config")
OUTCOMES = ("ok", "error", "exit0")
# The research notes ran these stages, in this order; parallel_state was not run there.
DOC_STAGE_ORDER = ("parse_args", "validate_args", "transformer_config", "microbatches")


@functools.cache
def _read_rows(version: str) -> tuple:
    path = os.path.join(DATA, VERSION_FILES[version])
    with open(path, encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def load_rows(version: str) -> list[dict]:
    """Rows of one version's file (cached; callers must not mutate them)."""
    return list(_read_rows(version))


def load_scenarios(name: str) -> dict:
    with open(os.path.join(SCENARIOS, name), encoding="utf-8") as fh:
        return json.load(fh)


def failures(row: dict) -> list[dict]:
    """Every failing stage of a row: the primary verdict first, then later stages."""
    out = []
    if row["outcome"] != "ok":
        out.append({k: row[k] for k in ("outcome", "stage", "exception", "message", "check_location")})
    for f in row.get("later_failures", []):
        out.append(f)
    return out


def doc_view(row: dict) -> dict | None:
    """The failure the research notes' pipeline (argparse, v, c, mb; no parallel_state)
    would have reported first, or None when it would have passed."""
    fails = [f for f in failures(row) if f["stage"] in DOC_STAGE_ORDER]
    if not fails:
        return None
    return min(fails, key=lambda f: DOC_STAGE_ORDER.index(f["stage"]))


def compare(expect: dict, row: dict) -> list[str]:
    """Differences between a recorded expectation (appendix_a.json `doc`) and a row."""
    problems = []
    seen = doc_view(row)
    if expect["outcome"] == "ok":
        if seen is not None:
            problems.append(f"expected ok, got {seen['outcome']} at {seen['stage']}: {seen['message']!r}")
        changed = row.get("changed", {})
        for key in ("sequence_parallel", "num_layers", "cuda_graph_impl"):
            if key in expect:
                got = changed.get(key, [None, None])[1]
                if got != expect[key]:
                    problems.append(f"expected {key} -> {expect[key]!r}, got {got!r}")
        if "warns" in expect and not any(expect["warns"] in w for w in row.get("warnings", [])):
            problems.append(f"expected a warning containing {expect['warns']!r}")
        if "later" in expect and not any(f["stage"] == expect["later"] for f in failures(row)):
            problems.append(f"expected a failure at {expect['later']}")
        return problems
    if seen is None:
        return [f"expected {expect['outcome']} at {expect['stage']}, got ok"]
    if seen["outcome"] != expect["outcome"]:
        problems.append(f"expected outcome {expect['outcome']}, got {seen['outcome']}")
    if seen["stage"] != expect["stage"]:
        problems.append(f"expected stage {expect['stage']}, got {seen['stage']}")
    if "exception" in expect and seen["exception"] != expect["exception"]:
        problems.append(f"expected {expect['exception']}, got {seen['exception']}")
    if "contains" in expect:
        want = expect["contains"]
        msg = seen["message"] or ""
        if (want == "" and msg != "") or (want and want not in msg):
            problems.append(f"expected message containing {want!r}, got {msg!r}")
    return problems
