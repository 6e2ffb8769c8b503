"""The folders of megalint's packaged files, found without importlib.resources' readers: the
same as importlib.resources gives, and importlib.resources' answer for a package in a zip."""

from __future__ import annotations

import importlib
import importlib.util
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
    assert isinstance(found, Path)
    assert found == resources.files(package)
    with packaged.as_file(found / "__init__.py") as path:
        assert path == found / "__init__.py"


def test_a_package_in_a_zip_is_answered_by_importlib_resources(tmp_path, monkeypatch):
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped_pkg/__init__.py", "")
        z.writestr("zipped_pkg/data.json", '{"a": 1}')
    monkeypatch.syspath_prepend(str(archive))
    importlib.invalidate_caches()
    try:
        found = packaged.files("zipped_pkg")
        assert not isinstance(found, Path)
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
