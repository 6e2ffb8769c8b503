"""The shipped catalogues are read without checking each flag (megalint/megatron/catalogue.py,
`shipped=True`): this test is the check they skip. Each shipped file must follow the format, and
reading it either way must give the same flags."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from megalint.megatron.catalogue import SHIPPED_FOLDERS, Catalogue, CatalogueError, FlagSpec

_FILES = sorted(
    f"{folder}/{entry.name}"
    for folder in SHIPPED_FOLDERS
    for entry in resources.files("megalint.data").joinpath(folder).iterdir()
    if entry.name.endswith(".json")
)


def test_every_shipped_folder_has_catalogues():
    assert {name.split("/")[0] for name in _FILES} == set(SHIPPED_FOLDERS)


@pytest.mark.parametrize("name", _FILES)
def test_a_shipped_catalogue_reads_the_same_unchecked(name):
    data = json.loads(resources.files("megalint.data").joinpath(name).read_text(encoding="utf-8"))
    checked = Catalogue.from_dict(data, origin=name)
    shipped = Catalogue.from_dict(data, origin=name, shipped=True)
    assert shipped == checked
    assert [repr(f) for f in shipped.flags] == [repr(f) for f in checked.flags]


def test_a_catalogue_not_shipped_is_still_checked():
    bad = {"version": "x", "flags": [{"option_strings": ["--a"], "dest": "a", "nargs": "many"}]}
    with pytest.raises(CatalogueError, match="bad nargs"):
        Catalogue.from_dict(bad)
    assert FlagSpec.from_json({"option_strings": ["--a"], "dest": "a"}) == FlagSpec(("--a",), "a")
