"""The release a user pins in the README's snippets is the version this checkout builds: a
release is tagged `v` + `megalint.__version__` (CONTRIBUTING.md, "Releases"), and the pre-commit
`rev:` and the Action's `megalint/megalint@…` name that tag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from megalint import __version__

ROOT = Path(__file__).resolve().parents[1]
TAG = f"v{__version__}"


def _pins(text: str) -> list[str]:
    """Every megalint release the text pins: pre-commit revs of megalint's repository, Action
    references and pip installs from git."""
    pins = re.findall(r"repo: https://github\.com/megalint/megalint\s*\n\s*rev:\s*(\S+)", text)
    pins += re.findall(r"megalint/megalint@([^\s\"'`]+)", text)
    return pins


@pytest.mark.parametrize("name", ["README.md", "docs/pre-commit.md", "docs/github-actions.md"])
def test_snippets_pin_the_current_release(name):
    pins = _pins((ROOT / name).read_text("utf-8"))
    assert pins, f"{name} pins no megalint release"
    assert set(pins) == {TAG}, f"{name} pins {sorted(set(pins))}; this checkout is {TAG}"


def test_readme_pre_commit_snippet_pins_a_tag():
    readme = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"## pre-commit\n+```yaml\n(.*?)```", readme, re.S)
    assert block is not None
    assert re.search(rf"^\s*rev: {re.escape(TAG)}$", block.group(1), re.M), block.group(1)


def test_the_package_version_is_read_from_one_place():
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert 'version = { attr = "megalint.__version__" }' in pyproject
    assert re.search(r'^dynamic = \[.*"version"', pyproject, re.M)
