"""Every rule's examples run as tests.

The test suite parametrises over `iter_examples(load_rules())`, lints each example script through
the whole pipeline (with the example's Megatron version, GPU and assumptions), and asserts
`check_example(example, rule, diagnostics) == []`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from megalint.diagnostics import Diagnostic
from megalint.engine.rule import Example, Expected, Rule, RuleSet


def iter_examples(ruleset: RuleSet | Iterable[Rule]) -> Iterator[tuple[Rule, Example]]:
    for rule in ruleset:
        for example in rule.examples:
            yield rule, example


def example_id(rule: Rule, example: Example) -> str:
    """A stable pytest id: `ML101-tp-divides-heads-bad-0`."""
    return f"{rule.code}-{rule.name}-{example.kind}-{example.index}"


def _matches(e: Expected, d: Diagnostic) -> bool:
    s = d.span
    if (s.start_line, s.start_col) != (e.line, e.column):
        return False
    if e.end_line is not None and s.end_line != e.end_line:
        return False
    if e.end_column is not None and s.end_col != e.end_column:
        return False
    return True


def check_example(example: Example, rule: Rule, diagnostics: Iterable[Diagnostic]) -> list[str]:
    """What is wrong with the rule's findings on its example: [] when they are exactly right.

    A bad example must be reported exactly at each expected position and nowhere else; a good
    example must not be reported at all. Findings of other rules are ignored.
    """
    own = [d for d in diagnostics if d.code == rule.code]
    problems: list[str] = []
    where = f"{rule.code} example {example.index} ({example.origin})"
    if not example.bad:
        for d in own:
            problems.append(f"{where}: good example reported at {d.span.start_line}:{d.span.start_col}: {d.message}")
        return problems
    unmatched = list(own)
    for e in example.expect:
        hit = next((d for d in unmatched if _matches(e, d)), None)
        if hit is None:
            got = (
                ", ".join(f"{d.span.start_line}:{d.span.start_col}-{d.span.end_line}:{d.span.end_col}" for d in own)
                or "nothing"
            )
            problems.append(f"{where}: expected a finding at {e}, got {got}")
        else:
            unmatched.remove(hit)
    for d in unmatched:
        problems.append(f"{where}: unexpected finding at {d.span.start_line}:{d.span.start_col}: {d.message}")
    return problems
