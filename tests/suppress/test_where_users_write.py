"""Suppressions apply where users write them: on a line a finding labels, above the command a
finding is about, at the end of an `#SBATCH` line; and `--fix` never deletes a suppression whose
rule still fires elsewhere in the file. The README's example is run exactly as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "megalint", "--isolated", "--no-cache", "--output-format", "concise", *extra, str(path)],
        capture_output=True,
        text=True,
    )


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index("Suppressing a finding in a script") :]
    return re.search(r"```bash\n(.*?)```", after, re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_example_suppresses_both_findings(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text(readme_example(), encoding="utf-8")
    done = _run(script)
    assert (done.returncode, done.stdout) == (0, "All checks passed.\n")
    # Without its comments the same script has both findings: the test can fail.
    bare = tmp_path / "bare.sh"
    bare.write_text(re.sub(r"(?m)^# megalint:.*\n|  # megalint:.*$", "", readme_example()), encoding="utf-8")
    codes = re.findall(r": (ML\d+) ", _run(bare).stdout)
    assert codes == ["ML301", "ML101"]


LAUNCH = "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 24\n"


def test_a_comment_on_the_line_a_finding_labels_suppresses_it(tmp_path: Path) -> None:
    script = tmp_path / "t.sh"
    script.write_text("TP=3  # megalint: ignore[ML101]\nexport NCCL_IB_TIMEOUT=22\n" + LAUNCH, encoding="utf-8")
    assert re.findall(r": (ML\d+) ", _run(script).stdout) == []
    script.write_text("TP=3\nexport NCCL_IB_TIMEOUT=22\n" + LAUNCH, encoding="utf-8")
    assert re.findall(r"(\d+:\d+): (ML\d+) ", _run(script).stdout) == [("3:85", "ML101")]


def test_a_comment_above_the_command_covers_a_finding_pointing_elsewhere(tmp_path: Path) -> None:
    body = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n{}srun python pretrain_gpt.py --num-layers 2\n"
    script = tmp_path / "t.sbatch"
    script.write_text(body.format(""), encoding="utf-8")
    assert re.findall(r"(\d+:\d+): (ML\d+) ", _run(script).stdout) == [("2:17", "ML301")]
    script.write_text(body.format("# megalint: ignore[ML301] -- the image sets it\n"), encoding="utf-8")
    assert _run(script).stdout == "All checks passed.\n"


def test_a_directive_at_the_end_of_an_sbatch_line_is_read(tmp_path: Path) -> None:
    script = tmp_path / "t.sbatch"
    script.write_text(
        "#!/bin/bash\n#SBATCH --nodes=2  # megalint: ignore[ML301] -- the image sets it\n#SBATCH --ntasks-per-node=8\n"
        "srun python pretrain_gpt.py --num-layers 2\n",
        encoding="utf-8",
    )
    assert _run(script).stdout == "All checks passed.\n"


def test_fix_keeps_a_suppression_whose_rule_still_fires_elsewhere(tmp_path: Path) -> None:
    # The comment is on a line the finding neither points at nor labels: unused, but written for it.
    text = "#!/bin/bash\n#SBATCH --nodes=2  # megalint: ignore[ML301]\n" + (
        "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node 8 pretrain_gpt.py --num-layers 2\n"
    )
    script = tmp_path / "t.sh"
    script.write_text(text, encoding="utf-8")
    out = _run(script).stdout
    assert "2:39: ML001 unused suppression of `ML301`" in out and "[*]" not in out.split("ML301 this job")[0]
    _run(script, "--fix")
    assert script.read_text(encoding="utf-8") == text
    # A suppression of a rule that fires nowhere is still removed by --fix.
    other = tmp_path / "u.sh"
    other.write_text("TP=1  # megalint: ignore[ML101]\ntorchrun pretrain_gpt.py --num-layers 2\n", encoding="utf-8")
    _run(other, "--fix")
    assert other.read_text(encoding="utf-8") == "TP=1\ntorchrun pretrain_gpt.py --num-layers 2\n"
