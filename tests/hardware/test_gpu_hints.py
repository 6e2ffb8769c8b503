"""GPU hints weighed by where they are written (fixtures/gpu-hints/): the hint that won, at the
line:column of the GPU's name, the hints it outweighed, and what became of `--gpu`."""

from __future__ import annotations

import json
import os

import pytest

from megalint.cli import main
from megalint.hardware.detect import GpuChoice, choose_gpu
from megalint.shell.analyze import analyze_text
from tests.conftest import FIXTURES
from tests.linting import lint

HINTS = os.path.join(FIXTURES, "gpu-hints")


def read(name: str) -> str:
    with open(os.path.join(HINTS, name), encoding="utf-8") as fh:
        return fh.read()


def choice(name: str, gpu: str | None = None) -> GpuChoice:
    return choose_gpu(analyze_text(name, read(name)), gpu)


def won(c: GpuChoice) -> tuple[str, str, tuple[int, int] | None]:
    assert c.profile is not None and c.detection is not None
    span = c.detection.span
    return c.profile.id, c.detection.hint.kind, (span.start_line, span.start_col) if span is not None else None


def lost(c: GpuChoice) -> set[tuple[str, int | None, str]]:
    assert c.detection is not None
    return {(h.kind, h.span.start_line if h.span else None, pid) for h, pid in c.detection.ignored}


@pytest.mark.parametrize(
    ("name", "winner", "losers"),
    [
        # `#SBATCH --gres=gpu:h100:8`: the scheduler line outweighs the header comment's A100.
        ("scheduler_beats_header.sh", ("h100", "sbatch-gres", (4, 20)), {("header-comment", 2, "a100")}),
        # `srun --gres=gpu:a100:8` on the command line is a scheduler request too.
        ("srun_gres.sh", ("a100", "command-gres", (3, 27)), {("header-comment", 2, "h100")}),
        # The header comment outweighs "we used to run this on A100" further down.
        ("header_beats_passing_mention.sh", ("h100", "header-comment", (2, 33)), {("comment", 4, "a100")}),
        # So does the file name.
        ("train_h100_fp8.sh", ("h100", "path", None), {("comment", 3, "v100")}),
        # A passing mention alone still names the GPU.
        ("passing_mention_only.sh", ("a100", "comment", (3, 7)), set()),
    ],
)
def test_the_heaviest_hint_wins(name, winner, losers):
    c = choice(name)
    assert won(c) == winner
    assert lost(c) == losers
    assert c.unknown is None and not c.conflict


@pytest.mark.parametrize(
    ("name", "conflict"),
    [
        # The file name and the header comment weigh the same.
        ("pretrain_a100.sh", {("path", None, "a100"), ("header-comment", 2, "h100")}),
        # Two passing mentions of two clusters, and nothing heavier.
        ("passing_mentions_disagree.sh", {("comment", 3, "v100"), ("comment", 5, "a100")}),
    ],
)
def test_only_hints_of_the_same_heaviest_weight_leave_the_gpu_unknown(name, conflict):
    c = choice(name)
    assert c.profile is None and c.unknown is not None and "of the same weight disagree" in c.unknown
    assert {(h.kind, h.span.start_line if h.span else None, pid) for h, pid in c.conflict} == conflict


def test_the_script_wins_over_the_option_and_a_note_says_so():
    c = choice("scheduler_beats_header.sh", "v100")
    assert won(c) == ("h100", "sbatch-gres", (4, 20))
    assert c.option_note == (
        "the GPU `v100` given to megalint was not used: the script names NVIDIA H100, "
        "taken from `#SBATCH --gres=gpu:h100:8` (4:20)"
    )


@pytest.mark.parametrize("name", ["passing_mention_only.sh", "passing_mentions_disagree.sh", "pretrain_a100.sh"])
def test_the_option_fills_in_where_the_script_names_no_gpu_for_sure(name):
    # A passing mention, or hints that disagree, do not outweigh the GPU the user gives.
    c = choice(name, "h100")
    assert c.source == "option" and c.profile is not None and c.profile.id == "h100" and c.option_note is None


def ml201(name: str, gpu: str | None = None) -> list[tuple[int, int, list[tuple[int, int]]]]:
    result = lint(read(name), gpu=gpu, path=name, memory=False)
    return [
        (d.span.start_line, d.span.start_col, [(lb.span.start_line, lb.span.start_col) for lb in d.labels])
        for d in result.diagnostics
        if d.code == "ML201"
    ]


def test_fp8_is_checked_on_the_gpu_that_won():
    # fp8 on the A100 the srun line asks for: reported at the format, the GPU labelled at `a100`.
    assert ml201("srun_gres.sh") == [(3, 106, [(3, 27)])]
    assert ml201("srun_gres.sh", "h100") == [(3, 106, [(3, 27)])]  # the option does not hide it
    # fp8 on the H100 the scheduler line, the header or the file name names: nothing to say,
    # whatever a lighter hint or the option says.
    for name in ("scheduler_beats_header.sh", "header_beats_passing_mention.sh", "train_h100_fp8.sh"):
        assert ml201(name) == [] and ml201(name, "v100") == []
    # Hints that disagree: undecided, until the option fills the GPU in.
    assert ml201("pretrain_a100.sh") == []
    assert ml201("pretrain_a100.sh", "a100") == [(3, 73, [])]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_explain_says_which_hint_won_and_why_and_which_lost(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    path = os.path.join(HINTS, "scheduler_beats_header.sh")
    rc, out, _ = run(capsys, "explain", "--isolated", "--gpu", "v100", path)
    assert rc == 0
    assert (
        "  GPU: NVIDIA H100, named by the #SBATCH line at 4:20 (`gpu:h100:8`): a scheduler request outweighs "
        "the file name and comments: the job gets the GPU it asks for\n"
        "    outweighed: the header comment at 2:1 (`# Llama 8B, tuned on A100 nodes`) names a100\n"
        "    note: the GPU `v100` given to megalint was not used" in out
    )
    rc, out, _ = run(capsys, "explain", "--isolated", "--json", path)
    gpu = json.loads(out)[0]["gpu"]
    assert gpu["source"] == "script" and gpu["hint"]["at"] == f"{path}:4:20" and gpu["hint"]["kind"] == "sbatch-gres"
    assert [(h["kind"], h["gpu"]) for h in gpu["outweighed"]] == [("header-comment", "a100")]


def test_explain_lists_the_hints_that_disagree(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    rc, out, _ = run(capsys, "explain", "--isolated", os.path.join(HINTS, "pretrain_a100.sh"))
    assert "    disagrees: the file name `pretrain_a100.sh` names a100\n" in out
    assert "    disagrees: the header comment at 2:1 (`# fp8 recipe for H100 nodes`) names h100\n" in out


def test_check_notes_an_unused_option_on_standard_error(capsys):
    path = os.path.join(HINTS, "train_h100_fp8.sh")
    rc, out, err = run(capsys, "--isolated", "--output-format", "json", "--gpu", "v100", path)
    assert rc == 0 and all(d["code"] != "ML201" for d in json.loads(out))
    assert err == (
        f"megalint: {path}: the GPU `v100` given to megalint was not used: the script names NVIDIA H100, "
        "taken from the file name `train_h100_fp8.sh`\n"
    )
    _, _, err = run(capsys, "--isolated", "--output-format", "json", "--gpu", "h100", path)
    assert err == ""


def test_model_carries_the_gpu_and_its_hint(capsys):
    path = os.path.join(HINTS, "header_beats_passing_mention.sh")
    rc, out, _ = run(capsys, "model", "--json", path)
    gpu = json.loads(out)["gpu"]
    assert rc == 0 and gpu["id"] == "h100" and gpu["hint"]["at"] == f"{path}:2:33"
    assert [(h["kind"], h["at"]) for h in gpu["outweighed"]] == [("comment", f"{path}:4:1")]
    rc, out, _ = run(capsys, "model", path)
    assert "  GPU: NVIDIA H100, named by the header comment at 2:33" in out
    assert (
        "    outweighed: a comment at 4:1 (`# we used to run this on A100 nodes, with a smaller batch`) names a100"
        in out
    )
