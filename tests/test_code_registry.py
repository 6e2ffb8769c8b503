"""rules/codes.yaml: every packaged rule's code lies in a range serving its category, and `next` is free."""

import re

import pytest
import yaml
from linting import packaged_rules

from megalint.engine import packaged_rules_dir

RULES = packaged_rules()
RANGES = yaml.safe_load(packaged_rules_dir().joinpath("codes.yaml").read_text("utf-8"))["ranges"]
CODE = re.compile(r"^ML(\d{3})$")


def number(code: str) -> int:
    m = CODE.match(code)
    assert m, f"{code} is not ML and three digits"
    return int(m.group(1))


def test_ranges_are_well_formed_and_do_not_overlap():
    spans = sorted((number(r["first"]), number(r["last"]), r["name"]) for r in RANGES)
    for (_, last, name), (first, _, other) in zip(spans, spans[1:], strict=False):
        assert last < first, f"ranges {name} and {other} overlap"
    for r in RANGES:
        assert number(r["first"]) <= number(r["next"]) <= number(r["last"]), r["name"]
        assert r["categories"] == sorted(set(r["categories"])), f"{r['name']}: categories sorted, each once"


def test_codes_are_unique():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))


@pytest.mark.parametrize("rule", list(RULES), ids=lambda r: r.code)
def test_code_is_in_a_range_serving_the_category(rule):
    n = number(rule.code)
    serving = [r for r in RANGES if number(r["first"]) <= n <= number(r["last"])]
    assert serving, f"{rule.code} is in no range of rules/codes.yaml"
    assert rule.category in serving[0]["categories"], (
        f"{rule.code} ({rule.category}) is in the range {serving[0]['name']}, which serves "
        f"{', '.join(serving[0]['categories'])}"
    )


@pytest.mark.parametrize("r", RANGES, ids=lambda r: r["name"])
def test_next_is_free_and_above_every_code_of_its_range(r):
    first, last, nxt = number(r["first"]), number(r["last"]), number(r["next"])
    used = [number(x.code) for x in RULES if first <= number(x.code) <= last]
    assert nxt not in used, f"{r['next']} is taken"
    assert all(n < nxt for n in used), f"{r['name']}: next {r['next']} is below {max(used)}"
