"""Every finding links to its rule's page, and that page exists: docs/rules/<name>.md in the
repository at the installed version's tag. `megalint rule NAME` prints that page offline."""

from __future__ import annotations

import json
import sys
from urllib.parse import urlparse

import pytest

from megalint import __version__
from megalint.cli.layout import DEFAULT_COLUMNS
from megalint.cli.rules import page_text
from megalint.engine import load_rules
from megalint.engine.rule import REPOSITORY_URL, rule_url

from .conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RULES = sorted(load_rules([]).by_code().values(), key=lambda r: r.code)
BLOB = f"{REPOSITORY_URL}/blob/v{__version__}/"


def page_of(url: str):
    """The file of the repository a link points at (offline: the path after the tag)."""
    assert url.startswith(BLOB), url
    return REPO / urlparse(url).path.split(f"/blob/v{__version__}/", 1)[1]


def test_repository_url_is_the_projects():
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["urls"]["Repository"] == REPOSITORY_URL
    assert __version__ == project.get("version", __version__)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_links_to_a_page_that_exists(rule):
    url = rule.url or rule_url(rule.name)
    page = page_of(url)
    assert page == REPO / "docs" / "rules" / f"{rule.name}.md"
    assert page.is_file()


ML101 = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"


def test_findings_link_the_page_in_every_format(megalint, scripts):
    p = scripts("job.sh", ML101)
    want = f"{BLOB}docs/rules/world-size-divisibility.md"
    assert f"docs: {want}\n" in megalint("--isolated", str(p)).out
    (finding,) = json.loads(megalint("--isolated", "--output-format", "json", str(p)).out)
    assert finding["url"] == want
    sarif = json.loads(megalint("--isolated", "--output-format", "sarif", str(p)).out)
    (rule,) = [r for r in sarif["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "ML101"]
    assert rule["helpUri"] == want
    assert page_of(want).is_file()


@pytest.mark.parametrize("rule", RULES[::7], ids=lambda r: r.code)
def test_rule_command_prints_the_page(megalint, monkeypatch, rule):
    monkeypatch.setenv("COLUMNS", str(DEFAULT_COLUMNS))
    page = (REPO / "docs" / "rules" / f"{rule.name}.md").read_text("utf-8")
    by_code = megalint("rule", rule.code)
    assert by_code.rc == 0
    assert by_code.out == page_text(page, DEFAULT_COLUMNS)
    assert megalint("rule", rule.name).out == by_code.out


def test_page_text_keeps_the_words():
    page = (REPO / "docs" / "rules" / "world-size-divisibility.md").read_text("utf-8")
    text = page_text(page, 2000)
    assert "## " not in text and "|---" not in text and "```" not in text and "<!--" not in text
    rule = load_rules([]).by_code()["ML101"]
    assert " ".join(rule.docs.why.split()) in text


def test_unknown_rule_suggests_and_exits_2(megalint):
    r = megalint("rule", "world-size-divisable")
    assert r.rc == 2
    assert r.err.startswith("megalint: unknown rule `world-size-divisable`; did you mean `world-size-divisibility`")
    r = megalint("rule", "ML10")
    assert r.rc == 2 and "did you mean `ML" in r.err
