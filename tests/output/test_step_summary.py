"""The GitHub step summary's table: code spans stay code (GFM reads no escape inside one but the
table's `\\|`), the text around them is escaped, and `[*]` marks what --fix applies in this run."""

from __future__ import annotations

from output_example import find

from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from megalint.output import RenderOptions, github
from megalint.source import SourceFile


def summary_of(message: str, **kw) -> str:
    sf = SourceFile("t.sh", "TP=7\n")
    d = Diagnostic("ML101", "r", Severity.ERROR, message, find(sf, "TP"), **kw)
    return github.step_summary([d], {})


def row(summary: str) -> str:
    return summary.splitlines()[-1]


def test_code_span_is_not_escaped_but_its_pipe():
    r = row(summary_of("stops with `unrecognized arguments: \\` at `a|b` and `x<y && z`"))
    assert r.endswith("| stops with `unrecognized arguments: \\` at `a\\|b` and `x<y && z` |")


def test_text_outside_code_spans_is_escaped():
    r = row(summary_of("a|b <x> & c\\d `e` f*"))
    assert r.endswith("| a\\|b &lt;x&gt; &amp; c\\\\d `e` f* |")


def test_double_backtick_span_and_a_lone_backtick():
    r = row(summary_of("``a`|b`` then ` alone"))
    assert r.endswith("| ``a`\\|b`` then \\` alone |")


def test_backslash_before_pipe_in_code_is_written_as_text():
    # GFM cannot hold `\|` inside a code span of a table: the span is written as escaped text.
    r = row(summary_of("grep `a\\|b`"))
    assert r.endswith("| grep a\\\\\\|b |")


def test_code_span_over_a_newline_stays_one_row():
    summary = summary_of("first `a\nb` second\nthird")
    assert row(summary).endswith("| first `a b` second<br>third |")


def unsafe_fix(sf):
    return Fix("drop it", Applicability.UNSAFE, (Edit(find(sf, "TP"), ""),))


def test_fix_mark_follows_unsafe_fixes():
    sf = SourceFile("t.sh", "TP=7\n")
    d = Diagnostic("ML101", "r", Severity.ERROR, "m", find(sf, "TP"), fix=unsafe_fix(sf))
    assert "ML101 [*]" not in github.step_summary([d], {})
    assert "ML101 [*]" in github.step_summary([d], {}, unsafe=True)
    got: list[str] = []
    opts = RenderOptions(github_always_summary=True, step_summary=got.append, unsafe_fixes=True)
    github.render([d], {"t.sh": sf}, {}, opts)
    assert "ML101 [*]" in got[0]
