"""Argument-parsing loops read as the same idioms: a `case` over `$1` or over a copy of it
(`key="$1"`), `for arg in "$@"` and `getopts`. Each mistake is reported at the arm's read or
pattern, and the forms that work are not reported."""

from __future__ import annotations

import pytest
from modelhelp import load, load_text, pos, text_at

from megalint.shell.facts import ShellFindingKind


def shift_findings(facts):
    return [f for f in facts.findings if f.kind == ShellFindingKind.SHIFT_MISMATCH]


# fixture -> (line:col, text there, fragment of the message) of every finding, in file order
EXPECTED = {
    "idioms-args/key_copy.sh": [("7:18", "$2", "write `shift 2` in this arm")],
    "idioms-args/shift_after_esac.sh": [
        ("8:22", "${2}", "write one more `shift` in this arm"),
        ("16:20", "$2", "write `shift 2` in this arm"),
    ],
    "idioms-args/for_args.sh": [
        ("7:18", "$2", "(and `shift` does not move it)"),
        ("13:27", "$2", "match `--layers=*)` and read `${opt#*=}`"),
    ],
    "idioms-args/getopts.sh": [
        ("7:15", "$OPTARG", 'takes no value in getopts\' option string "t:pg:h"'),
        ("8:9", "m", "add `m:` to the option string"),
        ("9:16", "$2", "read `$OPTARG`"),
    ],
    "idioms-args/correct_forms.sh": [],
}


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_findings_at_the_arm(fixture: str) -> None:
    facts, _ = load(fixture)
    found = [(pos(f.span), text_at(facts, f.span), f.message) for f in shift_findings(facts)]
    assert [(at, text) for at, text, _ in found] == [(at, text) for at, text, _ in EXPECTED[fixture]]
    for (_, _, message), (_, _, fragment) in zip(found, EXPECTED[fixture], strict=True):
        assert fragment in message


def test_the_message_says_what_happens_and_the_fix() -> None:
    facts, _ = load("idioms-args/key_copy.sh")
    (finding,) = shift_findings(facts)
    assert finding.message == (
        "the `--tp)` arm reads its value as `$2`, but the arguments are shifted only once in this turn: "
        "the value stays in place and the next turn parses it as an option, so the options after it "
        "shift by one; write `shift 2` in this arm"
    )
    assert finding.data == {"pattern": "--tp", "shifts": 1, "loop": "shift"}


@pytest.mark.parametrize(
    "script",
    [
        # a shift by an amount the arm decides is not judged
        "while [[ $# -gt 0 ]]; do case $1 in --tp) TP=$2; n=2 ;; esac; shift $n; done\n",
        # the shift depends on a condition
        "while [[ $# -gt 0 ]]; do case $1 in --tp) TP=$2; [[ -n $2 ]] && shift; shift ;; esac; done\n",
        # the copy is not of `$1`
        'while [[ $# -gt 0 ]]; do key="$2"; case $key in --tp) TP=$2; shift ;; esac; done\n',
        # a case over some other variable is not an argument loop
        "case $MODE in big) TP=$2; shift ;; esac\n",
        # a getopts option string that is not literal: only the reads are judged
        'while getopts "$OPTS" o; do case $o in t) TP=$OPTARG ;; esac; done\n',
        # an arm that leaves the loop
        'while [[ $# -gt 0 ]]; do case $1 in -h) echo "$2"; exit 0 ;; *) shift ;; esac; done\n',
    ],
)
def test_forms_not_judged(script: str) -> None:
    facts, _ = load_text(script)
    assert shift_findings(facts) == []


def test_the_copy_may_be_shifted_before_the_case() -> None:
    # `key=$1; shift`: the option is consumed, its value is `$1`, and one more shift takes it.
    ok = "while [[ $# -gt 0 ]]; do key=$1; shift; case $key in --tp) TP=$1; shift ;; esac; done\n"
    bad = "while [[ $# -gt 0 ]]; do key=$1; shift; case $key in --tp) TP=$1 ;; esac; done\n"
    assert shift_findings(load_text(ok)[0]) == []
    (finding,) = shift_findings(load_text(bad)[0])
    assert pos(finding.span) == "1:63"
    assert finding.message.endswith("write one more `shift` in this arm")
