"""A variable holding options (`ARGS="--tp 2 --pp 1"`) is split into the words `$ARGS` makes only
when something asks (a file without a launch, checked as a fragment): a script that launches never
splits its variables, and one that asks gets the words the split gives."""

from __future__ import annotations

from megalint.shell.analyze import analyze_parsed
from megalint.shell.facts import VariableFact
from megalint.shell.interp import splitting
from megalint.shell.parse import parse_text

SCRIPT = 'ARGS="--num-layers 2 --hidden-size 64"\nNAME=gpt\n'


def _variables(script: str):
    facts = analyze_parsed(parse_text("t.sh", script), skip_unread=False)
    (path,) = facts.paths
    return path.variables


def test_options_are_split_when_asked_once(monkeypatch):
    calls = []
    real = splitting.fields_of
    monkeypatch.setattr(splitting, "fields_of", lambda *a: calls.append(a) or real(*a))
    variables = _variables(SCRIPT)
    assert calls == [], "nothing split while the facts are made"
    fields = variables["ARGS"].fields
    assert [w.text for w in fields or ()] == ["--num-layers", "2", "--hidden-size", "64"]
    assert [w.span.start_col for w in fields or () if w.span is not None] == [7, 20, 22, 36]
    assert variables["ARGS"].fields is fields and len(calls) == 1, "split once"
    assert variables["NAME"].fields is None and len(calls) == 1, "a value without options is not split"


def test_a_fact_without_options_has_no_fields():
    assert VariableFact("X", None, None, False).fields is None
