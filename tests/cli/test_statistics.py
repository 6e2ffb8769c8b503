"""`--statistics`, as Ruff has it: a count per rule, the most frequent first, `[*]` on a rule with
a finding --fix fixes, the run's exit status; a JSON list with `--output-format json`."""

from __future__ import annotations

import json

# ML101 twice (two launches), ML745 (safe fix) twice, ML301 (info) once.
SCRIPT = (
    "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:h100:8\n"
    "srun torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
    "--num-attention-heads 4 --tensor-model-parallel-size 3\n"
    "srun torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
    "--num-attention-heads 4 --tensor-model-parallel-size 3\n"
)


def test_statistics_counts_per_rule(megalint, scripts):
    p = scripts("job.sh", SCRIPT)
    report = megalint("--isolated", "--output-format", "json", str(p))
    findings = json.loads(report.out)
    r = megalint("--isolated", "--statistics", str(p))
    assert r.rc == report.rc == 1
    lines = r.out.splitlines()
    rows = [line.split("\t") for line in lines if "\t" in line]
    counts = {}
    for f in findings:
        counts[f["code"]] = counts.get(f["code"], 0) + 1
    assert {code: int(n) for n, code, _ in rows} == counts
    assert [int(n) for n, _, _ in rows] == sorted((int(n) for n, _, _ in rows), reverse=True)
    for _count, code, mark in rows:
        fixable = any(f["code"] == code and f["fix"] and f["fix"]["applicability"] == "safe" for f in findings)
        name = next(f["name"] for f in findings if f["code"] == code)
        assert mark == ("[*] " if fixable else "[ ] ") + name
    assert lines[len(rows)].startswith("Found ")
    assert "-->" not in r.out and "|" not in r.out  # no finding is printed


def test_statistics_json_like_ruff(megalint, scripts):
    p = scripts("job.sh", SCRIPT)
    findings = json.loads(megalint("--isolated", "--output-format", "json", str(p)).out)
    r = megalint("--isolated", "--statistics", "--output-format", "json", str(p))
    data = json.loads(r.out)
    assert r.rc == 1
    assert all(set(e) == {"code", "name", "count", "fixable", "fixable_count"} for e in data)
    assert sum(e["count"] for e in data) == len(findings)
    assert [e["count"] for e in data] == sorted((e["count"] for e in data), reverse=True)
    ml101 = next(e for e in data if e["code"] == "ML101")
    assert ml101 == {
        "code": "ML101",
        "name": "world-size-divisibility",
        "count": 2,
        "fixable": False,
        "fixable_count": 0,
    }


def test_statistics_exit_status_is_the_runs(megalint, scripts):
    p = scripts("job.sh", SCRIPT)
    assert megalint("--isolated", "--statistics", "--exit-zero", str(p)).rc == 0
    clean = scripts("ok.sh", "#!/bin/bash\necho hi\n")
    r = megalint("--isolated", "--statistics", str(clean))
    assert (r.rc, r.out) == (0, "All checks passed.\n")
    r = megalint("--isolated", "--statistics", "--output-format", "json", str(clean))
    assert (r.rc, json.loads(r.out)) == (0, [])
