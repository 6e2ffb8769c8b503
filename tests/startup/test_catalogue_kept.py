"""The shipped catalogues kept in megalint's cache folder: a second load reads the entry and gives
the same catalogue; an entry that is corrupt is ignored, and a changed JSON file is seen."""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path

import pytest

from megalint import packaged
from megalint.megatron import catalogue
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.versions import resolve_version

VERSION = resolve_version(None)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "cache"))
    catalogue._load_packaged.cache_clear()
    yield tmp_path / "cache"
    catalogue._load_packaged.cache_clear()


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "shipped-catalogues").glob("*.pickle"))


def _same(a: Catalogue, b: Catalogue) -> None:
    assert a == b
    assert [repr(f) for f in a.flags] == [repr(f) for f in b.flags]
    assert a.origin == b.origin and a.option_strings() == b.option_strings() and a.dests() == b.dests()
    assert all(
        a.lookup(o) == b.lookup(o) and a.by_dest(f.dest) == b.by_dest(f.dest) for f in a.flags for o in f.option_strings
    )


def _fresh() -> Catalogue:
    ref = packaged.files("megalint.data").joinpath("catalogue").joinpath(f"{VERSION}.json")
    data = json.loads(ref.read_text(encoding="utf-8"))
    return Catalogue.from_dict(data, origin=f"megalint/data/catalogue/{VERSION}.json")


def test_a_second_load_comes_from_the_entry_and_equals_a_fresh_load(cache, monkeypatch):
    first = catalogue._load_packaged(VERSION)
    assert len(_entries(cache)) == 1
    catalogue._load_packaged.cache_clear()
    monkeypatch.setattr(Catalogue, "from_dict", None)  # not built again: read from the entry
    second = catalogue._load_packaged(VERSION)
    assert second is not first
    monkeypatch.undo()
    _same(second, _fresh())
    _same(second, first)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:100] + bytes([b[100] ^ 0xFF]) + b[101:], id="a byte changed"),
        pytest.param(lambda b: b"not a cache entry\n", id="garbage"),
    ],
)
def test_a_corrupt_entry_is_ignored_and_written_again(cache, damage):
    catalogue._load_packaged(VERSION)
    [entry] = _entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    catalogue._load_packaged.cache_clear()
    _same(catalogue._load_packaged(VERSION), _fresh())
    assert entry.read_bytes() == good


def test_an_entry_holding_something_else_is_ignored(cache):
    catalogue._load_packaged(VERSION)
    [entry] = _entries(cache)
    catalogue.write_entry(entry, ["not", "a catalogue"])
    catalogue._load_packaged.cache_clear()
    _same(catalogue._load_packaged(VERSION), _fresh())


def test_a_changed_json_file_is_seen(cache, tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "catalogue").mkdir(parents=True)
    shipped = packaged.files("megalint.data").joinpath("catalogue").joinpath(f"{VERSION}.json")
    target = data / "catalogue" / f"{VERSION}.json"
    shutil.copyfile(str(shipped), target)
    monkeypatch.setattr(catalogue, "packaged", types.SimpleNamespace(files=lambda package: data))
    whole = catalogue._load_packaged(VERSION)
    doc = json.loads(target.read_text(encoding="utf-8"))
    gone = doc["flags"].pop()["option_strings"][0]
    target.write_text(json.dumps(doc), encoding="utf-8")
    catalogue._load_packaged.cache_clear()
    edited = catalogue._load_packaged(VERSION)
    assert gone in whole and gone not in edited and len(edited) == len(whole) - 1
    assert len(_entries(cache)) == 2
