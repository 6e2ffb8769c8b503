"""What a command imports: nothing it does not use. Each case runs in a fresh interpreter and
names the modules it finds in `sys.modules` that it should not have imported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.startup.child import ROOT, child_env

CLEAN = "#!/bin/bash\nset -euo pipefail\necho hello\n"
LAUNCH = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"

# Read only to check a user's rule files or configuration, or by one output format or option.
THIRD_PARTY = ("ruamel", "yaml", "jsonschema", "libcst", "pathspec", "cel.cli", "typer", "prompt_toolkit", "pygments")
PIPELINE = ("megalint.pipeline", "megalint.engine.evaluate", "megalint.shell.parse", "tree_sitter", "cel", "rich")

_PROBE = """
import json, sys
from megalint.cli import main
sys.stdout = open({out!r}, "w")
rc = main(sys.argv[1:])
sys.stdout.close()
sys.stdout = sys.__stdout__
print(json.dumps({{"rc": rc, "modules": sorted(sys.modules)}}))
"""


def _modules(tmp_path: Path, *argv: str) -> set[str]:
    env = child_env(tmp_path / "cache")
    probe = _PROBE.format(out=str(tmp_path / "out.txt"))
    run = lambda: subprocess.run(  # noqa: E731
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    run()  # the first run of a cache folder reads the packaged rules: the second is the usual run
    return set(json.loads(run().stdout)["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for n in names if m == n or m.startswith(n + "."))


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_imports_almost_nothing(tmp_path, flag):
    modules = _modules(tmp_path, flag)
    assert _loaded(modules, THIRD_PARTY + PIPELINE + ("argparse", "dataclasses", "megalint.engine")) == []


def test_help_imports_no_pipeline_configuration_or_output(tmp_path):
    modules = _modules(tmp_path, "--help") - _bare(tmp_path, "json")
    checking = ("megalint.engine", "megalint.checking", "megalint.config", "megalint.discovery", "megalint.output")
    assert _loaded(modules, THIRD_PARTY + PIPELINE + checking + ("dataclasses", "typing")) == []


def _bare(tmp_path: Path, *imported: str) -> set[str]:
    """What the interpreter imports before megalint runs (site, a `.pth` file that imports typing),
    with what the probe itself imports: none of it is megalint's."""
    bare = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(('sys', *imported))}; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        env=child_env(tmp_path / "cache"),
        cwd=tmp_path,
        check=True,
    )
    return set(bare.stdout.split())


def test_a_clean_report_imports_no_rich(tmp_path):
    (tmp_path / "clean.sh").write_text(CLEAN)
    modules = _modules(tmp_path, "--isolated", "--jobs", "1", "clean.sh")
    assert _loaded(modules, ("rich",)) == []


@pytest.mark.parametrize("fmt", ["full", "json", "concise"])
def test_a_run_imports_only_what_it_uses(tmp_path, fmt):
    (tmp_path / "clean.sh").write_text(CLEAN)
    (tmp_path / "launch.sh").write_text(LAUNCH)
    # One process: with a pool the rules run in its workers, whose imports the probe does not see.
    modules = _modules(tmp_path, "--isolated", "--jobs", "1", "--output-format", fmt, "clean.sh", "launch.sh")
    assert _loaded(modules, THIRD_PARTY) == []
    # rich only to draw the code frames of the full format; CEL's compiled module, never its command line
    assert bool(_loaded(modules, ("rich",))) == (fmt == "full")
    assert "cel.cel" in modules
    # The packaged files are found by their packages' folders (packaged.py), not importlib.resources'
    # readers (which an interpreter's own start-up may import: a `.pth` file of its site-packages).
    readers = ("zipfile", "importlib.readers", "importlib.resources.readers")
    assert _loaded(modules - _bare(tmp_path, "json"), readers) == []


# Standard modules a check never needs, each costing a first check about a millisecond or more:
# OpenSSL's hashes (digests.py takes CPython's own), shutil and the compression modules (argparse
# imports them to measure the terminal), tempfile and random (an entry is written without it),
# importlib.resources (tree-sitter-bash's package imports it for files megalint does not read),
# difflib (only to suggest a name), zipfile (only to read a wheel).
UNNEEDED = ("_hashlib", "shutil", "bz2", "lzma", "tempfile", "random", "importlib.resources", "difflib", "zipfile")


@pytest.mark.parametrize("script", [CLEAN, LAUNCH], ids=["clean", "launch"])
def test_a_first_check_imports_no_standard_module_it_does_not_need(tmp_path, script):
    # The caches on, as a user runs it: a run of another script first fills the cache folder
    # (the packaged rules, the methods of megalint's classes); then this script's first check,
    # which writes its results to the cache of results.
    env = child_env(tmp_path / "cache", caching=True)
    (tmp_path / "other.sh").write_text(script.replace("hello", "other").replace("--num-layers 2", "--num-layers 4"))
    (tmp_path / "run.sh").write_text(script)
    for name in ("other.sh", "run.sh"):
        probe = _PROBE.format(out=str(tmp_path / "out.txt"))
        done = subprocess.run(
            [sys.executable, "-c", probe, "--isolated", "--jobs", "1", name],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=True,
        )
    modules = set(json.loads(done.stdout)["modules"]) - _bare(tmp_path, "json")
    assert "megalint.pipeline" in modules  # checked, not answered from a cache
    assert len(list((tmp_path / ".megalint_cache").glob("??/*"))) == 2
    assert _loaded(modules, UNNEEDED) == []


@pytest.mark.parametrize(
    "script",
    [
        "clean.sh",
        "launch.sh",
        "fixtures/forks/tree/examples/run.sh",
        "fixtures/forks/deepspeed/examples_deepspeed/run.sh",
    ],
)
def test_a_first_check_imports_no_pathlib(tmp_path, script):
    # pathlib imports urllib.parse, and it ipaddress (about 3 ms): the packaged folders, the cache
    # entries and a launch's fork and Megatron tree (its catalogue from the extraction cache) are
    # named through os.path (packaged.Folder, megatron/forks.py). Run without `site` (its packages
    # on the path instead): an interpreter's own `.pth` files (an editable install's finder)
    # may import pathlib first. The first run fills the caches; the second is a first check.
    import site

    env = child_env(tmp_path / "cache", caching=True)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *site.getsitepackages(), site.getusersitepackages()])
    (tmp_path / "clean.sh").write_text(CLEAN)
    (tmp_path / "launch.sh").write_text(LAUNCH)
    path = script if script in ("clean.sh", "launch.sh") else str(ROOT / script)
    for _ in range(2):
        done = subprocess.run(
            [
                sys.executable,
                "-S",
                "-c",
                _PROBE.format(out=str(tmp_path / "out.txt")),
                "--isolated",
                "--no-cache",
                path,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=True,
        )
    modules = set(json.loads(done.stdout)["modules"])
    assert "megalint.pipeline" in modules  # checked, not answered from a cache
    if script.startswith("fixtures/"):
        assert "megalint.megatron.fork_catalogue" in modules  # the tree's catalogue, from the cache
    assert _loaded(modules, ("pathlib", "urllib.parse", "ipaddress")) == []


# What only a launch needs: its binding against a catalogue, the forks' parsers, the GPU and the memory model.
BINDING = (
    "megalint.pipeline.launches",
    "megalint.megatron.bind",
    "megalint.megatron.bound",
    "megalint.megatron.catalogue",
    "megalint.megatron.launch_parser",
    "megalint.megatron.forks",
    "megalint.megatron.fork_catalogue",
    "megalint.megatron.derived",
    "megalint.hardware",
    "megalint.memory",
    "megalint.rulecontext.launch",
)


@pytest.mark.parametrize("fmt", ["full", "json"])
def test_a_script_without_a_launch_imports_no_binding(tmp_path, fmt):
    (tmp_path / "clean.sh").write_text(CLEAN)
    # Without the result cache: a cached result would run no pipeline at all.
    modules = _modules(tmp_path, "--isolated", "--no-cache", "--output-format", fmt, "clean.sh")
    assert "megalint.pipeline" in modules
    assert _loaded(modules, BINDING) == []


def test_a_launch_imports_the_binding(tmp_path):
    (tmp_path / "launch.sh").write_text(LAUNCH)
    modules = _modules(tmp_path, "--isolated", "--no-cache", "launch.sh")
    assert set(_loaded(modules, BINDING)) >= {"megalint.pipeline.launches", "megalint.megatron.catalogue"}


def test_excludes_import_pathspec(tmp_path):
    (tmp_path / "clean.sh").write_text(CLEAN)
    modules = _modules(tmp_path, "--isolated", "--exclude", "skip/", ".")
    assert "pathspec" in modules


@pytest.mark.parametrize(
    "script", ["fixtures/forks/tree/examples/run.sh", "fixtures/forks/deepspeed/examples_deepspeed/run.sh"]
)
def test_a_forks_catalogue_from_the_extraction_cache_needs_no_libcst(tmp_path, script):
    # The first run reads the tree's parser with libcst and caches it; the second reads the cache.
    modules = _modules(tmp_path, "--isolated", "--output-format", "json", str(ROOT / script))
    assert _loaded(modules, ("libcst",)) == []
    assert "megalint.megatron.fork_catalogue" in modules


def _cached_runs(tmp_path: Path, *argv: str) -> tuple[str, str, set[str]]:
    """Two runs with the cache of results on: (the first's report, the second's, what the second imported)."""
    env = child_env(tmp_path / "cache", caching=True)
    reports = []
    modules: set[str] = set()
    for n in range(2):
        out = tmp_path / f"out{n}.txt"
        probe = _PROBE.format(out=str(out))
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        reports.append(out.read_text())
        modules = set(json.loads(done.stdout)["modules"])
    return reports[0], reports[1], modules


# What checking a file needs and a report read from the cache does not: the linter itself. (The
# rule loader is imported in this checkout all the same, to name the packaged rules by their
# files: an installed wheel names them by its stamp, tests/startup/test_packaged_rules_key.py.)
LINTER = PIPELINE + (
    "megalint.checking.one_file",
    "megalint.shell.interp",
    "megalint.megatron.bind",
    "megalint.rulecontext",
)


def test_a_clean_run_from_the_cache_imports_no_linter_and_loads_no_rule(tmp_path):
    (tmp_path / "clean.sh").write_text(CLEAN)
    first, second, modules = _cached_runs(tmp_path, "--jobs", "1", "clean.sh")
    assert second == first == "All checks passed.\n"
    assert (tmp_path / ".megalint_cache").is_dir()
    assert _loaded(modules, THIRD_PARTY + LINTER) == []


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif"])
def test_findings_from_the_cache_import_no_linter(tmp_path, fmt):
    (tmp_path / "clean.sh").write_text(CLEAN)
    (tmp_path / "launch.sh").write_text(LAUNCH)
    first, second, modules = _cached_runs(tmp_path, "--jobs", "1", "--output-format", fmt, "clean.sh", "launch.sh")
    assert "ML101" in first and second == first
    # The report names its rules (their links, SARIF's list of rules): the rules are loaded from
    # the rule cache, but no script is parsed or bound.
    assert (
        _loaded(modules, ("megalint.pipeline", "megalint.checking.one_file", "megalint.shell.interp", "tree_sitter"))
        == []
    )


_RUN_PROBE = """
import json, os, sys
from megalint import replay
replay.STARTED_NS += 60 * 10**9  # the script, written just now, counts as settled
exit_now = os._exit
def exit_(status):
    with open({modules!r}, "w") as fh:
        json.dump(sorted(sys.modules), fh)
    exit_now(status)
os._exit = exit_
sys.argv = ["megalint", *sys.argv[1:]]
from megalint.cli import run
run()
"""


@pytest.mark.parametrize("fmt", ["full", "json"])
def test_a_replayed_run_imports_nothing_of_the_check(tmp_path, fmt):
    """The command as a pre-commit hook runs it again on an unchanged file: its replay (replay.py)."""
    (tmp_path / "launch.sh").write_text(LAUNCH)
    env = child_env(tmp_path / "cache", caching=True)
    runs = []
    for n in range(3):  # the first fills the cache of results and keeps the replay
        probe = _RUN_PROBE.format(modules=str(tmp_path / f"modules{n}.json"))
        done = subprocess.run(
            [sys.executable, "-c", probe, "--output-format", fmt, "launch.sh"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        runs.append((done.returncode, done.stdout, done.stderr))
    assert runs[0][0] == 1 and "ML101" in runs[0][1]
    assert runs[2] == runs[1] == runs[0]
    modules = set(json.loads((tmp_path / "modules2.json").read_text())) - _bare(tmp_path)
    heavy = ("argparse", "dataclasses", "typing", "pickle", "hashlib", "megalint.checking", "megalint.config")
    assert _loaded(modules, THIRD_PARTY + LINTER + heavy + ("megalint.output", "megalint.diagnostics")) == []


def test_an_entry_points_own_flags_from_the_extraction_cache_need_no_libcst(tmp_path):
    """tools/serve.py adds --port through `extra_args_provider`: read with libcst once, then kept."""
    shutil.copytree(ROOT / "fixtures" / "entry-provider", tmp_path / "tree")
    modules = _modules(tmp_path, "--isolated", "--no-cache", "--output-format", "concise", "tree/examples/serve.sh")
    assert _loaded(modules, ("libcst",)) == []
    assert "megalint.megatron.entry_arguments" not in modules


def test_an_edited_entry_point_is_read_again_and_its_cached_results_are_not_trusted(tmp_path):
    shutil.copytree(ROOT / "fixtures" / "entry-provider", tmp_path / "tree")
    env = child_env(tmp_path / "cache", caching=True)

    def codes() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "megalint", "--isolated", "--output-format", "concise", "tree/examples/serve.sh"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        return [line.split(": ", 1)[1].split()[0] for line in done.stdout.splitlines() if ": ML" in line]

    assert codes() == codes() == ["ML501"]  # the misspelt --prot; the second from the caches
    serve = tmp_path / "tree" / "tools" / "serve.py"
    line = '    group.add_argument("--port", type=int, default=5000)\n'
    serve.write_text(serve.read_text().replace(line, line + line.replace("--port", "--prot")))
    assert codes() == []


@pytest.mark.parametrize("columns", [None, "100", "30", "0", "wide"])
def test_the_help_is_as_wide_as_argparse_makes_it(monkeypatch, columns):
    # The width argparse takes from shutil, taken without it (cli/check.py).
    import argparse

    from megalint.cli import check

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert check.terminal_columns() == shutil.get_terminal_size().columns
    assert check._Formatter("megalint")._width == argparse.RawDescriptionHelpFormatter("megalint")._width
    ours = check.build_parser().format_help()
    monkeypatch.setattr(check, "_Formatter", argparse.RawDescriptionHelpFormatter)
    assert ours == check.build_parser().format_help()
