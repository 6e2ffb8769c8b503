"""The examples hook: each rule's examples, checked against the findings on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from megalint.diagnostics import Diagnostic, Severity
from megalint.engine import Target, check_example, example_id, iter_examples, load_rules
from megalint.engine.evaluate import evaluate
from megalint.source import Span

from .textlocator import TextLocator, apply_fix

DATA = Path(__file__).parent / "data"
DEMO = load_rules([DATA / "demo"], packaged=False)

# What the pipeline would compute for each demo example, written by hand.
CONTEXTS = {
    ("DM101", 0): {"args": {"num_attention_heads": 12, "tensor_model_parallel_size": 8}, "megatron": "HEAD"},
    ("DM101", 1): {"args": {"num_attention_heads": 16, "tensor_model_parallel_size": 8}, "megatron": "HEAD"},
    ("DM102", 0): {
        "problems": [{"kind": "unknown-flag", "flag": "--hidden_size", "suggestions": ["--hidden-size"], "index": 0}]
    },
    ("DM102", 1): {"problems": []},
}


def test_iter_examples_and_ids():
    ids = [example_id(r, e) for r, e in iter_examples(DEMO)]
    assert ids == [
        "DM101-tp-divides-heads-bad-0",
        "DM101-tp-divides-heads-good-1",
        "DM102-unknown-flag-bad-0",
        "DM102-unknown-flag-good-1",
    ]


@pytest.mark.parametrize(
    "rule, example", list(iter_examples(DEMO)), ids=[example_id(r, e) for r, e in iter_examples(DEMO)]
)
def test_demo_examples(rule, example):
    ctx = CONTEXTS[(rule.code, example.index)]
    ev = evaluate([rule], [Target(ctx, TextLocator(example.script))])
    assert ev.undecided == [] and ev.failures == []
    assert check_example(example, rule, ev.diagnostics) == []
    if example.fixed is not None:
        (d,) = ev.diagnostics
        assert apply_fix(example.script, d.fix) == example.fixed


def diag(code: str, line: int, col: int, end_line: int, end_col: int) -> Diagnostic:
    return Diagnostic(code, "x", Severity.ERROR, "msg", Span("t.sh", line, col, end_line, end_col))


def test_check_example_reports_every_mismatch():
    rule = DEMO.get("DM101")
    bad, good = rule.examples
    where = f"DM101 example 0 ({bad.origin})"
    assert check_example(bad, rule, [diag("DM101", 5, 34, 5, 37), diag("OTHER", 1, 1, 1, 2)]) == []
    assert check_example(bad, rule, [diag("DM101", 5, 34, 5, 36)]) == [
        f"{where}: expected a finding at 5:34-5:37, got 5:34-5:36",
        f"{where}: unexpected finding at 5:34: msg",
    ]
    assert check_example(bad, rule, []) == [f"{where}: expected a finding at 5:34-5:37, got nothing"]
    assert check_example(good, rule, [diag("DM101", 1, 1, 1, 2)]) == [
        f"DM101 example 1 ({good.origin}): good example reported at 1:1: msg"
    ]


def test_example_origins_point_into_the_rule_file():
    bad, good = DEMO.get("DM101").examples
    assert bad.origin.endswith("heads.yaml:34:5") and good.origin.endswith("heads.yaml:48:5")
