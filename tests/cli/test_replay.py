"""A command run again on unchanged files prints what it printed, from its replay (replay.py), and
runs in full as soon as anything its output rests on changes."""

from __future__ import annotations

import ast
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from megalint import replay

from .conftest import CLEAN, ERROR, INFO, WARN, Result
from .test_jobs_and_cache import (
    ENV_BEFORE,
    fork_source_arrives,
    fork_tree_without_its_source,
    generated,
    with_env,
    write_all,
)

REPO = Path(__file__).resolve().parents[2]
FORMATS = ("concise", "json", "full", "sarif", "github", "grouped")


@pytest.fixture
def on(monkeypatch):
    """The cache on, replays kept and served, and every file settled (as if the run began later)."""
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    monkeypatch.setattr(replay, "_enabled", True)
    monkeypatch.setattr(replay, "STARTED_NS", time.time_ns() + 60 * 10**9)


@pytest.fixture
def replayed(capsys):
    """replayed(*argv) -> Result of the replay, or None when the command would run in full."""

    def serve(*argv: str) -> Result | None:
        capsys.readouterr()
        rc = replay.serve(list(argv))
        cap = capsys.readouterr()
        if rc is None:
            assert (cap.out, cap.err) == ("", "")
            return None
        return Result(rc, cap.out, cap.err)

    return serve


def same(a: Result | None, b: Result) -> bool:
    return a is not None and (a.rc, a.out, a.err) == (b.rc, b.out, b.err)


def test_every_fixture_replays_byte_identical_in_every_format(megalint, replayed, tmp_path, on):
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "fixtures").rglob("*.sh"))
    assert len(files) > 100
    for fmt in FORMATS:
        argv = ("--isolated", "--output-format", fmt, *files)
        first = megalint(*argv, cwd=tmp_path)
        assert first.out and first.rc == 1, fmt
        assert same(replayed(*argv), first), fmt
        # The replay of a run that was itself read from the cache of results is that run's too.
        assert same(replayed(*argv), megalint(*argv, cwd=tmp_path)), fmt


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_scripts_replay_byte_identical_one_by_one_and_together(megalint, replayed, tmp_path, on, seed):
    write_all(tmp_path, {**generated(12, seed), "a.sh": CLEAN, "b.sh": INFO, "c.sh": WARN, "d.sh": ERROR})
    names = sorted(p.name for p in tmp_path.glob("*.sh") if p.name != "common.sh")
    rng = random.Random(seed)
    for argv in [("--output-format", "concise", *names), *(("--isolated", name) for name in rng.sample(names, 5))]:
        first = megalint(*argv, cwd=tmp_path)
        assert same(replayed(*argv), first)
        assert same(replayed(*argv), megalint(*argv, "--no-cache", cwd=tmp_path))


def test_a_replay_imports_no_part_of_the_linter(megalint, tmp_path, on, monkeypatch):
    """Served from the entry alone: the cache of results is not even looked at."""
    write_all(tmp_path, {"run.sh": ERROR})
    first = megalint("--isolated", "run.sh", cwd=tmp_path)
    code = (
        "import sys\n"
        "from megalint import replay\n"
        "replay._enabled = True\n"
        "rc = replay.serve(['--isolated', 'run.sh'])\n"
        "heavy = [m for m in sys.modules if m.startswith(('megalint.checking', 'megalint.config', 'megalint.output'))]\n"
        "print(rc, heavy, file=sys.stderr)\n"
    )
    # The megalint this process runs (a checkout's, or an installed wheel's): another build has other replays.
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(Path(replay.__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout == first.out
    assert done.stderr.splitlines()[-1] == "1 []"


def test_a_changed_script_or_its_python_is_run_in_full(megalint, replayed, tmp_path, on):
    argv = with_env(tmp_path, ENV_BEFORE["read"])
    assert megalint(*argv, cwd=tmp_path).codes == []
    assert replayed(*argv) is not None
    (tmp_path / "run.sh").write_text(CLEAN, encoding="utf-8")
    assert replayed(*argv) is None
    # The converter's own parser decides its findings: a change there is a change of the result.
    shutil.copy(REPO / "fixtures" / "tools" / "convert_weights.py", tmp_path / "convert_weights.py")
    shutil.copy(REPO / "fixtures" / "tools" / "convert.sh", tmp_path / "convert.sh")
    argv = ("--isolated", "--output-format", "concise", "convert.sh")
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501", "ML504"]
    assert replayed(*argv).codes == ["ML501", "ML504"]
    program = tmp_path / "convert_weights.py"
    program.write_text(program.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert replayed(*argv) is None


@pytest.mark.parametrize("before", ENV_BEFORE.values(), ids=ENV_BEFORE.keys())
def test_a_sourced_file_changed_made_or_mended_is_run_in_full(megalint, replayed, tmp_path, on, before):
    # The replayed findings rest on what env.sh held, or on its not being read: once that
    # changes, they are another run's.
    argv = with_env(tmp_path, before)
    assert megalint(*argv, cwd=tmp_path).codes == []
    assert replayed(*argv) is not None
    (tmp_path / "env.sh").write_text("TP=3\n", encoding="utf-8")
    assert replayed(*argv) is None
    assert megalint(*argv, cwd=tmp_path).codes == ["ML101"]
    assert replayed(*argv).codes == ["ML101"]
    (tmp_path / "env.sh").unlink()
    assert replayed(*argv) is None


def test_a_forks_source_appearing_beside_the_script_is_run_in_full(megalint, replayed, tmp_path, on):
    argv = fork_tree_without_its_source(tmp_path)
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501", "ML501"]
    assert replayed(*argv) is not None
    fork_source_arrives(tmp_path)
    assert replayed(*argv) is None
    after = megalint(*argv, cwd=tmp_path)
    assert after.codes == ["ML501"]
    assert same(after, megalint(*argv, "--no-cache", cwd=tmp_path))
    assert same(replayed(*argv), after)


def test_a_python_file_from_the_cache_of_results_is_named_by_the_replay_too(megalint, replayed, tmp_path, on):
    """A run that read its result from the cache of results knows the Python files it rests on."""
    shutil.copy(REPO / "fixtures" / "tools" / "convert_weights.py", tmp_path / "convert_weights.py")
    shutil.copy(REPO / "fixtures" / "tools" / "convert.sh", tmp_path / "convert.sh")
    megalint("--isolated", "convert.sh", cwd=tmp_path)  # fills the cache of results
    argv = ("--isolated", "--output-format", "concise", "convert.sh")  # another command: its own replay
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501", "ML504"]
    assert replayed(*argv) is not None
    program = tmp_path / "convert_weights.py"
    program.write_text(program.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert replayed(*argv) is None


@pytest.mark.parametrize("where", ["", "sub/", "sub/deeper/"])
@pytest.mark.parametrize("name", ["megalint.toml", ".megalint.toml", "pyproject.toml"])
def test_a_configuration_file_appearing_anywhere_it_could_apply_is_run_in_full(
    megalint, replayed, tmp_path, on, where, name
):
    write_all(tmp_path, {"x": ""})
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "run.sh").write_text(ERROR, encoding="utf-8")
    argv = ("--output-format", "concise", "sub/deeper/run.sh")
    assert megalint(*argv, cwd=tmp_path).codes == ["ML101"]
    assert replayed(*argv) is not None
    text = '[tool.megalint]\nignore = ["ML101"]\n' if name == "pyproject.toml" else 'ignore = ["ML101"]\n'
    (tmp_path / where / name).write_text(text, encoding="utf-8")
    assert replayed(*argv) is None
    assert megalint(*argv, cwd=tmp_path).codes == []


def test_a_changed_configuration_or_a_new_repository_root_is_run_in_full(megalint, replayed, tmp_path, on):
    write_all(tmp_path, {"run.sh": ERROR, "megalint.toml": 'ignore = ["ML001"]\n'})
    argv = ("--output-format", "github", "run.sh")
    megalint(*argv, cwd=tmp_path)
    assert replayed(*argv) is not None
    (tmp_path / "megalint.toml").write_text('ignore = ["ML101"]\n', encoding="utf-8")
    assert replayed(*argv) is None
    megalint(*argv, cwd=tmp_path)
    assert replayed(*argv) is not None
    (tmp_path / ".git").mkdir()  # CI reports name paths from the repository's root
    assert replayed(*argv) is None


@pytest.mark.parametrize(
    "variable, value", [("COLUMNS", "60"), ("NO_COLOR", "1"), ("FORCE_COLOR", "1"), ("GITHUB_WORKSPACE", "/")]
)
def test_an_environment_megalint_reads_is_part_of_the_command(
    megalint, replayed, tmp_path, on, monkeypatch, variable, value
):
    write_all(tmp_path, {"run.sh": ERROR})
    argv = ("--isolated", "run.sh")
    megalint(*argv, cwd=tmp_path)
    assert replayed(*argv) is not None
    before = os.environ.get(variable)
    monkeypatch.setenv(variable, value)
    assert replayed(*argv) is None
    if before is None:
        monkeypatch.delenv(variable)
    else:
        monkeypatch.setenv(variable, before)
    monkeypatch.setenv("SOMETHING_ELSE", "1")  # not read by megalint: the same command
    assert replayed(*argv) is not None


def test_a_file_changed_just_before_the_run_keeps_no_replay(megalint, replayed, tmp_path, on, monkeypatch):
    """It may have been read before or after a change within its clock's tick: not trusted."""
    write_all(tmp_path, {"run.sh": ERROR})
    monkeypatch.setattr(replay, "STARTED_NS", time.time_ns())
    megalint("--isolated", "run.sh", cwd=tmp_path)
    assert replayed("--isolated", "run.sh") is None
    assert not (tmp_path / replay.FOLDER).exists() or not any((tmp_path / replay.FOLDER).iterdir())


@pytest.mark.parametrize(
    "extra",
    [
        ("--fix",),
        ("--diff",),
        ("--unsafe-fixes",),
        ("--no-cache",),
        ("--output-format", "json:report.json"),
        ("--rule-dir", "rules"),
        (".",),
        ("-",),
    ],
)
def test_a_run_that_writes_or_reads_more_than_its_report_keeps_no_replay(megalint, tmp_path, on, extra):
    write_all(tmp_path, {"run.sh": ERROR})
    (tmp_path / "rules").mkdir()
    megalint("--isolated", *extra, "run.sh", cwd=tmp_path, stdin=ERROR)
    assert not (tmp_path / replay.FOLDER).exists()


def test_a_step_summary_or_a_cache_turned_off_keeps_no_replay(megalint, replayed, tmp_path, on, monkeypatch):
    write_all(tmp_path, {"run.sh": ERROR, "megalint.toml": "cache = false\n"})
    megalint("run.sh", cwd=tmp_path)
    assert not (tmp_path / ".megalint_cache").exists()
    (tmp_path / "megalint.toml").unlink()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    megalint("run.sh", cwd=tmp_path)
    assert not (tmp_path / replay.FOLDER).exists()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    megalint("run.sh", cwd=tmp_path)
    assert replayed("run.sh") is not None
    monkeypatch.setenv("MEGALINT_NO_CACHE", "1")
    assert replayed("run.sh") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),
        lambda data: b"",
        lambda data: replay.MAGIC + b"\0" * 32 + data[len(replay.MAGIC) + 32 :],
        lambda data: b"not an entry at all",
    ],
)
def test_a_damaged_entry_is_not_trusted_and_is_written_again(megalint, replayed, tmp_path, on, damage):
    write_all(tmp_path, {"run.sh": ERROR})
    first = megalint("--isolated", "run.sh", cwd=tmp_path)
    (entry,) = (tmp_path / replay.FOLDER).iterdir()
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    assert replayed("--isolated", "run.sh") is None
    assert same(megalint("--isolated", "run.sh", cwd=tmp_path), first)
    assert same(replayed("--isolated", "run.sh"), first)


@pytest.mark.parametrize(
    "held",
    [
        ((("run.sh", True, "not a state"),), ((1, "x"),), 0),
        ((), ((3, "x"),), 0),
        ((), ((1, b"bytes"),), 0),
        ((), (), "0"),
        ((), ()),
        [(), (), 0],
    ],
)
def test_an_entry_that_verifies_but_has_another_shape_is_not_trusted(tmp_path, on, monkeypatch, held):
    import marshal
    from _blake2 import blake2b

    monkeypatch.chdir(tmp_path)
    path = Path(replay.entry_path(["run.sh"]))
    path.parent.mkdir(parents=True)
    payload = marshal.dumps(held)
    path.write_bytes(replay.MAGIC + blake2b(payload, digest_size=32).digest() + payload)
    assert replay.serve(["run.sh"]) is None


def test_concurrent_runs_leave_whole_entries(megalint, replayed, tmp_path, on):
    write_all(tmp_path, {"run.sh": ERROR})
    first = megalint("--isolated", "run.sh", cwd=tmp_path)
    (entry,) = (tmp_path / replay.FOLDER).iterdir()
    # A second writer renames its own temporary file into place: a reader sees one whole entry.
    for _ in range(3):
        megalint("--isolated", "run.sh", cwd=tmp_path)
        assert [p.name for p in (tmp_path / replay.FOLDER).iterdir()] == [entry.name]
        assert same(replayed("--isolated", "run.sh"), first)


def _environment_reads() -> dict[str, set[str]]:
    """Each module of the package that reads the process's environment, and the names it reads
    (the string constants of that module that look like a variable's name, but an option's
    metavar): more than it reads, never less."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / "megalint").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "environ" not in text and "getenv(" not in text:
            continue
        tree = ast.parse(text)
        # `os.environ`, or a mapping handed down as `environ` (output/paths.py).
        reads = any(
            (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"))
            or (isinstance(node, ast.Name) and node.id == "environ")
            or (isinstance(node, ast.arg) and node.arg == "environ")
            for node in ast.walk(tree)
        )
        if not reads:
            continue
        # A command line option's metavar is a name of its own, not a variable's.
        metavars = {id(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "metavar"}
        names = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and id(node) not in metavars
            and isinstance(node.value, str)
            and len(node.value) > 1
            and node.value.replace("_", "").isalnum()
            and node.value.isupper()
        }
        found[str(path.relative_to(REPO))] = names
    return found


def test_every_environment_variable_megalint_reads_is_part_of_a_replays_key():
    reads = _environment_reads()
    assert {"megalint/output/common.py", "megalint/output/paths.py", "megalint/cli/check.py"} <= set(reads)
    for module, names in reads.items():
        for name in names:
            assert name in replay.ENV_NAMES or name.startswith(replay.ENV_PREFIXES), (module, name)
