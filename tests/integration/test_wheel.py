"""The wheel users get from `pip install .`: it carries the rules, the data and the schema, and
the installed command finds them with nothing of this checkout on its path."""

from __future__ import annotations

import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, offline_pip, run, the_wheel, venv_bin

pytestmark = pytest.mark.integration


def _expected_members(src: Path) -> set[str]:
    want = {str(p.relative_to(src)).replace("\\", "/") for p in (src / "megalint").rglob("*.py")}
    want |= {
        str(p.relative_to(src)).replace("\\", "/")
        for p in (src / "megalint" / "data").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    want.add("megalint/engine/schema.json")
    # rules/ at the root of the repository ships as the package megalint.rules.
    want |= {"megalint/" + str(p.relative_to(src)).replace("\\", "/") for p in (src / "rules").rglob("*.yaml")}
    want |= {"megalint/" + str(p.relative_to(src)).replace("\\", "/") for p in (src / "rules").rglob("*.py")}
    return want


def test_wheel_carries_code_rules_and_data(snapshot, wheelhouse):
    src, _ = snapshot
    names = set(zipfile.ZipFile(the_wheel(wheelhouse)).namelist())
    missing = _expected_members(src) - names
    assert not missing, f"not in the wheel: {sorted(missing)}"
    assert any(n.startswith("megalint/data/catalogue-extracted/") for n in names)
    assert any(n.startswith("megalint/data/catalogue/") for n in names)
    assert "megalint/data/gpus.yaml" in names and "megalint/data/gpus.json" in names
    # Nothing of the repository's tests or fixtures leaks into the package.
    assert not [n for n in names if n.startswith(("tests/", "fixtures/", "docs/", "tools/", "rules/"))]
    entry = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(the_wheel(wheelhouse)).read(entry[0]).decode()
    # cli.run: main(), then the exit without the interpreter's teardown
    assert re.search(r"^megalint\s*=\s*megalint\.cli:run$", text, re.M)


@pytest.fixture(scope="module")
def installed(wheelhouse, tmp_path_factory) -> Path:
    """A fresh virtual environment, outside the source tree, with the wheel installed."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    run([sys.executable, "-m", "venv", venv], timeout=300)
    py = venv_bin(venv, "python")
    run([py, "-m", "pip", "install", "--quiet", the_wheel(wheelhouse)], env=offline_pip(wheelhouse), timeout=600)
    return venv


def _source_version() -> str:
    text = (ROOT / "megalint" / "__init__.py").read_text("utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def test_version_has_one_source(installed, wheelhouse):
    version = _source_version()
    assert the_wheel(wheelhouse).name.startswith(f"megalint-{version}-")
    py = venv_bin(installed, "python")
    meta = run([py, "-c", "import importlib.metadata as m; print(m.version('megalint'))"], cwd=installed.parent)
    assert meta.stdout.strip() == version
    out = run([venv_bin(installed, "megalint"), "--version"], cwd=installed.parent, env=offline_pip(Path("."))).stdout
    from megalint.megatron.versions import KNOWN_VERSIONS

    assert out.startswith(f"megalint {version} ")
    for v in KNOWN_VERSIONS:
        assert v in out


def test_installed_command_lints_with_packaged_rules_and_data(installed, tmp_path):
    # A working folder with nothing of the checkout: only copies of two example scripts.
    work = tmp_path / "job"
    work.mkdir()
    for name in ("gpt_13b_multinode.sbatch", "fp8_on_a100.sh", "gpt_1b_single_node.sh"):
        shutil.copy(ROOT / "fixtures" / "examples" / name, work / name)
    env = offline_pip(Path("."))
    py = venv_bin(installed, "python")
    where = run(
        [
            py,
            "-c",
            "import megalint, megalint.rules, megalint.data; print(megalint.__file__); print(megalint.rules.__file__)",
        ],
        cwd=work,
        env=env,
    ).stdout
    assert str(ROOT) not in where and str(installed) in where

    megalint = venv_bin(installed, "megalint")
    res = run([megalint, "--output-format", "concise", "--color", "never", "."], cwd=work, env=env, check=False)
    assert res.returncode == 1, res.stderr
    # ML101 needs the flag catalogue (binding --tensor-model-parallel-size), ML201 the GPU table
    # (A100 is compute capability 8.0), and both come from the packaged rules.
    assert re.search(r"gpt_13b_multinode\.sbatch:27:36: ML101 world size 32 is not divisible", res.stdout), res.stdout
    assert re.search(r"fp8_on_a100\.sh:10:37: ML201 .*A100 80GB has 8\.0", res.stdout), res.stdout
    assert "gpt_1b_single_node.sh" not in res.stdout

    # An older Megatron version reads its own packaged flag catalogue.
    r = run(
        [megalint, "--megatron-version", "0.8", "--output-format", "concise", "gpt_13b_multinode.sbatch"],
        cwd=work,
        env=env,
        check=False,
    )
    assert r.returncode == 1 and "ML101" in r.stdout, (r.stdout, r.stderr)
    # Every shipped catalogue and extracted catalogue loads from the installed package.
    check = run(
        [
            py,
            "-c",
            """
import json
from importlib import resources
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.versions import KNOWN_VERSIONS
for v in KNOWN_VERSIONS:
    assert len(Catalogue.load(v)) > 100, v
extracted = [f for f in resources.files("megalint.data").joinpath("catalogue-extracted").iterdir() if f.name.endswith(".json")]
for f in extracted:
    json.loads(f.read_text("utf-8"))
print(len(KNOWN_VERSIONS), len(extracted))
""",
        ],
        cwd=work,
        env=env,
    )
    n_known, n_extracted = map(int, check.stdout.split())
    assert n_extracted == len(list((ROOT / "megalint" / "data" / "catalogue-extracted").glob("*.json")))

    listed = run([megalint, "rules"], cwd=work, env=env).stdout
    from megalint.engine import load_rules

    for rule in load_rules([]):
        assert re.search(rf"^{rule.code}\s+(\[[*!]\]\s+)?{re.escape(rule.name)}\s", listed, re.M), rule.code


def test_fast_suite_runs_without_the_test_extra(snapshot, wheelhouse, tmp_path_factory):
    """`pytest -m "not integration and not slow"` needs only pytest beside megalint's own
    dependencies: no hypothesis, pre-commit, ShellCheck, ruff or mypy."""
    src, _ = snapshot
    venv = tmp_path_factory.mktemp("bare-venv") / "venv"
    run([sys.executable, "-m", "venv", venv], timeout=300)
    py = venv_bin(venv, "python")
    pytest_wheels = tmp_path_factory.mktemp("pytest-wheels")
    run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "pytest", "-d", pytest_wheels])
    env = offline_pip(wheelhouse)
    env["PIP_FIND_LINKS"] = f"{wheelhouse} {pytest_wheels}"
    run([py, "-m", "pip", "install", "--quiet", the_wheel(wheelhouse), "pytest"], env=env, timeout=600)
    for extra in ("hypothesis", "pre_commit", "ruff", "mypy"):
        probe = run([py, "-c", f"import {extra}"], check=False)
        assert probe.returncode != 0, f"{extra} should not be installed here"
    res = run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not integration and not slow"],
        cwd=src,
        env=env,
        timeout=900,
        check=False,
    )
    tail = res.stdout[-3000:]
    assert res.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail
