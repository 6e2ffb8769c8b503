"""The rule engine: rules are YAML data validated by a JSON Schema, conditions are CEL.

Most names below are imported when first used: a run that reads its rules from the rule cache
must not load the YAML reader, the JSON Schema validator and the catalogues.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# `megalint.engine.evaluate` is the module (its function is imported from it): importing the
# evaluator here would load it, and the CEL binding, for a run that only reads cached results.
from megalint.errors import RuleError, RuleFileError

if TYPE_CHECKING:
    from megalint.engine.evaluate import Evaluation, Missing, RuleFailure, Target, Undecided, evaluate_one
    from megalint.engine.examples import check_example, example_id, iter_examples
    from megalint.engine.loader import (
        load_rule_texts,
        load_rules,
        packaged_rules,
        packaged_rules_dir,
    )
    from megalint.engine.locate import Locator
    from megalint.engine.rule import RULE_URL, Example, Expected, Rule, RuleInfo, RuleSet, rule_url
    from megalint.engine.rulefile import rule_schema

# Each public name and the module that defines it.
_WHERE = {
    "Evaluation": "evaluate",
    "Missing": "evaluate",
    "RuleFailure": "evaluate",
    "Target": "evaluate",
    "Undecided": "evaluate",
    "evaluate_one": "evaluate",
    "check_example": "examples",
    "example_id": "examples",
    "iter_examples": "examples",
    "load_rule_texts": "loader",
    "load_rules": "loader",
    "packaged_rules": "loader",
    "packaged_rules_dir": "loader",
    "rule_schema": "rulefile",
    "Locator": "locate",
    "RULE_URL": "rule",
    "Example": "rule",
    "Expected": "rule",
    "Rule": "rule",
    "RuleInfo": "rule",
    "RuleSet": "rule",
    "rule_url": "rule",
}

__all__ = [
    "Evaluation",
    "Example",
    "Expected",
    "Locator",
    "Missing",
    "RULE_URL",
    "Rule",
    "RuleError",
    "RuleFailure",
    "RuleFileError",
    "RuleInfo",
    "RuleSet",
    "Target",
    "Undecided",
    "check_example",
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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'megalint.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"megalint.engine.{module}"), name)
    globals()[name] = value
    return value
