"""A file over megalint's budget is one `file-too-large` finding (ML019, an error: exit status 1),
quickly and within bounded memory, and the run goes on with its other files. 50 MB of
assignments took 89 s and 5.5 GB; 3,200 launches in one file 190 s and 3 GB."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from linting import lint

from bench.sizes import assignments
from megalint import pipeline
from megalint.shell.budget import MAX_FILE_SIZE, MAX_LAUNCHES, utf8_size
from tests.hostile.limited import megalint as run_cli

# ML101 (error): 8 processes, TP 3; checked in the same run as the large file.
OTHER = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"
LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --seed {i} --tensor-model-parallel-size {tp}\n"


def _findings(out: str) -> list[str]:
    """`path:line:col: CODE` of each finding in `concise` output."""
    return sorted(" ".join(line.split()[:2]) for line in out.splitlines() if ": ML" in line)


def test_50_mb_of_script_is_one_finding_at_line_1_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "big.sh").write_text(assignments(50_000_000))
    (tmp_path / "other.sh").write_text(OTHER)
    start = time.monotonic()
    ran = run_cli("--output-format", "concise", "--jobs", "1", "big.sh", "other.sh", cwd=tmp_path, timeout=60)
    assert time.monotonic() - start < 30
    assert ran.rc == 1, ran.err
    assert _findings(ran.out) == ["big.sh:1:1: ML019", "other.sh:1:89: ML101"]
    assert "megalint checks scripts of at most 4,194,304 bytes" in ran.out
    assert not ran.err


def test_the_limit_is_the_configuration_s_max_file_size(tmp_path: Path) -> None:
    (tmp_path / "megalint.toml").write_text("max-file-size = 200\n")
    (tmp_path / "small.sh").write_text("#!/bin/bash\n" + OTHER)
    large = assignments(300)
    (tmp_path / "large.sh").write_text(large)
    ran = run_cli("--output-format", "concise", ".", cwd=tmp_path)
    assert _findings(ran.out) == ["large.sh:1:1: ML019", "small.sh:2:89: ML101"]
    assert f"({len(large)} bytes; megalint checks scripts of at most 200 bytes" in ran.out


def test_max_file_size_must_be_a_positive_integer(tmp_path: Path) -> None:
    (tmp_path / "megalint.toml").write_text("max-file-size = 0\n")
    (tmp_path / "a.sh").write_text(OTHER)
    ran = run_cli("a.sh", cwd=tmp_path)
    assert ran.rc == 2 and "`max-file-size` must be at least 1, not 0" in ran.err


def test_the_size_is_counted_in_utf8_bytes() -> None:
    assert utf8_size("abc") == 3 and utf8_size("é") == 2
    text = "# " + "é" * (MAX_FILE_SIZE // 2) + "\n" + OTHER
    assert len(text) < MAX_FILE_SIZE < utf8_size(text)
    assert [d.code for d in lint(text).diagnostics] == ["ML019"]


def test_past_the_launch_limit_the_first_launches_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "MAX_LAUNCHES", 3)
    text = "".join(LAUNCH.format(i=i, tp=3 if i in (1, 4) else 2) for i in range(5))
    result = lint(text)
    assert len(result.launches) == 3
    found = [(d.code, d.span.start_line, d.span.start_col) for d in result.diagnostics if d.code in ("ML101", "ML019")]
    assert found == [("ML101", 2, 98), ("ML019", 4, 1)]
    [budget] = [d for d in result.diagnostics if d.code == "ML019"]
    assert budget.message == (
        "the file has too many launches to check (5; megalint checks the first 3 of a file): "
        "this one and those after it were not checked"
    )


def test_3000_launches_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "many.sh").write_text("".join(LAUNCH.format(i=i, tp=2) for i in range(3000)))
    ran = run_cli("--output-format", "concise", "--jobs", "1", "many.sh", cwd=tmp_path, timeout=90)
    assert ran.rc == 1, ran.err
    assert _findings(ran.out) == [f"many.sh:{MAX_LAUNCHES + 1}:1: ML019"]


def test_explain_says_the_shell_rules_of_a_file_over_the_limit_could_not_look(tmp_path: Path) -> None:
    (tmp_path / "megalint.toml").write_text("max-file-size = 200\n")
    (tmp_path / "big.sh").write_text(assignments(1_000))
    ran = run_cli("explain", "--json", "--no-memory", "big.sh", cwd=tmp_path)
    assert ran.rc == 0, ran.err
    script = json.loads(ran.out)[0]["script"]
    assert [e["code"] for e in script["fired"]] == ["ML019"]
    assert script["passed"] == []
    undecided = {e["code"]: e["missing"] for e in script["undecided"]}
    assert "ML010" in undecided and "too large to check" in undecided["ML010"][0]["reason"]


def test_model_refuses_a_file_over_the_limit_quickly(tmp_path: Path) -> None:
    (tmp_path / "big.sh").write_text(assignments(MAX_FILE_SIZE + 1))
    ran = run_cli("model", "big.sh", cwd=tmp_path)
    assert ran.rc == 2
    assert "big.sh: the file is too large to model" in ran.err and not ran.out


def test_a_flag_given_ten_thousand_times_fails_no_rule_and_names_a_few_places() -> None:
    # A condition's budget counts the lists it reads: 10,000 `--data-path` values made ML762
    # (a condition on `env`) fail as too costly, and ML507 named every earlier place.
    text = (
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
        + "".join(f"    --data-path /data/{i} \\\n" for i in range(10_000))
        + "    --num-layers 2 --deterministic-mode\n"
    )
    result = lint(text, "0.19", memory=False)
    assert not result.evaluation.failures
    (repeated,) = [d for d in result.diagnostics if d.code == "ML507"]
    assert (
        "is given 10000 times (earlier at 3:5, 4:5, 5:5, 6:5, 7:5, 8:5, 9:5, 10:5 and 9,991 more)" in repeated.message
    )
    assert len(repeated.message) < 300
