"""`megalint catalogue`: output file, messages and exit codes."""

from __future__ import annotations

import json

from synthetic_tree import expected_flags, write_tree, write_wheel

from megalint.cli import main


def catalogue_main(argv: list[str]) -> int:
    return main(["catalogue", *argv])


def test_writes_catalogue_json(tmp_path, capsys):
    root = write_tree(tmp_path / "mlm")
    out = tmp_path / "cat.json"
    assert catalogue_main(["--from", str(root), "-o", str(out), "--version-label", "0.99"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert list(data) == ["version", "generated_from", "flags"]
    assert data["version"] == "0.99"
    assert data["flags"] == expected_flags()
    err = capsys.readouterr().err
    assert f"{len(expected_flags())} flags of 0.99 written to {out}" in err


def test_stdout_when_no_output_file(tmp_path, capsys):
    wheel = write_wheel(tmp_path / "megatron_core-1.2.3-py3-none-any.whl")
    assert catalogue_main(["--from", str(wheel)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == "1.2.3"
    assert len(data["flags"]) == len(expected_flags())


def test_path_that_is_not_megatron_exits_2_with_message(tmp_path, capsys):
    assert catalogue_main(["--from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("megalint catalogue: error: ")
    assert "no megatron/training/arguments.py" in err
    assert "Traceback" not in err


def test_missing_path_exits_2(tmp_path, capsys):
    assert catalogue_main(["--from", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_missing_from_exits_2(capsys):
    assert catalogue_main([]) == 2
    err = capsys.readouterr().err
    assert "--from" in err and "Traceback" not in err


def test_unwritable_output_exits_2(tmp_path, capsys):
    root = write_tree(tmp_path / "mlm")
    assert catalogue_main(["--from", str(root), "-o", str(tmp_path / "no" / "such" / "dir" / "x.json")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_warnings_go_to_stderr_unless_quiet(tmp_path, capsys):
    files = {
        "megatron/__init__.py": "",
        "megatron/training/__init__.py": "",
        "megatron/training/arguments.py": "def parse_args():\n    parser.add_argument(NAME)\n",
    }
    root = write_tree(tmp_path, files)
    assert catalogue_main(["--from", str(root)]) == 0
    assert "warning: parse_args: option name not literal" in capsys.readouterr().err
    assert catalogue_main(["--from", str(root), "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_help_exits_0(capsys):
    assert catalogue_main(["--help"]) == 0
    assert "megalint catalogue" in capsys.readouterr().out
