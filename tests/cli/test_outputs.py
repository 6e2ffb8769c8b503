"""Several outputs in one run, the GitHub step summary, colour, and the golden `full` output."""

from __future__ import annotations

import json
import os

import pytest

from .conftest import ERROR, REPO

GOLDEN = REPO / "tests" / "cli" / "golden"
ESC = "\x1b["


def test_golden_full_output_of_multi(megalint, monkeypatch):
    """fixtures/cli/multi.sh: world size, fp8 on an A100, a lost backslash, an unfilled placeholder."""
    monkeypatch.setenv("COLUMNS", "100")
    r = megalint("--isolated", "--color", "never", "fixtures/cli/multi.sh", cwd=REPO)
    golden = GOLDEN / "multi_full.txt"
    if os.environ.get("MEGALINT_REGEN_GOLDEN"):
        golden.write_text(r.out, encoding="utf-8")
    assert r.out == golden.read_text(encoding="utf-8")
    assert r.rc == 1
    for code in ("ML101", "ML201", "ML011", "ML014"):
        assert f" {code} " in r.out


def test_width_follows_columns(megalint, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    narrow = megalint("--isolated", "--color", "never", "fixtures/cli/multi.sh", cwd=REPO).out
    assert narrow != (GOLDEN / "multi_full.txt").read_text(encoding="utf-8")


def test_several_outputs_in_one_run(megalint, scripts, tmp_path):
    scripts("job.sh", ERROR)
    r = megalint(
        "--isolated",
        "--output-format",
        "github",
        "--output-format",
        "sarif:out/megalint.sarif",
        "--output-format",
        "json:report.json",
        "job.sh",
        cwd=tmp_path,
    )
    assert r.out.startswith("::error file=job.sh,line=1,col=89,")
    data = json.loads((tmp_path / "report.json").read_text())
    assert [d["code"] for d in data] == ["ML101"]
    assert json.loads((tmp_path / "out" / "megalint.sarif").read_text())["version"] == "2.1.0"
    assert r.rc == 1


def test_sarif_to_a_file(megalint, scripts, tmp_path):
    scripts("job.sh", ERROR)
    r = megalint(
        "--isolated", "--output-format", "concise", "--output-format", "sarif:megalint.sarif", "job.sh", cwd=tmp_path
    )
    sarif = json.loads((tmp_path / "megalint.sarif").read_text())
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "ML101"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "job.sh"
    assert "ML101" in r.out


def test_unwritable_output_file_is_a_usage_error(megalint, scripts, tmp_path):
    scripts("job.sh", ERROR)
    r = megalint("--isolated", "--output-format", "sarif:job.sh/x.sarif", "job.sh", cwd=tmp_path)
    assert r.rc == 2 and r.err.startswith("megalint: --output-format sarif:job.sh/x.sarif: cannot write:")


@pytest.mark.parametrize(
    "formats, message",
    [
        (
            ("json", "sarif"),
            "megalint: formats json, sarif all write to standard output; give all but one a path "
            "(e.g. --output-format sarif:megalint.sarif)",
        ),
        (
            ("xml",),
            "megalint: unknown output format 'xml' (known: concise, full, github, gitlab, grouped, json, "
            "json-lines, junit, sarif)",
        ),
    ],
)
def test_bad_output_formats(megalint, scripts, formats, message):
    p = scripts("job.sh", ERROR)
    args = [a for f in formats for a in ("--output-format", f)]
    r = megalint("--isolated", *args, str(p))
    assert (r.rc, r.err) == (2, message + "\n")


def many_errors():
    return "torchrun pretrain_gpt.py --num-layers 2\n" + "".join(f"    --hidden-size {i}\n" for i in range(1, 12))


def test_github_step_summary_when_annotations_overflow(megalint, scripts, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    scripts("job.sh", many_errors())
    r = megalint("--isolated", "--output-format", "github", "job.sh", cwd=tmp_path)
    assert r.out.count("::error ") == 10
    assert "1 more finding not annotated" in r.out
    text = summary.read_text()
    assert text.startswith("earlier step\n## megalint: 11 findings")  # appended, not overwritten


def test_no_step_summary_without_overflow(megalint, scripts, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    scripts("job.sh", ERROR)
    megalint("--isolated", "--output-format", "github", "job.sh", cwd=tmp_path)
    assert not summary.exists()


def test_paths_relative_to_github_workspace(megalint, scripts, tmp_path, monkeypatch):
    p = scripts("ci/job.sh", ERROR)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    r = megalint("--isolated", "--output-format", "github", str(p))
    assert r.out.startswith("::error file=ci/job.sh,")


@pytest.mark.parametrize(
    "env, option, coloured",
    [
        ({}, "auto", False),  # not a terminal
        ({}, "always", True),
        ({"FORCE_COLOR": "1"}, "auto", True),
        ({"FORCE_COLOR": "1"}, "never", False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, "auto", False),
        ({"NO_COLOR": "1"}, "always", True),  # the explicit option wins
        ({"NO_COLOR": ""}, "always", True),
    ],
)
def test_colour(megalint, scripts, monkeypatch, env, option, coloured):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    p = scripts("job.sh", ERROR)
    r = megalint("--isolated", "--color", option, str(p))
    assert (ESC in r.out) is coloured


def test_colour_only_for_human_formats(megalint, scripts, tmp_path):
    scripts("job.sh", ERROR)
    r = megalint(
        "--isolated",
        "--color",
        "always",
        "--output-format",
        "json",
        "--output-format",
        "concise:c.txt",
        "job.sh",
        cwd=tmp_path,
    )
    assert ESC not in r.out
    assert ESC not in (tmp_path / "c.txt").read_text()  # a file is never coloured
