"""`megalint explain` says a rule fired exactly when the check reports it: on a fork's launch the
fork's own rule set decides, in both (explain once listed Megatron-LM rules the fork's launch is
not checked by as fired)."""

from __future__ import annotations

from pathlib import Path

import pytest
from linting import lint, packaged_rules

from megalint.reports.verdicts import explain_result

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p
    for folder in ("forks", "examples", "launchers")
    for p in (ROOT / "fixtures" / folder).rglob("*")
    if p.suffix in (".sh", ".sbatch", ".slurm")
)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_explain_fires_what_the_check_reports(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    result = lint(text, path=str(path), root_dir=str(path.parent), memory=False)
    report = explain_result(result, packaged_rules(), text)
    groups = [launch["rules"] for launch in report["launches"]] + [report["script"]]
    fired = {entry["code"] for g in groups for entry in g["fired"]}
    reported = {d.code for d in result.diagnostics}
    assert fired == reported


def test_a_fork_launch_is_explained_by_the_fork_s_rules() -> None:
    path = ROOT / "fixtures" / "forks" / "deepspeed" / "examples_deepspeed" / "run.sh"
    text = path.read_text(encoding="utf-8")
    result = lint(text, path=str(path), root_dir=str(path.parents[1]), memory=False)
    (launch,) = result.launches
    assert launch.rules_fork is not None
