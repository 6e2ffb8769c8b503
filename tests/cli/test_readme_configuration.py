"""The README's configuration example, run exactly as printed: every key it shows is accepted and
acts (a typo in the example would be a newcomer's first error)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "fixtures" / "examples"


def readme_configuration() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index("## Configuration") :]
    return re.search(r"```toml\n(.*?)```", after, re.S).group(1)  # type: ignore[union-attr]


def _run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "megalint", "--no-cache", "--output-format", "concise", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_readme_configuration_is_accepted_and_applied(tmp_path: Path) -> None:
    (tmp_path / "megalint.toml").write_text(readme_configuration(), encoding="utf-8")
    (tmp_path / "ci" / "megalint-rules").mkdir(parents=True)
    (tmp_path / "legacy").mkdir()
    (tmp_path / "examples").mkdir()
    bad = (EXAMPLES / "gpt_13b_multinode.sbatch").read_text(encoding="utf-8")
    (tmp_path / "train.sbatch").write_text(bad, encoding="utf-8")
    (tmp_path / "legacy" / "old.sbatch").write_text(bad, encoding="utf-8")  # excluded
    ran = _run(tmp_path, ".")
    assert ran.returncode in (0, 1), ran.stderr
    assert "megalint:" not in ran.stderr, ran.stderr
    assert "legacy/old.sbatch" not in ran.stdout
    codes = set(re.findall(r": (ML\d+) ", ran.stdout))
    # `select = ["ML1", "fp8-requires-hopper"]`: of the example's four findings, ML101 is selected.
    assert codes == {"ML101"}, ran.stdout
    everything = _run(tmp_path, "--isolated", "train.sbatch")
    assert {"ML101", "ML607", "ML011"} <= set(re.findall(r": (ML\d+) ", everything.stdout))


def test_the_readme_configuration_with_a_typo_is_an_error_at_its_place(tmp_path: Path) -> None:
    text = readme_configuration().replace("failure-threshold", "failure-treshold")
    (tmp_path / "megalint.toml").write_text(text, encoding="utf-8")
    (tmp_path / "ci" / "megalint-rules").mkdir(parents=True)
    (tmp_path / "train.sh").write_text("#!/bin/bash\necho hi\n", encoding="utf-8")
    ran = _run(tmp_path, "train.sh")
    assert ran.returncode == 2
    line = 1 + text[: text.index("failure-treshold")].count("\n")
    assert f"megalint.toml:{line}:1:" in ran.stderr, ran.stderr
