"""The extractor on real megatron-core wheels from PyPI, against the table built from Megatron's real parsers.

megatron-core wheels contain megatron/training (and arguments.py) from 0.17 on; they are downloaded at test time
(they need Python >= 3.12, so they are fetched as files with `pip download --python-version 3.12`, never
installed) and cached under the system temp directory. The tests are skipped only when PyPI cannot be reached.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from compare_tsv import COMPARED, compare, load_tsv

from megalint.megatron.extract import extract_catalogue

CACHE = Path(tempfile.gettempdir()) / "megalint-test-wheels"
_reachable: bool | None = None


def _pypi_reachable() -> bool:
    global _reachable
    if _reachable is None:
        try:
            with urllib.request.urlopen("https://pypi.org/simple/megatron-core/", timeout=10) as resp:
                _reachable = resp.status == 200
        except (urllib.error.URLError, OSError):
            _reachable = False
    return _reachable


def wheel(version: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(f"megatron_core-{version}-*.whl"))
    if found:
        return found[0]
    if not _pypi_reachable():
        pytest.skip("PyPI (pypi.org) is unreachable: megatron-core wheels cannot be downloaded")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.12",
        "--platform",
        "manylinux_2_28_x86_64",
        "--disable-pip-version-check",
        "-q",
        f"megatron-core=={version}",
        "-d",
        str(CACHE),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    found = sorted(CACHE.glob(f"megatron_core-{version}-*.whl"))
    assert proc.returncode == 0 and found, f"pip download megatron-core=={version} failed:\n{proc.stderr[-2000:]}"
    return found[0]


_catalogues: dict = {}


def catalogue(version: str):
    if version not in _catalogues:
        _catalogues[version] = extract_catalogue(wheel(version))
    return _catalogues[version]


@pytest.fixture(scope="module")
def rows():
    return load_tsv()


@pytest.mark.parametrize("version", ["0.19.0", "0.19.2"])
def test_wheel_0_19_reproduces_the_real_parser(version, rows):
    cat = catalogue(version)
    assert cat.version == version
    assert cat.warnings == []
    report = compare(cat.to_json(), "0.19", rows, everywhere=("dest", "action", "nargs"))
    assert report.missing == []
    # The two Kitchen flags exist only when the optional Kitchen package imports; the table's parser had none.
    assert report.extra == ["--kitchen-config-file", "--kitchen-recipe-number"]
    by_option = cat.by_option()
    assert {by_option[f].condition for f in report.extra} == {"HAVE_KITCHEN"}
    assert report.compared > 0
    assert report.mismatches == {c: [] for c in COMPARED}
    assert {c: v for c, v in report.older.items() if v} == {}
    assert report.extracted_actions == 809 and report.table_options == 845


def test_wheel_0_19_computed_and_enum_defaults(rows):
    flags = catalogue("0.19.0").by_option()
    assert flags["--local-rank"].default == {"__expr__": 'int(os.getenv("LOCAL_RANK", "0"))'}
    assert flags["--attention-backend"].default == "auto"
    assert flags["--attention-backend"].choices == ["flash", "fused", "unfused", "local", "auto"]
    assert flags["--exit-signal"].default == "SIGTERM"
    assert flags["--save-interval"].option_strings == ["--save-interval", "--persistent-save-interval"]
    assert flags["--no-initialization"].dest == "perform_initialization"


@pytest.mark.parametrize("version", ["0.17.1", "0.18.2"])
def test_wheels_between_table_versions_have_every_flag_of_both_neighbours(version, rows):
    # The table has no 0.17/0.18 column; a flag that both the 0.15 and the 0.19 parser have must be there.
    cat = catalogue(version)
    assert cat.warnings == []
    options = set(cat.by_option())
    both = {flag for flag, row in rows.items() if "0.15" in row.present_in and "0.19" in row.present_in}
    assert sorted(both - options) == []


def test_shipped_0_19_0_catalogue_is_what_the_extractor_reads_from_the_wheel():
    # The data file comes from git tag core_v0.19.0, whose megatron/ the 0.19.0 wheel ships unchanged.
    shipped = json.loads(
        (Path(__file__).resolve().parents[2] / "megalint/data/catalogue-extracted/0.19.0.json").read_text(
            encoding="utf-8"
        )
    )
    assert catalogue("0.19.0").to_json()["flags"] == shipped["flags"]
