"""Exit status: 0 clean, 1 findings at or above the threshold, 2 usage/config/input, 3 internal."""

from __future__ import annotations

import os

import pytest

from megalint.cli.check import build_parser

from .conftest import CLEAN, ERROR, INFO, WARN


def test_help_documents_every_exit_status(megalint):
    text = build_parser().format_help()
    for line in (
        "0  no finding at or above the failure threshold",
        "1  findings at or above the failure threshold (default: warning",
        "2  usage, configuration, rule-file or input error",
        "3  internal error: a bug in megalint",
    ):
        assert line in text
    r = megalint("--help")
    assert r.rc == 0 and "exit status:" in r.out


@pytest.mark.parametrize("text, rc", [(CLEAN, 0), (INFO, 0), (WARN, 1), (ERROR, 1)])
def test_default_threshold_is_warning(megalint, scripts, text, rc):
    p = scripts("job.sh", text)
    assert megalint("--isolated", str(p)).rc == rc


@pytest.mark.parametrize(
    "threshold, text, rc",
    [
        ("info", INFO, 1),
        ("error", WARN, 0),
        ("error", ERROR, 1),
        ("none", ERROR, 0),
        ("warning", INFO, 0),
    ],
)
def test_failure_threshold(megalint, scripts, threshold, text, rc):
    p = scripts("job.sh", text)
    assert megalint("--isolated", "--failure-threshold", threshold, str(p)).rc == rc


def test_failure_threshold_from_config(megalint, scripts):
    p = scripts("job.sh", INFO)
    scripts("megalint.toml", 'failure-threshold = "info"\n')
    assert megalint(str(p)).rc == 1
    assert megalint("--failure-threshold", "error", str(p)).rc == 0  # the command line wins


def test_exit_zero(megalint, scripts):
    p = scripts("job.sh", ERROR)
    r = megalint("--isolated", "--exit-zero", "--output-format", "concise", str(p))
    assert r.rc == 0 and "ML101" in r.out


def test_unknown_option_is_usage_error(megalint):
    r = megalint("--no-such-option")
    assert r.rc == 2 and "unrecognized arguments" in r.err


def test_missing_path_is_an_input_error_and_others_are_still_linted(megalint, scripts, tmp_path):
    p = scripts("job.sh", ERROR)
    r = megalint("--isolated", "--output-format", "concise", str(tmp_path / "nope"), str(p))
    assert r.rc == 2
    assert r.err.strip() == f"megalint: {tmp_path / 'nope'}: no such file or folder"
    assert r.codes == ["ML101"]


def test_missing_folder(megalint, tmp_path):
    r = megalint("--isolated", str(tmp_path / "no-such-dir") + "/")
    assert r.rc == 2 and "no such file or folder" in r.err


def test_binary_file(megalint, scripts):
    bad = scripts("bin.sh", b"\x7fELF\x00\x01\x02")
    good = scripts("job.sh", ERROR)
    r = megalint("--isolated", "--output-format", "concise", str(bad), str(good))
    assert r.rc == 2
    assert r.err.strip() == f"megalint: {bad}: binary file (contains NUL bytes), not a shell script"
    assert r.codes == ["ML101"]


def test_non_utf8_file(megalint, scripts):
    bad = scripts("latin1.sh", "# caf\u00e9\ntorchrun x.py\n".encode("latin-1"))
    good = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--output-format", "concise", str(bad), str(good))
    assert r.rc == 2
    assert r.err.strip() == f"megalint: {bad}:1: not valid UTF-8 (byte 0xe9); save the script as UTF-8"
    assert "All checks passed." in r.out


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a user that file modes bind")
def test_unreadable_file(megalint, scripts):
    bad = scripts("secret.sh", CLEAN)
    bad.chmod(0)
    try:
        r = megalint("--isolated", str(bad))
    finally:
        bad.chmod(0o644)
    assert r.rc == 2 and r.err.strip() == f"megalint: {bad}: cannot read: Permission denied"


def test_unreadable_file_any_user(megalint, scripts, monkeypatch):
    # Root reads anything; make the read fail the way a permission error does.
    import megalint.checking.run as run

    bad = scripts("secret.sh", CLEAN)
    good = scripts("job.sh", ERROR)
    real = run.read_script

    def read(path, shown):
        if path == str(bad):
            raise PermissionError(13, "Permission denied")
        return real(path, shown)

    monkeypatch.setattr(run, "read_script", read)
    r = megalint("--isolated", "--output-format", "concise", str(bad), str(good))
    assert r.rc == 2 and r.err.strip() == f"megalint: {bad}: cannot read: Permission denied"
    assert r.codes == ["ML101"]


def test_internal_error_in_one_file(megalint, scripts, monkeypatch):
    import megalint.checking.one_file as one_file

    def boom(path, text, settings):
        raise RuntimeError("the evaluator fell over\nsecond line")

    monkeypatch.setattr(one_file, "lint_text", boom)
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", str(p))
    assert r.rc == 3
    lines = r.err.splitlines()
    assert lines == [
        f"megalint: internal error while checking {p}: RuntimeError: the evaluator fell over "
        "second line. Please report it."
    ]
    assert "Traceback" not in r.err + r.out


def test_internal_error_outside_files(megalint, monkeypatch):
    import megalint.output as output

    def boom(*a, **k):
        raise KeyError("x")

    monkeypatch.setattr(output, "parse_output_formats", boom)
    r = megalint("--isolated", "x.sh")
    assert r.rc == 3
    assert r.err == "megalint: internal error: KeyError: 'x'. Please report it.\n"


def test_bad_gpu_and_version_are_usage_errors(megalint, scripts):
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--gpu", "z9000", str(p))
    assert r.rc == 2 and r.err == "megalint: --gpu: unknown GPU `z9000` (e.g. h100, a100-80gb, v100)\n"
    r = megalint("--isolated", "--megatron-version", "banana", str(p))
    assert r.rc == 2 and "`banana` is not a Megatron-LM version" in r.err


def test_bad_assume(megalint, scripts):
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--assume", "NNODES", str(p))
    assert r.rc == 2 and r.err == "megalint: --assume takes NAME=VALUE, got `NNODES`\n"


def test_rule_file_error_is_exit_2(megalint, scripts, tmp_path):
    scripts("rules/bad.yaml", "code: ML9999\nname: Bad Name\n")
    p = scripts("job.sh", CLEAN)
    r = megalint("--isolated", "--rule-dir", str(tmp_path / "rules"), str(p))
    assert r.rc == 2 and "bad.yaml" in r.err and "Traceback" not in r.err
