"""A rule's text reads the same wherever it is shown: `megalint rules`, `megalint rule`, the pages
under docs/rules/, the README table and the SARIF rule descriptions."""

from __future__ import annotations

import json
import re

from megalint.engine import load_rules

from .conftest import REPO

# Two backslashes where one is meant: a YAML escape (`"\\\\"`) written once too often.
DOUBLED = "\\\\"
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose_fields(rule):
    return {"summary": rule.summary, "what": rule.docs.what, "why": rule.docs.why, "fix": rule.docs.fix_safety or ""}


def test_no_rule_text_doubles_a_backslash():
    doubled = [
        (code, field)
        for code, rule in load_rules([]).by_code().items()
        for field, text in prose_fields(rule).items()
        if DOUBLED in text
    ]
    assert doubled == []


def test_backslash_rules_show_one_backslash(megalint):
    out = megalint("rules").out
    assert DOUBLED not in out
    line = next(x for x in out.splitlines() if x.startswith("ML012"))
    assert "`\\`" in line
    assert "`\\`" in megalint("rule", "ML013").out


def test_generated_pages_and_readme_show_one_backslash():
    pages = [*sorted((REPO / "docs" / "rules").glob("*.md")), REPO / "README.md"]
    found = [
        (p.name, span)
        for p in pages
        for line in p.read_text("utf-8").splitlines()
        if not line.startswith("    ")  # an indented code block shows a script as it is
        for _, span in CODE_SPAN.findall(line)
        if DOUBLED in span
    ]
    assert found == []
    assert "`\\`" in (REPO / "docs" / "rules" / "backslash-trailing-blank.md").read_text("utf-8")


def test_sarif_rule_descriptions_show_one_backslash(megalint, scripts):
    p = scripts("job.sh", "torchrun pretrain_gpt.py --num-layers 2 \\  \n    --hidden-size 64\n")
    sarif = json.loads(megalint("--isolated", "--output-format", "sarif", str(p)).out)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "ML012" in rules
    assert rules["ML012"]["shortDescription"]["text"].startswith("Finds a `\\` followed")
    assert DOUBLED not in json.loads(json.dumps(rules["ML012"]))["fullDescription"]["text"]
