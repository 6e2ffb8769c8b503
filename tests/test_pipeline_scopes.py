"""The rules of each scope are worked out once per rule set of a run, not once per file."""

from __future__ import annotations

from megalint.engine import load_rules
from megalint.engine.rule import LAUNCH, SCRIPT
from megalint.launch.tools import TOOL
from megalint.pipeline import scoped, tool_rules


def test_each_scope_is_one_rule_set_per_run():
    rules = load_rules()
    for scope, fork in ((LAUNCH, None), (SCRIPT, None), (TOOL, None), (LAUNCH, "megatron-deepspeed")):
        assert scoped(rules, scope, fork) is scoped(rules, scope, fork)
    assert [r.code for r in scoped(rules, LAUNCH)] == [r.code for r in rules.select(scope=LAUNCH)]
    assert [r.code for r in scoped(rules, SCRIPT)] == [r.code for r in rules.select(scope=SCRIPT)]
    assert [r.code for r in scoped(rules, TOOL)] == [r.code for r in tool_rules(rules)]
    fork = [r.code for r in scoped(rules, LAUNCH, "megatron-deepspeed")]
    assert fork == [r.code for r in rules.select(scope=LAUNCH, fork="megatron-deepspeed")]
