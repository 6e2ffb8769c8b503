"""The "N fixable with --fix" line counts what --fix applies to the file as it is now, and --diff shows
exactly the edits --fix makes: each case runs the report, --diff and --fix on one script."""

from __future__ import annotations

import re

import pytest

from megalint.fix import unified_diff

H100 = "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\n"
LAUNCH = (
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
    "--tensor-model-parallel-size 2\n"
)
A100_FP8 = (
    "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
    "--bf16 --fp8-format hybrid\n"
)
CASES = {
    # Two launches, each with its own safe fix (ML745).
    "two-fixes": H100 + LAUNCH + LAUNCH,
    # One of them suppressed: its fix is neither counted nor applied.
    "suppressed": H100 + "# megalint: ignore[ML745]\n" + LAUNCH + LAUNCH,
    # An unsafe fix only (ML201): counted and applied with --unsafe-fixes only.
    "unsafe": A100_FP8,
    # A script that does not parse: --fix applies nothing, so nothing is counted.
    "does-not-parse": "CKPT=<Specify path>\n" + H100.split("\n", 1)[1] + LAUNCH.rstrip("\n") + " --save $CKPT \\\n",
    # Two launches after one export: their fixes insert the same line at the same place, so --fix
    # makes one, and the other launch is then fixed too: one fix applied, not two.
    "overlapping": H100 + "export OMP_NUM_THREADS=1\n" + LAUNCH + LAUNCH,
    # Two rules' exports at the same place: the second waits for the next pass, which applies it.
    "overlapping-both-applied": H100
    + "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
    + LAUNCH.rstrip("\n")
    + " --cuda-graph-impl transformer_engine\n",
    # A blank after a continuation backslash (ML012) and a launch to fix on the same lines.
    "same-lines": H100 + LAUNCH.rstrip("\n") + " \\  \n    --seq-length 128\n",
}


def fixable_in_report(out: str) -> int:
    m = re.search(r"^\[\*\] (\d+) fixable with --fix", out, re.M)
    return int(m.group(1)) if m else 0


def count_in_note(err: str, verb: str) -> int:
    m = re.search(rf"{verb} (\d+) finding", err)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe-fixes"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_fixable_count_diff_and_fix_agree(megalint, scripts, name, unsafe):
    text = CASES[name]
    p = scripts("job.sh", text)
    extra = ("--unsafe-fixes",) if unsafe else ()
    report = megalint("--isolated", "--no-cache", *extra, str(p))
    counted = fixable_in_report(report.out)
    marked = sum(1 for line in report.out.splitlines() if line.startswith("fix [*]"))

    diff = megalint("--isolated", "--no-cache", "--diff", *extra, str(p))
    would = count_in_note(diff.err, "would fix")
    assert p.read_text() == text  # --diff writes nothing

    fix = megalint("--isolated", "--no-cache", "--fix", *extra, str(p))
    fixed = count_in_note(fix.err, "fixed")
    after = p.read_text()

    assert counted == marked == would == fixed, (report.out, diff.err, fix.err)
    assert diff.out == unified_diff(text, after, str(p))  # --diff shows the very edits --fix made
    assert (diff.rc == 1) == (after != text)


def test_cases_cover_fixes_applied_and_refused(megalint, scripts):
    # The cases are not vacuous: some fixes are applied, and the refused ones are still shown.
    p = scripts("job.sh", CASES["two-fixes"])
    assert fixable_in_report(megalint("--isolated", "--no-cache", str(p)).out) == 2
    assert fixable_in_report(megalint("--isolated", "--no-cache", str(scripts("x.sh", CASES["overlapping"]))).out) == 1
    p = scripts("y.sh", CASES["overlapping-both-applied"])
    assert fixable_in_report(megalint("--isolated", "--no-cache", str(p)).out) == 2
    p = scripts("bad.sh", CASES["does-not-parse"])
    out = megalint("--isolated", "--no-cache", str(p)).out
    assert "(not applied automatically)" in out and "fixable" not in out
