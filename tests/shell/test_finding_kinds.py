"""Every kind of finding the shell stage reports has a packaged rule that reports it: a kind no
rule reads would be found and then silently dropped."""

from __future__ import annotations

import pytest
from linting import packaged_rules

from megalint.shell.facts import ShellFindingKind

RULES = packaged_rules()


def _reads_kind(source: str, kind: ShellFindingKind) -> bool:
    return f'"{kind.value}"' in source or f"'{kind.value}'" in source


@pytest.mark.parametrize("kind", list(ShellFindingKind), ids=lambda k: k.value)
def test_every_finding_kind_has_a_rule(kind: ShellFindingKind) -> None:
    reporting = [
        rule.code
        for rule in RULES
        if "shell" in {ref.root for expr, _bound in rule.exprs() for ref in expr.refs}
        and any(_reads_kind(expr.source, kind) for expr, _bound in rule.exprs())
    ]
    assert reporting, f"no packaged rule reports shell findings of kind {kind.value!r}"


def test_a_kind_reads_as_its_value() -> None:
    # The rule context and every output hold the kind's text, as they did when kinds were strings.
    assert ShellFindingKind.PARSE_ERROR == "parse-error"
    assert str(ShellFindingKind.PARSE_ERROR) == f"{ShellFindingKind.PARSE_ERROR}" == "parse-error"
