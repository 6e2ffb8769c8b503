"""Every format on the hand-made example, compared byte for byte with tests/golden/."""

from __future__ import annotations

import pytest
from output_example import check_golden

from megalint.output import FORMATS, RenderOptions

EXT = {
    "full": "txt",
    "concise": "txt",
    "grouped": "txt",
    "json": "json",
    "json-lines": "jsonl",
    "sarif": "sarif",
    "github": "txt",
    "gitlab": "json",
    "junit": "xml",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_golden(example, fmt):
    diags, sources, rules = example
    summaries = []
    opts = RenderOptions(
        width=100, color=False, root="/work/repo", github_max_per_type=1, step_summary=summaries.append
    )
    text = FORMATS[fmt](diags, sources, rules, opts)
    check_golden(f"example.{fmt}.{EXT[fmt]}", text)
    if fmt == "github":
        assert len(summaries) == 1
        check_golden("example.github-step-summary.md", summaries[0])


def test_full_colour_golden(example):
    diags, sources, rules = example
    text = FORMATS["full"](diags, sources, rules, RenderOptions(width=100, color=True))
    assert "\x1b[" in text
    check_golden("example.full-color.ansi", text)


def test_renderers_do_not_depend_on_input_order(example):
    diags, sources, rules = example
    for fmt, fn in FORMATS.items():
        a = fn(diags, sources, rules, RenderOptions(root="/work/repo"))
        b = fn(list(reversed(diags)), sources, rules, RenderOptions(root="/work/repo"))
        assert a == b, fmt


def test_no_findings(example):
    _, sources, rules = example
    for fmt, fn in FORMATS.items():
        text = fn([], sources, rules, RenderOptions())
        assert isinstance(text, str), fmt
    assert FORMATS["full"]([], sources, rules, RenderOptions()) == "All checks passed.\n"
    assert FORMATS["json"]([], sources, rules, RenderOptions()) == "[]\n"
    assert FORMATS["github"]([], sources, rules, RenderOptions()) == ""
