"""Programs that read Megatron-like flags with a parser of their own (a checkpoint converter):
bound against that parser, read from the program's source with libcst, when it says all of it
(fixtures/tools/, programs and scripts of our own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from linting import lint

from megalint.launch.tools import TOOL

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "fixtures" / "tools"


def _lint(name: str, path: Path | None = None):  # type: ignore[no-untyped-def]
    path = path or TOOLS / name
    return lint(path.read_text(), path=str(path), root_dir=str(ROOT), memory=False)


def _found(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{d.code}:{d.span.start_line}:{d.span.start_col}" for d in result.diagnostics]


def test_a_converter_flag_is_checked_against_the_converters_parser() -> None:
    result = _lint("convert.sh")
    assert not result.launches
    assert [t.launch.launcher for t in result.tools] == [TOOL]
    assert [t.tool for t in result.tools] == ["convert_weights.py"]
    assert _found(result) == ["ML501:6:5", "ML504:8:21"]
    unknown, choice = result.diagnostics
    assert unknown.message.startswith("--target-pipline-parallel-size is not a convert_weights.py flag")
    # The converter's flags that Megatron does not define (`--load-dir`, `--model-type-hf`) are not reported.
    assert "--load-dir" not in " ".join(d.message for d in result.diagnostics)
    assert "'qwen2' is not a choice of --model-type-hf in convert_weights.py" in choice.message


def test_a_parser_that_keeps_unknown_flags_still_checks_values() -> None:
    result = _lint("keeps_unknown.sh")
    # --hidden-size is handed back to the program by parse_known_args: not reported.
    assert _found(result) == ["ML503:1:70"]


@pytest.mark.parametrize(
    "name",
    [
        "plugins.sh",  # a loader module may add flags to the parser
        "abbreviated.sh",  # `--load` abbreviates `--load-dir`: argparse accepts it
    ],
)
def test_a_parser_not_read_in_full_is_not_checked(name: str) -> None:
    result = _lint(name)
    assert _found(result) == []


def test_the_program_is_found_from_the_repository_top_and_its_words_are_not_a_fragment() -> None:
    result = _lint("in_folder.sh")
    assert not result.fragments
    assert [t.tool for t in result.tools] == ["convert_weights.py"]
    assert _found(result) == ["ML507:3:58"]


def test_a_program_that_is_not_at_hand_is_not_checked(tmp_path: Path) -> None:
    script = tmp_path / "convert.sh"
    script.write_text((TOOLS / "convert.sh").read_text())
    result = _lint("", script)
    assert result.tools == [] and _found(result) == []


def test_explain_names_the_program_and_runs_only_the_flag_checks() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "megalint", "explain", "--isolated", "--json", str(TOOLS / "convert.sh")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (report,) = json.loads(out)
    (program,) = report["launches"]
    assert program["launcher"] == TOOL and program["tool"] == "convert_weights.py"
    decided = {r["code"] for group in program["rules"].values() for r in group}
    assert {"ML501", "ML504", "ML507"} <= decided
    assert not decided & {"ML101", "ML616", "ML201"}  # nothing of Megatron's own checks
    text = subprocess.run(
        [sys.executable, "-m", "megalint", "explain", "--isolated", str(TOOLS / "convert.sh")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "1000"},  # a terminal wide enough for whole lines
        check=True,
    ).stdout
    assert "program 1 at line 2: python convert_weights.py, which reads its flags with a parser of its own" in text


def test_the_program_of_a_command_on_several_paths_is_looked_for_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Three paths launch the converter with a layer count each: its file is looked for once per
    # check (the script's folder, the repository up to its top), and each launch is checked.
    from megalint.megatron import tool_parser

    looked: list[str] = []
    find = tool_parser._entry_file

    def counted(script: str | None, entry: str, roots):  # type: ignore[no-untyped-def]
        looked.append(entry)
        return find(script, entry, roots)

    monkeypatch.setattr(tool_parser, "_entry_file", counted)
    result = _lint("paths.sh")
    assert [t.tool for t in result.tools] == ["keeps_unknown.py"] * 3
    assert _found(result) == ["ML503:4:91"]
    assert looked == ["keeps_unknown.py"]
