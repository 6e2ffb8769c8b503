"""Messages that name the cause (fixtures/messages/): a word cut from an array element by an
unquoted `${A[@]}` names that expansion; a flag repeated by one variable expanded twice labels
both expansions; a flag repeated with the same value (a switch given twice) is info; a branch
condition keeps the tests that decide the finding; an invalid choice names the releases that
accept it."""

from __future__ import annotations

from pathlib import Path

import pytest
from linting import lint

from megalint.cli import main
from megalint.diagnostics import Diagnostic, Severity
from megalint.source import Span

MESSAGES = Path(__file__).resolve().parent.parent / "fixtures" / "messages"


def _at(span: Span) -> str:
    return f"{span.start_line}:{span.start_col}-{span.end_line}:{span.end_col}"


# The rules these fixtures are about; the scripts leave out flags other rules require.
CODES = ("ML504", "ML507", "ML509")


def _findings(name: str) -> list[Diagnostic]:
    path = MESSAGES / name
    return [d for d in lint(path.read_text(), path=str(path), memory=False).diagnostics if d.code in CODES]


def _shown(d: Diagnostic) -> list[tuple[str, str]]:
    return [(_at(d.span), ""), *((_at(lab.span), lab.text) for lab in d.labels)]


SPLIT = '; `${TOKENIZER[@]}` is unquoted, so bash splits the element "GPT2 BPETokenizer" into 2 words'
UNQUOTED = ("4:60-4:75", "unquoted: bash splits each element of the array at its blanks")


def test_a_word_cut_from_an_array_element_names_the_unquoted_expansion() -> None:
    choice, stray = _findings("split_array.sh")
    assert (choice.code, stray.code) == ("ML504", "ML509")
    assert _shown(choice) == [("3:30-3:34", ""), UNQUOTED]
    assert choice.message == (
        "'GPT2' is not a choice of --tokenizer-type in Megatron-LM HEAD: argparse stops the job before it starts"
        + SPLIT
    )
    assert _shown(stray) == [("3:35-3:47", ""), UNQUOTED]
    assert stray.message == (
        "unrecognized arguments: BPETokenizer: Megatron takes no positional arguments, so argparse stops the job"
        + SPLIT
    )
    for d in (choice, stray):
        assert d.help == 'quote the expansion (`"${TOKENIZER[@]}"`) so that each element stays one word'


def test_a_quoted_array_expansion_keeps_each_element_one_word() -> None:
    assert _findings("split_array_quoted.sh") == []


QUOTES = (
    "; `$TOK` is unquoted and the quotes in its value are not read again by bash: it splits the value at blanks "
    "and keeps the quotes as characters (ShellCheck SC2089/SC2090)"
)


def test_a_word_cut_from_a_quoted_phrase_in_a_scalar_names_the_quotes() -> None:
    choice, stray = _findings("split_quoted_scalar.sh")
    unquoted = ("4:60-4:64", "unquoted: bash splits the value at blanks; the quotes in it stay characters")
    assert _shown(choice) == [("3:23-3:28", ""), unquoted]
    assert choice.message == (
        "''GPT2' is not a choice of --tokenizer-type in Megatron-LM HEAD: argparse stops the job before it starts"
        + QUOTES
    )
    assert _shown(stray) == [("3:29-3:42", ""), unquoted]
    assert stray.message == (
        "unrecognized arguments: BPETokenizer': Megatron takes no positional arguments, so argparse stops the job"
        + QUOTES
    )
    for d in (choice, stray):
        assert (
            d.help == 'use an array, where quotes are read as written: `TOK=(... "a b" ...)`, expanded as `"${TOK[@]}"`'
        )


def test_a_scalar_without_quotes_split_at_blanks_is_not_about_quotes() -> None:
    (choice,) = _findings("split_plain_scalar.sh")
    assert "quotes" not in choice.message and choice.labels == ()
    assert choice.help is not None and choice.help.startswith("choose from ")


def test_a_flag_repeated_by_a_variable_expanded_twice_labels_both_expansions() -> None:
    # The flag is reported where its text was typed, as through `eval` (test_positions.py);
    # the two expansions on the launch line are labelled.
    (d,) = _findings("expanded_twice.sh")
    assert d.code == "ML507"
    assert _shown(d) == [
        ("3:7-3:19", ""),
        ("4:62-4:67", "first expanded here"),
        ("4:68-4:73", "expanded again here"),
    ]
    assert d.message == (
        "--num-layers is given 2 times (`$ARGS` is expanded twice on the launch line, at 4:62 and 4:68); "
        "each sets the same value, so the copy changes nothing"
    )
    assert d.help == "expand `$ARGS` once"


def test_a_repeated_switch_is_info_and_a_changed_value_a_warning() -> None:
    shown = [(d.code, _at(d.span), d.severity, d.message) for d in _findings("repeated.sh")]
    same = "each sets the same value, so the copy changes nothing"
    assert shown == [
        ("ML507", "2:67-2:73", Severity.INFO, f"--bf16 is given 2 times (earlier at 2:60); {same}"),
        ("ML507", "3:15-3:19", Severity.WARNING, "--lr is given 2 times (earlier at 3:5); argparse keeps the last one"),
        ("ML507", "3:43-3:55", Severity.INFO, f"--seq-length is given 2 times (earlier at 3:25); {same}"),
    ]


def _condition(name: str) -> str | None:
    (d,) = [d for d in _findings(name) if d.code == "ML507"]
    return d.condition


def test_a_condition_keeps_only_the_tests_that_decide_the_finding() -> None:
    # The repeated --lr holds on every outcome of the `$CLUSTER` tests: only the model size decides it.
    assert _condition("conditions.sh") == '`[ "$MODEL_SIZE" = 7B ]` true'


def test_a_finding_on_every_outcome_of_a_test_holds_unconditionally() -> None:
    assert _condition("every_branch.sh") is None


def test_a_long_condition_shows_its_innermost_tests_and_counts_the_others() -> None:
    assert _condition("nested_conditions.sh") == '`[ "$C" = 1 ]` true and `[ "$D" = 1 ]` true (and 2 other conditions)'


def test_explain_still_prints_the_whole_condition_of_the_launch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per condition, not wrapped at 80
    assert main(["explain", str(MESSAGES / "nested_conditions.sh")]) in (0, 1)
    whole = " and ".join(f'`[ "${v}" = 1 ]` true' for v in "ABCD")
    assert f"only when {whole}" in capsys.readouterr().out


def test_an_invalid_choice_says_which_releases_accept_it() -> None:
    path = MESSAGES / "choice_versions.sh"
    found = lint(path.read_text(), "0.15", path=str(path), memory=False).diagnostics
    shown = [(_at(d.span), d.message) for d in found if d.code == "ML504"]
    stops = "argparse stops the job before it starts"
    assert shown == [
        (
            "3:17-3:21",
            f"'muon' is not a choice of --optimizer in Megatron-LM 0.15 (accepted from Megatron-LM 0.16): {stops}",
        ),
        (
            "3:50-3:62",
            "'alltoall_seq' is not a choice of --moe-token-dispatcher-type in Megatron-LM 0.15 "
            f"(accepted up to Megatron-LM 0.12, rejected from 0.13): {stops}",
        ),
    ]


def test_a_flag_is_never_added_inside_a_quoted_array_element() -> None:
    # `--split` appended after `corpus` would land inside the quotes and join the data path.
    path = MESSAGES / "quoted_element_fix.sh"
    (d,) = [d for d in lint(path.read_text(), path=str(path), memory=False).diagnostics if d.code == "ML751"]
    assert (_at(d.span), d.fix) == ("2:7-2:18", None)
