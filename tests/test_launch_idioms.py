"""Every way a real script reaches its launch, in fixtures of our own (fixtures/launch-idioms/):
each must be found and bound, shown by a finding megalint already makes (TP 3 on a world of 8 or
of 1, ML101) at the exact place of the `3`; and the assumptions made to get there."""

from __future__ import annotations

from pathlib import Path

import pytest
from linting import lint

from megalint.shell.facts import ASSUME_BASH_SOURCE, ASSUME_DIRNAME, ASSUME_PWD, ASSUME_PWD_VAR, ASSUME_RELATIVE

ROOT = Path(__file__).resolve().parent.parent
IDIOMS = ROOT / "fixtures" / "launch-idioms"

# fixture, where the ML101 finding is (file:line:column), the launcher found
REACHED = [
    ("python_unknown_folder.sh", "python_unknown_folder.sh:3:71", "python"),
    ("torchrun_quoted_folder.sh", "torchrun_quoted_folder.sh:2:88", "torchrun"),
    ("module_unknown_folder.sh", "module_unknown_folder.sh:2:102", "torch.distributed.run"),
    ("deepspeed_unknown_folder.sh", "deepspeed_unknown_folder.sh:2:88", "deepspeed"),
    ("srun_python_unknown_folder.sbatch", "srun_python_unknown_folder.sbatch:4:65", "srun+python"),
    ("srun_sh_c_continued.sh", "srun_sh_c_continued.sh:4:34", "srun+torchrun"),
    ("eval_quoted.sh", "eval_quoted.sh:3:42", "torchrun"),
    ("bash_c_appends.sh", "bash_c_appends.sh:4:37", "torchrun"),
    ("command_in_function.sh", "command_in_function.sh:7:8", "torchrun"),
    # the finding is where the launcher reads `$TP`
    ("sourced/by_pwd.sh", "launch.sh:3:74", "torchrun"),
    ("sourced/by_pwd_var.sh", "launch.sh:3:74", "torchrun"),
    ("sourced/by_bash_source.sh", "launch.sh:3:74", "torchrun"),
    ("sourced/by_bash_source_0.sh", "launch.sh:3:74", "torchrun"),
    ("sourced/by_dirname.sh", "launch.sh:3:74", "torchrun"),
    ("sourced/by_cd_dirname.sh", "launch.sh:3:74", "torchrun"),
    ("per-model/by_model_name.sh", "by_model_name.sh:5:74", "torchrun"),
    ("per-model/by_relative_path.sh", "by_relative_path.sh:3:74", "torchrun"),
]


def _lint(name: str):  # type: ignore[no-untyped-def]
    path = IDIOMS / name
    return lint(path.read_text(), path=str(path), root_dir=str(IDIOMS), memory=False)


@pytest.mark.parametrize(("name", "where", "launcher"), REACHED)
def test_launch_is_reached_and_bound(name: str, where: str, launcher: str) -> None:
    result = _lint(name)
    assert [la.launch.launcher for la in result.launches] == [launcher]
    ml101 = [d for d in result.diagnostics if d.code == "ML101"]
    assert [f"{Path(d.span.path).name}:{d.span.start_line}:{d.span.start_col}" for d in ml101] == [where]
    # The finding is at the `3` itself (or `$TP`, `$1` in a launcher that reads it).
    line = Path(ml101[0].span.path).read_text().splitlines()[ml101[0].span.start_line - 1]
    assert line[ml101[0].span.start_col - 1 :].startswith(("3", "$TP", "$1"))


def test_unknown_folder_keeps_the_entry_name() -> None:
    (la,) = _lint("python_unknown_folder.sh").launches
    assert la.launch.entry_name == "…/Megatron-LM/pretrain_gpt.py"
    assert la.launch.world_size.value == 1


def test_a_bare_main_py_in_an_unknown_folder_is_not_megatron() -> None:
    assert lint("python $DIR/main.py --tensor-model-parallel-size 3\n", memory=False).launches == []


# fixture, the assumptions recorded (text, line:column)
ASSUMED = [
    ("sourced/by_pwd.sh", [(ASSUME_PWD, "3:3")]),
    ("sourced/by_pwd_var.sh", [(ASSUME_PWD_VAR, "3:8")]),
    ("sourced/by_bash_source.sh", [(ASSUME_BASH_SOURCE, "3:9")]),
    ("sourced/by_bash_source_0.sh", [(ASSUME_BASH_SOURCE, "3:8")]),
    ("sourced/by_dirname.sh", [(ASSUME_DIRNAME, "3:8")]),
    ("sourced/by_cd_dirname.sh", [(ASSUME_RELATIVE, "4:8")]),
    ("per-model/by_relative_path.sh", [(ASSUME_RELATIVE, "2:8")]),
    (
        "per-model/by_model_name.sh",
        [
            ("the default CONFIG_DIR=configs; the environment may set it", "4:8"),
            ("the default MODEL=llama; the environment may set it", "4:31"),
            (ASSUME_RELATIVE, "4:8"),
        ],
    ),
]


@pytest.mark.parametrize(("name", "assumed"), ASSUMED)
def test_assumptions_are_recorded_with_their_place(name: str, assumed: list[tuple[str, str]]) -> None:
    got = [(a.text, f"{a.span.start_line}:{a.span.start_col}") for a in _lint(name).facts.assumptions]
    assert got == assumed


def test_explain_prints_the_assumption(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    from megalint.cli import main

    main(["explain", "--isolated", str(IDIOMS / "sourced" / "by_pwd.sh")])
    out = capsys.readouterr().out
    assert "  assumed: `pwd` is the script's folder (the job is started from there) (" in out
    assert "by_pwd.sh:3:3)" in out


# A file of arguments without a launch (a fragment): the checks that need no launch, at the flag.
FRAGMENTS = [
    ("fragments/gpt_args_array.sh", "GPT_ARGS", [("ML501", "5:5")]),
    ("fragments/model_args_string.sh", "MODEL_ARGS", [("ML504", "2:25"), ("ML507", "2:43")]),
    ("fragments/heads_and_tp.sh", "PARALLEL_ARGS", [("ML616", "1:38")]),
]


@pytest.mark.parametrize(("name", "variable", "expected"), FRAGMENTS)
def test_fragment_is_checked_at_the_flag(name: str, variable: str, expected: list[tuple[str, str]]) -> None:
    result = _lint(name)
    assert result.launches == []
    assert [(f.launch.launcher, f.launch.variable) for f in result.fragments] == [("fragment", variable)]
    got = [(d.code, f"{d.span.start_line}:{d.span.start_col}") for d in result.diagnostics]
    assert got == expected


def test_fragment_leaves_what_needs_a_launch_undecided() -> None:
    result = _lint("fragments/heads_and_tp.sh")
    undecided = {u.rule.code for u in result.evaluation.undecided}
    # world size, required flags, memory: never errors on a fragment
    assert {"ML101", "ML615", "ML401"} <= undecided
    assert not result.evaluation.failures


def test_a_fragment_leaves_flags_of_other_releases_to_the_launch() -> None:
    result = _lint("fragments/other_release.sh")
    assert [f.launch.variable for f in result.fragments] == ["LOG_ARGS"]
    assert result.diagnostics == []


@pytest.mark.parametrize("name", ["fragments/echo_only.sh", "fragments/one_flag.sh"])
def test_a_mention_of_flags_is_not_a_fragment(name: str) -> None:
    result = _lint(name)
    assert result.fragments == []
    assert result.diagnostics == []


def test_a_file_with_a_launch_checks_the_launch_only() -> None:
    result = _lint("fragments/with_launch.sh")
    assert result.fragments == []
    assert [la.launch.launcher for la in result.launches] == ["torchrun"]
    got = [
        (d.code, f"{d.span.start_line}:{d.span.start_col}") for d in result.diagnostics if d.code in ("ML501", "ML101")
    ]
    assert got == [("ML501", "1:46"), ("ML101", "2:84")]


def test_explain_says_what_a_fragment_left_undecided(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    from megalint.cli import main

    main(["explain", "--isolated", str(IDIOMS / "fragments" / "heads_and_tp.sh")])
    out = capsys.readouterr().out
    assert (
        "fragment 1 at line 1: the arguments in PARALLEL_ARGS, with no launch: the checks that need one could not decide"
        in out
    )
    assert "    ML616 heads-divisible-by-tensor-parallel\n      1:38: " in out
    assert (
        "    ML101 world-size-divisibility\n      needs launch.world_size: the file sets arguments without launching "
        "them (a fragment): there is no launch" in out
    )


def test_a_fragment_reports_only_misspellings_as_unknown_flags() -> None:
    # --prompts and --port may be flags of whatever script runs the fragment
    result = _lint("fragments/own_flags.sh")
    assert [f.launch.variable for f in result.fragments] == ["EVAL_ARGS"]
    assert result.diagnostics == []


def test_a_fragment_built_of_fragments_is_checked_where_each_is_written() -> None:
    result = _lint("fragments/combined.sh")
    assert [f.launch.variable for f in result.fragments] == ["MODEL_ARGS", "TRAIN_ARGS"]
    assert [(d.code, f"{d.span.start_line}:{d.span.start_col}") for d in result.diagnostics] == [("ML507", "2:37")]


@pytest.mark.parametrize(("name", "where"), [("pwd_entry.sh", "5:81"), ("pwd_entry_in_string.sh", "4:90")])
def test_an_entry_found_through_the_working_directory_is_bound_as_unknown(name: str, where: str) -> None:
    # Found (ML101 at the 3), but its own --my-own-flag is not reported as unknown to Megatron-LM.
    result = _lint(name)
    (la,) = result.launches
    assert la.launch.entry_path is None
    assert la.launch.notes == [
        "the entry point's folder comes from `pwd`, read as the script's folder (the job is started from "
        "there): its arguments are bound as those of a script megalint cannot name"
    ]
    assert "ML501" not in {d.code for d in result.diagnostics}
    ml101 = [f"{d.span.start_line}:{d.span.start_col}" for d in result.diagnostics if d.code == "ML101"]
    assert ml101 == [where]


def test_a_folder_assumption_never_leads_outside_the_linted_tree() -> None:
    path = IDIOMS / "sourced" / "by_pwd_outside.sh"
    result = lint(path.read_text(), path=str(path), root_dir=str(IDIOMS / "sourced"), memory=False)
    assert [u.reason.value for u in result.facts.unread_sources] == ["outside-root"]
    assert "ML101" not in {d.code for d in result.diagnostics}


def test_model_prints_the_assumption(capsys: pytest.CaptureFixture[str]) -> None:
    from megalint.cli import main

    main(["model", str(IDIOMS / "sourced" / "by_dirname.sh")])
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        'assumed: `$(dirname "$0")` is the script\'s folder  @ ' + f"{IDIOMS}/sourced/by_dirname.sh:3:8"
    )


def test_explain_says_what_a_fragment_leaves_to_its_launch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # a terminal wide enough for whole lines
    from megalint.cli import main

    path = IDIOMS / "fragments" / "other_release.sh"
    main(["explain", "--isolated", str(path)])
    out = capsys.readouterr().out
    assert (
        f"  left to the launch: --log-batch-size-to-tensorboard at {path}:2:46: a flag of another Megatron-LM "
        "release: right or wrong for the release the launch runs\n" in out
    )
    # The rule that would report it is undecided on the fragment, not passed.
    undecided = out.split("  could not decide")[1].split("  passed")[0]
    assert "    ML502 flag-in-other-version\n      needs the launch: --log-batch-size-to-tensorboard" in undecided
    assert "ML502 flag-in-other-version" not in out.split("  passed")[1]
