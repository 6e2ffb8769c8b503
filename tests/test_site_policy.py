"""A site's own rules, written in YAML only: loaded through its configuration or --rule-dir,
firing where the policy is broken, their examples run like the shipped ones, and a broken rule
file stopping the run with `file:line:col: message` and exit code 2."""

from __future__ import annotations

import io
import os
import re
import shutil
from contextlib import redirect_stderr, redirect_stdout

import pytest

from megalint.cli import main
from megalint.engine import check_example, example_id, iter_examples, load_rules
from megalint.fix import apply_edits
from megalint.pipeline import Settings, lint_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "fixtures", "site-policy")
SITE_RULES = os.path.join(SITE, "rules")
BROKEN = os.path.join(SITE, "broken")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def site001_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if " SITE001 " in line]


def test_the_configuration_loads_the_site_rules(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli("--output-format", "concise", "--no-memory", "fixtures/site-policy/multi_node.slurm")
    assert err == ""
    assert site001_lines(out) == [
        "fixtures/site-policy/multi_node.slurm:6:43: SITE001 [*] this job runs on 4 nodes without "
        "NCCL_SOCKET_IFNAME: on our clusters NCCL must bootstrap over ib0, not the management network"
    ]
    assert code == 1  # a warning fails the run by default


def test_the_site_rule_is_silent_on_a_single_node(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("--output-format", "concise", "--no-memory", "fixtures/site-policy/single_node.sh")
    assert site001_lines(out) == [] and code == 0


def test_without_the_configuration_there_is_no_site_rule(monkeypatch):
    monkeypatch.chdir(ROOT)
    _, out, _ = run_cli(
        "--isolated", "--output-format", "concise", "--no-memory", "fixtures/site-policy/multi_node.slurm"
    )
    assert site001_lines(out) == []


def test_rule_dir_on_the_command_line(monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli(
        "--isolated",
        "--rule-dir",
        "fixtures/site-policy/rules",
        "--output-format",
        "concise",
        "--no-memory",
        "fixtures/site-policy/multi_node.slurm",
        "fixtures/site-policy/single_node.sh",
    )
    assert [line.split(": SITE001")[0] for line in site001_lines(out)] == ["fixtures/site-policy/multi_node.slurm:6:43"]
    assert code == 1


def test_site_rules_can_be_selected_and_fixed(tmp_path, monkeypatch):
    shutil.copy(os.path.join(SITE, "multi_node.slurm"), tmp_path / "job.slurm")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("--isolated", "--rule-dir", SITE_RULES, "--select", "SITE", "--fix", "job.slurm")
    assert code == 0 and "fixed 1" in err.lower()
    text = (tmp_path / "job.slurm").read_text()
    assert "export NCCL_IB_TIMEOUT=22\nexport NCCL_SOCKET_IFNAME=ib0\nsrun torchrun" in text


SITE_SET = load_rules([SITE_RULES])
SITE_EXAMPLES = [(r, e) for r, e in iter_examples(SITE_SET) if r.code.startswith("SITE")]


def test_the_site_folder_holds_its_rule():
    assert [r.code for r in SITE_SET if r.code.startswith("SITE")] == ["SITE001"]
    assert len(SITE_EXAMPLES) == 3


@pytest.mark.parametrize("rule,ex", SITE_EXAMPLES, ids=[example_id(r, e) for r, e in SITE_EXAMPLES])
def test_site_examples(rule, ex):
    result = lint_text("example.sh", ex.script, Settings(rules=SITE_SET, megatron_version=ex.megatron, gpu=ex.gpu))
    assert not result.evaluation.failures
    assert check_example(ex, rule, result.diagnostics) == []
    if ex.bad and ex.fixed is not None:
        mine = [d for d in result.diagnostics if d.code == rule.code]
        assert mine and mine[0].fix is not None
        assert apply_edits(ex.script, mine[0].fix.edits) == ex.fixed


BROKEN_CASES = [
    ("bad-yaml", 8, 1, "invalid YAML"),
    ("schema", 3, 11, "'severity' must be one of error, warning, info, not 'fatal'"),
    ("cel", 5, 45, "when: invalid CEL"),
]


@pytest.mark.parametrize("folder,line,col,words", BROKEN_CASES, ids=[b[0] for b in BROKEN_CASES])
def test_a_broken_rule_file_stops_the_run(folder, line, col, words, monkeypatch):
    monkeypatch.chdir(ROOT)
    rule_dir = os.path.join("fixtures", "site-policy", "broken", folder)
    code, out, err = run_cli("--isolated", "--rule-dir", rule_dir, "fixtures/site-policy/single_node.sh")
    assert code == 2
    assert out == ""
    first = err.splitlines()[0]
    m = re.match(r"^(.+?):(\d+):(\d+): (.+)$", first)
    assert m, first
    assert os.path.normpath(m.group(1)) == os.path.join(rule_dir, "rule.yaml")
    assert (int(m.group(2)), int(m.group(3))) == (line, col)
    assert words in m.group(4)
    assert "Traceback" not in err


def test_a_broken_rule_file_in_the_configuration_stops_the_run(tmp_path, monkeypatch):
    (tmp_path / "rules").mkdir()
    shutil.copy(os.path.join(BROKEN, "schema", "rule.yaml"), tmp_path / "rules" / "policy.yaml")
    (tmp_path / "megalint.toml").write_text('rule-dirs = ["rules"]\n')
    shutil.copy(os.path.join(SITE, "single_node.sh"), tmp_path / "job.sh")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("job.sh")
    assert code == 2
    assert re.match(r"^.*policy\.yaml:3:11: 'severity' must be one of", err)
