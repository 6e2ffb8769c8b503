"""The shipped catalogues in megalint/data/catalogue-extracted/ against the table of Megatron's real parsers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compare_tsv import COMPARED, compare, load_tsv

DATA = Path(__file__).resolve().parents[2] / "megalint" / "data" / "catalogue-extracted"
KITCHEN = ["--kitchen-config-file", "--kitchen-recipe-number"]  # only when the optional Kitchen package imports


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def rows():
    return load_tsv()


@pytest.mark.parametrize(
    "name, column, extra",
    [
        ("0.8.0", "0.8", []),
        ("0.12.0", "0.12", []),
        ("0.15.0", "0.15", []),
        ("0.19.0", "0.19", KITCHEN),
        ("main-d98e8a64", "HEAD", KITCHEN),
    ],
)
def test_shipped_catalogue_matches_real_parser(name, column, extra, rows):
    data = load(name)
    assert data["version"] == name
    report = compare(data, column, rows, everywhere=("dest",))
    assert report.missing == []
    assert report.extra == extra
    assert report.mismatches == {c: [] for c in COMPARED}


def test_head_computed_defaults_are_the_environment_reads(rows):
    report = compare(load("main-d98e8a64"), "HEAD", rows)
    assert dict(report.computed_defaults) == {
        "--inprocess-active-world-size": "int(os.getenv('WORLD_SIZE', '1'))",
        "--local-rank": 'int(os.getenv("LOCAL_RANK", "0"))',
    }


def test_every_shipped_file_has_the_catalogue_shape():
    keys = ["option_strings", "dest", "action", "type", "default", "choices", "nargs", "deprecated"]
    files = sorted(DATA.glob("*.json"))
    assert len(files) >= 5
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert list(data) == ["version", "generated_from", "flags"] and path.stem == data["version"]
        assert "commit " in data["generated_from"]
        seen: set[str] = set()
        for flag in data["flags"]:
            assert list(flag) == keys
            assert not seen & set(flag["option_strings"]), f"{path.name}: duplicate option {flag['option_strings']}"
            seen |= set(flag["option_strings"])
