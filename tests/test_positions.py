"""Positions where the user wrote the text (fixtures/positions/): a flag built into a command
string over several lines and run by `eval`, `sh -c`, `bash -c` or an unquoted `$CMD` is reported
at its own characters, and a rule about several quantities points at the one that breaks the check
and labels the others, in the JSON output and the human frame alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from linting import lint

from megalint.cli import main
from megalint.diagnostics import Diagnostic
from megalint.source import Span

POSITIONS = Path(__file__).resolve().parent.parent / "fixtures" / "positions"
RUNNERS = ["eval_unquoted.sh", "eval_quoted.sh", "sh_c.sh", "bash_c.sh", "split.sh"]


def _at(span: Span) -> str:
    return f"{span.start_line}:{span.start_col}-{span.end_line}:{span.end_col}"


def _found(name: str, code: str) -> Diagnostic:
    path = POSITIONS / name
    result = lint(path.read_text(), path=str(path), memory=False)
    (d,) = [d for d in result.diagnostics if d.code == code]
    return d


def _shown(d: Diagnostic) -> list[tuple[str, str]]:
    return [(_at(d.span), ""), *((_at(lab.span), lab.text) for lab in d.labels)]


@pytest.mark.parametrize("name", RUNNERS)
def test_a_command_string_is_reported_where_each_flag_was_typed(name: str) -> None:
    # `--tensor-model-parallel-size 3` is written on line 2 and run from line 4: the 3 itself.
    assert _shown(_found(name, "ML101")) == [("2:40-2:41", ""), ("1:32-1:33", "8 processes per node")]
    # Heads vs TP points at the heads and labels TP.
    assert _shown(_found(name, "ML616")) == [("2:64-2:66", ""), ("2:40-2:41", "TP = 3")]


def test_world_size_points_at_the_factor_that_breaks_it_and_labels_the_counts() -> None:
    # 2 nodes × 8 = 16: TP = 4 divides it, TP×PP = 12 does not, so PP is the place.
    assert _shown(_found("nodes_pp.sh", "ML101")) == [
        ("3:69-3:70", ""),
        ("2:38-2:39", "8 processes per node"),
        ("2:19-2:20", "2 nodes"),
        ("3:34-3:37", "TP = 4"),
        ("1:4-1:5", "TP = 4 set here"),
    ]


def test_world_size_under_slurm_labels_the_node_count_and_points_at_cp() -> None:
    # 3 nodes × 4 = 12; TP×PP = 2 divides it, TP×PP×CP = 8 does not.
    assert _shown(_found("sbatch_nodes.sbatch", "ML101")) == [
        ("4:62-4:63", ""),
        ("6:55-6:56", "4 processes per node"),
        ("6:24-6:37", "3 nodes"),
        ("4:36-4:37", "TP = 2"),
    ]


def test_the_expert_grid_is_reported_at_the_expert_parallel_size() -> None:
    d = _found("expert_grid.sh", "ML101")
    assert "expert grid" in d.message
    assert _shown(d) == [("1:51-1:52", ""), ("2:27-2:28", "8 processes per node"), ("2:74-2:75", "TP = 2")]


def test_the_expert_count_is_reported_at_num_experts() -> None:
    assert _shown(_found("expert_count.sh", "ML605")) == [("2:92-2:93", ""), ("2:74-2:77", "EP = 4")]


def test_json_and_the_human_frame_show_the_place_and_the_labels(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(POSITIONS / "eval_quoted.sh")
    main(["--no-memory", "--select", "ML616", "--output-format", "json", path])
    (d,) = json.loads(capsys.readouterr().out)
    assert (d["location"], d["end_location"]) == ({"row": 2, "column": 64}, {"row": 2, "column": 66})
    assert [(lab["message"], lab["location"], lab["end_location"]) for lab in d["labels"]] == [
        ("TP = 3", {"row": 2, "column": 40}, {"row": 2, "column": 41})
    ]
    main(["--no-memory", "--select", "ML616", "--color", "never", path])
    frame = capsys.readouterr().out.splitlines()
    at = frame.index('2 | CMD="$CMD --tensor-model-parallel-size 3 --num-attention-heads 16"')
    assert frame[at + 1] == "  |" + " " * 64 + "^^"
    assert frame[at + 2] == "  |" + " " * 40 + "- TP = 3"
