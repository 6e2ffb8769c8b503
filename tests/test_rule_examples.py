"""Every rule's examples, linted through the whole pipeline with exact positions; every fix applied.

A `bad` example must give exactly the findings it expects (line and column, and the end when
given); a `good` one none of that rule. Where a rule has a fix, applying it must leave a script
that parses, no longer triggers the rule, changes no byte outside the edits and, when the example
says so, equals its `fixed` text.
"""

import pytest
from linting import packaged_rules

from megalint.engine import check_example, example_id, iter_examples
from megalint.fix import apply_edits, bash_parses
from megalint.pipeline import Settings, lint_text
from megalint.suppress import apply_suppressions, parse_directives

RULES = packaged_rules()
EXAMPLES = list(iter_examples(RULES))


def _lint(script, rule, ex):
    """(the pipeline's result, its settings, the findings the rule's example is held to)."""
    settings = Settings(
        rules=RULES, megatron_version=ex.megatron, gpu=ex.gpu, assume={k: str(v) for k, v in ex.assume.items()}
    )
    if ex.max_file_size is not None:
        settings.max_file_size = ex.max_file_size
    result = lint_text("example.sh", script, settings)
    findings = result.diagnostics
    if rule.emitted_by == "megalint":  # reported while the suppression comments are applied
        undecided = {u.rule.code for u in result.evaluation.undecided}
        directives = parse_directives(script, "example.sh")
        _, findings = apply_suppressions(result.diagnostics, directives, RULES.by_code(), undecided=undecided)
    return result, settings, findings


@pytest.mark.parametrize("rule,ex", EXAMPLES, ids=[example_id(r, e) for r, e in EXAMPLES])
def test_example(rule, ex):
    result, _, findings = _lint(ex.script, rule, ex)
    assert not result.evaluation.failures, result.evaluation.failures
    assert check_example(ex, rule, findings) == []


FIXABLE = [(r, e) for r, e in EXAMPLES if e.bad and r.fix is not None]


@pytest.mark.parametrize("rule,ex", FIXABLE, ids=[example_id(r, e) for r, e in FIXABLE])
def test_fix_repairs_the_example(rule, ex):
    _, _, findings = _lint(ex.script, rule, ex)
    mine = [d for d in findings if d.code == rule.code and d.fix is not None]
    if not mine:
        assert ex.fixed is None, "the example gives its fixed text but no fix was offered"
        pytest.skip("no fix can be made safely in this example")
    text = ex.script
    for d in mine[:1]:
        edits = d.fix.edits
        new = apply_edits(text, edits)
        # Nothing outside the edits changes: cut the edited ranges out of both texts.
        spans = sorted((e.span.start, e.span.end, e.content) for e in edits)
        rebuilt, pos = [], 0
        for start, end, content in spans:
            rebuilt.append(text[pos:start])
            rebuilt.append(content)
            pos = end
        rebuilt.append(text[pos:])
        assert new == "".join(rebuilt)
        text = new
    assert bash_parses(text)
    _, _, again = _lint(text, rule, ex)
    assert not [d for d in again if d.code == rule.code and d.span.start_line == mine[0].span.start_line]
    if ex.fixed is not None:
        assert text == ex.fixed


def test_every_fixable_rule_fixes_at_least_one_example():
    for rule in RULES:
        if rule.fix is None:
            continue
        fixed = 0
        for ex in rule.examples:
            if ex.bad:
                _, _, findings = _lint(ex.script, rule, ex)
                fixed += any(d.code == rule.code and d.fix is not None for d in findings)
        assert fixed, f"{rule.code} never offers its fix on its own examples"


def test_every_rule_has_docs_and_a_bad_example():
    for rule in RULES:
        assert rule.docs.what and rule.docs.why
        assert any(e.bad for e in rule.examples), rule.code
        assert any(not e.bad for e in rule.examples), f"{rule.code} has no good example"
