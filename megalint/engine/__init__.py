"""The rule engine: rules are YAML data validated by a JSON Schema, conditions are CEL."""

from megalint.engine.evaluate import (
    Evaluation,
    Missing,
    RuleFailure,
    Target,
    Undecided,
    evaluate,
    evaluate_one,
)
from megalint.engine.examples import check_example, example_id, iter_examples
from megalint.engine.loader import (
    RuleError,
    RuleFileError,
    load_rule_texts,
    load_rules,
    packaged_rules,
    packaged_rules_dir,
    rule_schema,
)
from megalint.engine.locate import Locator
from megalint.engine.rule import RULE_URL, Example, Expected, Rule, RuleInfo, RuleSet, rule_url

__all__ = [
    "Evaluation",
    "Example",
    "Expected",
    "Locator",
    "Missing",
    "RULE_URL",
    "Rule",
    "RuleInfo",
    "RuleError",
    "RuleFailure",
    "RuleFileError",
    "RuleSet",
    "Target",
    "Undecided",
    "check_example",
    "evaluate",
    "evaluate_one",
    "example_id",
    "iter_examples",
    "load_rule_texts",
    "load_rules",
    "packaged_rules",
    "packaged_rules_dir",
    "rule_schema",
    "rule_url",
]
