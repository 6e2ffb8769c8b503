"""Build tests/data/golden_memory_rows.jsonl from the Megatron-LM CI memory extraction.

Input: megatron-memory/golden.jsonl and baseline_predictions.jsonl (extracted from
NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553, tests/functional_tests/
test_cases/*/golden_values_*.json + model_config.yaml + tests/test_utils/recipes) and
the flag catalogue megatron-flags-by-version.tsv. Output: one row per usable
pretrain_gpt.py golden file with the argument values as argparse dest names, the world
size, the measured last-stage max_memory_allocated and Megatron's own prediction.

Usage: python bench/memory_golden.py SHARED_DIR  (the folder holding megatron-memory/ and research/)
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "golden_memory_rows.jsonl"


def flag_table(tsv: Path) -> dict[str, tuple[str, str]]:
    rows = {}
    with tsv.open() as f:
        lines = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(lines, delimiter="\t"):
        rows[r["flag"]] = (r["dest"], r["action"])
    return rows


def to_dest(model_args: dict, flags: dict[str, tuple[str, str]]) -> dict:
    out = {}
    for flag, value in model_args.items():
        dest, action = flags.get(flag, (flag.lstrip("-").replace("-", "_"), "store"))
        if action == "store_true":
            out[dest] = bool(value)
        elif action == "store_false":
            out[dest] = not bool(value)
        else:
            out[dest] = value
    return out


def main(shared: Path) -> None:
    flags = flag_table(shared / "research" / "megatron-flags-by-version.tsv")
    base = {}
    for line in (shared / "megatron-memory" / "baseline_predictions.jsonl").open():
        b = json.loads(line)
        base[(b["case_path"], b["golden_file"])] = b
    n = 0
    with OUT.open("w") as out:
        for line in (shared / "megatron-memory" / "golden.jsonl").open():
            g = json.loads(line)
            b = base.get((g["case_path"], g["golden_file"]))
            if not g["usable_as_ground_truth"] or b is None or b["status"] != "ok":
                continue
            args = to_dest(g["model_args"], flags)
            args["padded_vocab_size"] = b["features"]["padded_vocab_size"]
            f = b["features"]
            row = {
                "case_path": g["case_path"],
                "golden_file": g["golden_file"],
                "platform": g["platform"],
                "world_size": g["world_size"],
                "args": args,
                "measured_peak_bytes": g["mem_max_allocated_bytes_max"],
                "measured_allocated_bytes": g["mem_allocated_bytes_max"],
                "megatron_pred_bytes": b["pred_total_bytes"],
                "features": {
                    k: f[k]
                    for k in (
                        "tp",
                        "pp",
                        "vpp",
                        "cp",
                        "ep",
                        "dp",
                        "moe",
                        "recompute",
                        "fp8",
                        "sequence_parallel",
                        "distributed_optimizer",
                        "fsdp",
                        "mtp",
                        "mla",
                        "cuda_graph",
                        "offload",
                        "transformer_impl",
                        "num_microbatches",
                    )
                },
                "gqa": bool(args.get("group_query_attention")),
            }
            out.write(json.dumps(row, sort_keys=True) + "\n")
            n += 1
    print(f"wrote {n} rows to {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared"))
