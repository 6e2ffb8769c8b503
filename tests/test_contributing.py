"""CONTRIBUTING.md's walk-through adds a rule by writing one YAML file: the file it shows is
loaded here as the packaged rules are, takes the code the registry offers, and its examples hold."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import yaml
from linting import lint, packaged_rules

from megalint.engine import RuleSet, check_example, iter_examples, packaged_rules_dir
from megalint.engine.loader import parse_rule_text
from megalint.megatron.catalogue import shipped_dests

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "CONTRIBUTING.md").read_text("utf-8")


def _shown_rule() -> tuple[str, str]:
    """(the path the walk-through names, the YAML it shows)."""
    block = re.search(r"<!-- new-rule:start -->\s*```yaml\n(.*?)```\s*<!-- new-rule:end -->", DOC, re.S)
    assert block, "CONTRIBUTING.md lost its new-rule block"
    path = re.search(r"here `(rules/[a-z-]+/[a-z0-9-]+\.yaml)`", DOC)
    assert path, "CONTRIBUTING.md no longer names the file of its example rule"
    return path.group(1), textwrap.dedent(block.group(1))


def test_the_example_rule_is_one_packaged_file_with_its_registry_code():
    path, text = _shown_rule()
    rules, errors, _ = parse_rule_text(text, path, packaged=True, dests=shipped_dests())
    assert errors == [], [str(e) for e in errors]
    (rule,) = rules
    assert path == f"rules/{rule.category}/{rule.name}.yaml"
    assert rule.code not in {r.code for r in packaged_rules()}, "the example's code is taken: use the next one"
    ranges = yaml.safe_load(packaged_rules_dir().joinpath("codes.yaml").read_text("utf-8"))["ranges"]
    serving = [r for r in ranges if rule.category in r["categories"] and r["name"] != "Megatron-LM constraints"]
    assert [r["next"] for r in serving] == [rule.code], "step 1 takes the `next` code of the rule's range"
    assert f"-k {rule.code}" in DOC and f"docs/rules/{rule.name}.md" in DOC


def test_the_example_rules_examples_hold():
    path, text = _shown_rule()
    rules, _, _ = parse_rule_text(text, path, packaged=True, dests=shipped_dests())
    with_new = RuleSet([*packaged_rules(), *rules])
    checked = 0
    for rule, ex in iter_examples(RuleSet(rules)):
        result = lint(ex.script, ex.megatron, ex.gpu, path="example.sh", rules=with_new)
        assert check_example(ex, rule, result.diagnostics) == []
        checked += 1
    assert checked >= 2
