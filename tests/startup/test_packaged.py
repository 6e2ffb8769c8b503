"""The folders of megalint's packaged files, found without importlib.resources' readers: the
same as importlib.resources gives, and importlib.resources' answer for a package in a zip."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from megalint import packaged


@pytest.mark.parametrize("package", ["megalint.data", "megalint.rules", "megalint.engine"])
def test_a_package_of_files_is_its_folder(package):
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed here (the rules of a source checkout run in place)")
    found = packaged.files(package)
    assert isinstance(found, packaged.Folder)
    by_resources = resources.files(package)
    assert found == by_resources and os.fspath(found) == str(by_resources)
    with packaged.as_file(found / "__init__.py") as path:
        assert path == found / "__init__.py"
    # What megalint reads of a packaged folder, as importlib.resources' own reader answers it.
    names = sorted(e.name for e in found.iterdir())
    assert names == sorted(e.name for e in by_resources.iterdir())
    for name in names:
        mine, theirs = found.joinpath(name), by_resources.joinpath(name)
        assert (mine.is_dir(), mine.is_file()) == (theirs.is_dir(), theirs.is_file()), name
        if mine.is_file():
            assert mine.read_bytes() == theirs.read_bytes(), name
            if name.endswith((".json", ".py", ".yaml")):
                assert mine.read_text(encoding="utf-8") == theirs.read_text(encoding="utf-8"), name
                with mine.open(encoding="utf-8") as a, theirs.open(encoding="utf-8") as b:
                    assert a.read() == b.read()


def test_a_package_in_a_zip_is_answered_by_importlib_resources(tmp_path, monkeypatch):
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_pkg/__init__.py", "")
        z.writestr("zipped_pkg/data.json", '{"a": 1}')
    monkeypatch.syspath_prepend(str(archive))
    importlib.invalidate_caches()
    try:
        found = packaged.files("zipped_pkg")
        assert not isinstance(found, (Path, packaged.Folder))
        entry = found.joinpath("data.json")
        assert entry.read_text(encoding="utf-8") == '{"a": 1}'
        with packaged.as_file(entry) as path:
            assert path.read_text(encoding="utf-8") == '{"a": 1}'
    finally:
        sys.modules.pop("zipped_pkg", None)
        packaged.files.cache_clear()


def test_no_such_package():
    with pytest.raises(ModuleNotFoundError):
        packaged.files("megalint_no_such_package")
