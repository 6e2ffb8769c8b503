"""A run over many files prints the same whether it checks them in one process or several, and
whether it works the findings out or reads them from its cache; a cache entry that does not
verify is ignored, never trusted."""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import shutil
import time
from pathlib import Path

import pytest

from megalint.checking.cache import CODE_SETS, FOLDER, MAGIC
from megalint.megatron import fork_catalogue

from .conftest import CLEAN, ERROR, INFO, WARN, Result

REPO = Path(__file__).resolve().parents[2]
FORK_TREE = REPO / "fixtures" / "forks" / "tree"
FORMATS = ("concise", "json", "full")


@pytest.fixture
def cache_on(monkeypatch):
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)


def generated(n: int, seed: int) -> dict[str, str]:
    """Scripts of our own making: a launch with parallel sizes that do or do not divide, a
    variable set in some branches, a sourced file, a flag of another version."""
    rng = random.Random(seed)
    out = {"common.sh": "NNODES=2\nexport NCCL_IB_TIMEOUT=22\n"}
    for i in range(n):
        tp, gpus = rng.choice((1, 2, 3, 4)), rng.choice((4, 8))
        lines = ["#!/bin/bash", "source ./common.sh" if rng.random() < 0.5 else "NNODES=1"]
        if rng.random() < 0.5:
            lines += ['if [ "$MODE" = big ]; then', f"  TP={tp * 2}", "else", f"  TP={tp}", "fi"]
        else:
            lines.append(f"TP={tp}")
        flags = ["--num-layers 4", "--tensor-model-parallel-size $TP"]
        if rng.random() < 0.3:
            flags.append("--no-such-flag 1")
        if rng.random() < 0.3:
            flags.append("--fp8-format hybrid")
        lines.append(f"torchrun --nnodes $NNODES --nproc_per_node {gpus} pretrain_gpt.py {' '.join(flags)}")
        out[f"gen_{i:02d}.sh"] = "\n".join(lines) + "\n"
    return out


def write_all(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")


# A launch that reads TP from env.sh when it can (TP=3 does not divide 8 GPUs), else takes 2.
SOURCES_ENV = "source ./env.sh\n" + ERROR.replace("size 3", "size ${TP:-2}")
# env.sh before it says TP=3: read (TP=2), missing, or there but not UTF-8 (not read).
ENV_BEFORE = {"read": b"TP=2\n", "missing": None, "not read": b"TP=3 # \xff\n"}


def with_env(root: Path, before: bytes | None) -> tuple[str, ...]:
    """run.sh (SOURCES_ENV) and env.sh as `before` says; the command that checks it."""
    write_all(root, {"run.sh": SOURCES_ENV})
    if before is not None:
        (root / "env.sh").write_bytes(before)
    return ("--isolated", "--output-format", "concise", "run.sh")


def fork_tree_without_its_source(root: Path) -> tuple[str, ...]:
    """A repository whose own Megatron tree defines --demo-fused-rope, at first without the tree
    (copied in by `fork_source_arrives`); the command that checks its script."""
    shutil.copytree(FORK_TREE / "examples", root / "examples")
    shutil.copy(FORK_TREE / "pretrain_gpt.py", root / "pretrain_gpt.py")
    (root / ".git").mkdir()
    return ("--output-format", "concise", "examples/run.sh")


def fork_source_arrives(root: Path) -> None:
    shutil.copytree(FORK_TREE / "megatron", root / "megatron")


def checked_again_after(megalint, argv: tuple[str, ...], root: Path, before: list[str], change) -> Result:
    """`argv` run twice (the second from the cache) finding `before`, then `change()`: the next
    run, which must be what a run without the cache prints."""
    assert megalint(*argv, cwd=root).codes == before
    assert megalint(*argv, cwd=root).codes == before
    change()
    after = megalint(*argv, cwd=root)
    assert after.out == megalint(*argv, "--no-cache", cwd=root).out
    return after


def test_fixtures_print_the_same_in_one_process_in_several_and_from_the_cache(megalint, tmp_path, cache_on):
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    for fmt in FORMATS:
        argv = ("--isolated", "--output-format", fmt, "fixtures")
        serial = megalint(*argv, "--jobs", "1", "--no-cache", cwd=tmp_path)
        parallel = megalint(*argv, "--jobs", "3", "--no-cache", cwd=tmp_path)
        filling = megalint(*argv, "--jobs", "2", cwd=tmp_path)
        cached = megalint(*argv, "--jobs", "2", cwd=tmp_path)
        assert serial.out, fmt
        for other in (parallel, filling, cached):
            assert (other.rc, other.out, other.err) == (serial.rc, serial.out, serial.err), fmt
    assert (tmp_path / FOLDER / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_scripts_print_the_same_every_way(megalint, tmp_path, cache_on, seed):
    write_all(tmp_path, {**generated(12, seed), "a.sh": CLEAN, "b.sh": INFO, "c.sh": WARN, "d.sh": ERROR})
    (tmp_path / "bad.sh").write_bytes(b"\xff\xfe not utf-8\n")
    argv = ("--isolated", "--output-format", "concise", ".", "missing.sh")
    serial = megalint(*argv, "--jobs", "1", "--no-cache", cwd=tmp_path)
    assert "missing.sh: no such file or folder" in serial.err and "bad.sh" in serial.err
    for jobs in ("1", "2", "4"):
        for _ in range(2):  # the first fills the cache, the second reads it
            again = megalint(*argv, "--jobs", jobs, cwd=tmp_path)
            assert (again.rc, again.out, again.err) == (serial.rc, serial.out, serial.err)


def test_a_changed_file_is_checked_again(megalint, tmp_path, cache_on):
    argv = with_env(tmp_path, ENV_BEFORE["read"])
    assert megalint(*argv, cwd=tmp_path).codes == []
    (tmp_path / "run.sh").write_text(ERROR, encoding="utf-8")
    assert megalint(*argv, cwd=tmp_path).codes == ["ML101"]


@pytest.mark.parametrize("before", ENV_BEFORE.values(), ids=ENV_BEFORE.keys())
def test_a_sourced_file_changed_made_or_mended_is_read(megalint, tmp_path, cache_on, before):
    # The cached result rests on what env.sh held, or on its not being read: once that changes,
    # the file is checked again.
    argv = with_env(tmp_path, before)
    assert megalint(*argv, cwd=tmp_path).codes == []
    assert megalint(*argv, cwd=tmp_path).codes == []
    (tmp_path / "env.sh").write_text("TP=3\n", encoding="utf-8")
    assert megalint(*argv, cwd=tmp_path).codes == ["ML101"]
    (tmp_path / "env.sh").unlink()
    assert megalint(*argv, cwd=tmp_path).codes == []


def test_a_forks_source_appearing_is_seen_by_a_cached_result(megalint, tmp_path, cache_on):
    argv = fork_tree_without_its_source(tmp_path)
    after = checked_again_after(megalint, argv, tmp_path, ["ML501", "ML501"], lambda: fork_source_arrives(tmp_path))
    assert after.codes == ["ML501"]


def test_an_entry_file_that_comes_to_import_a_fork_is_seen_by_a_cached_result(megalint, tmp_path, cache_on):
    # Megatron-LM's own flags only, until pretrain_gpt.py imports Pai-Megatron-Patch (not at hand:
    # its flags are then undecided, not unknown).
    (tmp_path / ".git").mkdir()
    entry = tmp_path / "pretrain_gpt.py"
    entry.write_text("from megatron.training import pretrain\n", encoding="utf-8")
    (tmp_path / "run.sh").write_text(
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --patch-tokenizer-type Demo\n", encoding="utf-8"
    )
    argv = ("--output-format", "concise", "run.sh")
    after = checked_again_after(
        megalint,
        argv,
        tmp_path,
        ["ML501"],
        lambda: entry.write_text("from megatron_patch.arguments import get_patch_args\n", encoding="utf-8"),
    )
    assert after.codes == []


def test_a_module_added_to_a_forks_features_is_seen_by_a_cached_result(megalint, tmp_path, cache_on):
    # MindSpeed-LLM's parser gathers the flags of every module under features_manager/.
    shutil.copytree(REPO / "fixtures" / "forks" / "mindspeed-llm", tmp_path / "llm")
    shutil.copytree(REPO / "fixtures" / "forks" / "mindspeed", tmp_path / "mindspeed")
    (tmp_path / ".git").mkdir()
    (tmp_path / "llm" / "examples" / "new.sh").write_text(
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --stage sft --demo-new-flag 1\n", encoding="utf-8"
    )
    argv = ("--megatron-root", "mindspeed", "--output-format", "concise", "llm/examples/new.sh")

    def add_a_feature() -> None:
        (tmp_path / "llm" / "mindspeed_llm" / "features_manager" / "demo" / "new_feature.py").write_text(
            "class NewFeature:\n"
            "    def register_args(self, parser):\n"
            '        parser.add_argument("--demo-new-flag", type=int, default=0)\n',
            encoding="utf-8",
        )
        fork_catalogue._fork_catalogue.cache_clear()  # a later run is a new process: it reads the parser again

    assert checked_again_after(megalint, argv, tmp_path, ["ML501"], add_a_feature).codes == []


def test_a_result_that_python_source_decided_is_checked_again_when_it_changes(megalint, tmp_path, cache_on):
    # The converter's own parser decides the finding: a change there does not show in the script.
    shutil.copy(REPO / "fixtures" / "tools" / "convert_weights.py", tmp_path / "convert_weights.py")
    shutil.copy(REPO / "fixtures" / "tools" / "convert.sh", tmp_path / "convert.sh")
    argv = ("--isolated", "--output-format", "concise", "convert.sh")
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501", "ML504"]
    assert len(entries(tmp_path)) == 1
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501", "ML504"]
    program = tmp_path / "convert_weights.py"
    program.write_text(
        program.read_text(encoding="utf-8").replace('"llama2", "qwen3"', '"llama2", "qwen2", "qwen3"'), encoding="utf-8"
    )
    assert megalint(*argv, cwd=tmp_path).codes == ["ML501"]


def entries(root: Path) -> list[Path]:
    """The results in the cache (not the sets of Python files they name)."""
    return sorted(p for p in (root / FOLDER).glob("??/*") if p.is_file())


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short by a writer that died
        lambda data: data[:-1] + bytes([data[-1] ^ 1]),  # one bit flipped
        lambda data: b"",  # empty
        lambda data: MAGIC + b"\0" * 32 + data[len(MAGIC) + 32 :],  # checksum not the payload's
        lambda data: b"not an entry at all",
    ],
)
def test_a_damaged_entry_is_ignored_and_rewritten(megalint, scripts, tmp_path, damage, cache_on):
    scripts("run.sh", ERROR)
    argv = ("--isolated", "--output-format", "concise", "run.sh")
    first = megalint(*argv, cwd=tmp_path)
    (entry,) = entries(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    again = megalint(*argv, cwd=tmp_path)
    assert (again.rc, again.out, again.err) == (first.rc, first.out, first.err)
    assert entry.read_bytes() == good


def test_an_entry_that_verifies_but_names_foreign_code_is_not_loaded(megalint, scripts, tmp_path, cache_on):
    """The checksum only says the entry is whole: what it may name is megalint's own types."""
    import hashlib
    import pickle

    scripts("run.sh", ERROR)
    argv = ("--isolated", "--output-format", "concise", "run.sh")
    first = megalint(*argv, cwd=tmp_path)
    (entry,) = entries(tmp_path)
    payload = pickle.dumps((os.system, {}))
    entry.write_bytes(MAGIC + hashlib.sha256(payload).digest() + payload)
    again = megalint(*argv, cwd=tmp_path)
    assert (again.rc, again.out) == (first.rc, first.out)


def test_concurrent_writers_leave_whole_entries(tmp_path):
    """Writers racing on one entry each rename a whole file into place: a reader sees one of
    them, never a mix, and no temporary file is left."""
    from concurrent.futures import ThreadPoolExecutor

    from megalint.checking.cache import ResultCache
    from megalint.checking.outcome import Outcome

    cache = ResultCache(str(tmp_path), "setup")
    outcomes = [Outcome([], {}, fixed=i, notes=[f"writer {i}"]) for i in range(16)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda o: cache.put("run.sh", "text", o), outcomes))
    got = cache.get("run.sh", "text")
    assert got is not None and got.notes == [f"writer {got.fixed}"]
    assert [p.name for p in entries(tmp_path)] == [Path(cache._path(cache.key("run.sh", "text"))).name]


def test_no_cache_writes_nothing_and_config_can_turn_it_off(megalint, scripts, tmp_path, cache_on):
    scripts("run.sh", ERROR)
    megalint("--isolated", "--no-cache", "run.sh", cwd=tmp_path)
    assert not (tmp_path / FOLDER).exists()
    scripts("megalint.toml", "cache = false\njobs = 2\n")
    megalint("run.sh", cwd=tmp_path)
    assert not (tmp_path / FOLDER).exists()


@pytest.mark.parametrize(
    ("text", "message"), [("jobs = 0\n", "`jobs` must be at least 1"), ('jobs = "2"\n', "`jobs` must be an integer")]
)
def test_a_bad_jobs_setting_is_a_configuration_error(megalint, scripts, tmp_path, text, message):
    scripts("megalint.toml", text)
    scripts("run.sh", CLEAN)
    res = megalint("run.sh", cwd=tmp_path)
    assert res.rc == 2 and message in res.err


def test_jobs_must_be_a_positive_number(megalint, scripts, tmp_path):
    scripts("run.sh", CLEAN)
    res = megalint("--isolated", "--jobs", "0", "run.sh", cwd=tmp_path)
    assert res.rc == 2 and "expected a number of processes, at least 1, not `0`" in res.err


def _refuse(what: str):
    def refuse(*args, **kwargs):
        raise AssertionError(f"{what} in a run read from the cache")

    return refuse


def test_a_clean_run_from_the_cache_loads_no_rule_and_checks_no_file(megalint, tmp_path, cache_on, monkeypatch):
    import megalint.checking.one_file as one_file
    import megalint.checking.setup as setup

    write_all(tmp_path, {"a.sh": CLEAN, "b.sh": CLEAN})
    first = megalint("--isolated", "--jobs", "1", ".", cwd=tmp_path)
    monkeypatch.setattr(setup, "load_rules", _refuse("rules loaded"))
    monkeypatch.setattr(one_file, "check_text", _refuse("a file checked"))
    again = megalint("--isolated", "--jobs", "1", ".", cwd=tmp_path)
    assert (again.rc, again.out, again.err) == (first.rc, first.out, first.err) == (0, "All checks passed.\n", "")


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_findings_from_the_cache_check_no_file(megalint, tmp_path, cache_on, monkeypatch, fmt):
    import megalint.checking.one_file as one_file

    write_all(tmp_path, {"a.sh": CLEAN, "c.sh": WARN, "d.sh": ERROR})
    argv = ("--isolated", "--output-format", fmt, "--jobs", "1", ".")
    first = megalint(*argv, cwd=tmp_path)
    monkeypatch.setattr(one_file, "check_text", _refuse("a file checked"))
    again = megalint(*argv, cwd=tmp_path)
    assert first.rc == 1 and (again.rc, again.out, again.err) == (first.rc, first.out, first.err)


def test_a_configuration_error_is_told_whatever_the_cache_holds(megalint, tmp_path, cache_on):
    write_all(tmp_path, {"a.sh": CLEAN, "d.sh": ERROR})
    (tmp_path / "megalint.toml").write_text('ignore = ["ML1"]\n', encoding="utf-8")
    assert megalint(".", cwd=tmp_path).rc == 0  # fills the cache (ML1: the error's rule ignored)
    (tmp_path / "megalint.toml").write_text('ignore = ["ML1", "NO-SUCH-RULE"]\n', encoding="utf-8")
    for _ in range(2):
        bad = megalint(".", cwd=tmp_path)
        uncached = megalint("--no-cache", ".", cwd=tmp_path)
        assert bad.rc == 2 and "megalint.toml:1:" in bad.err and "NO-SUCH-RULE" in bad.err
        assert (bad.rc, bad.out, bad.err) == (uncached.rc, uncached.out, uncached.err)


def test_the_key_of_a_setup_names_the_working_folder(tmp_path, monkeypatch):
    """A relative --megatron-root (or --rule-dir) is read from the working folder: two runs from
    two folders under one configuration do not share results."""
    from megalint.checking.run import setup_key
    from megalint.checking.setup import AnalysisOptions, Configs, Setups

    (tmp_path / "megalint.toml").write_text("", encoding="utf-8")
    setups = Setups(
        AnalysisOptions(megatron_roots=("../Megatron-LM",)), Configs(str(tmp_path / "megalint.toml"), False)
    )
    setup = setups.setup(setups.configs.for_path(str(tmp_path)))
    keys = set()
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        keys.add(setup_key(setups, setup))
    assert len(keys) == 2


def test_python_source_many_results_rest_on_is_looked_at_once_a_run(megalint, tmp_path, cache_on, monkeypatch):
    import megalint.checking.cache as cache

    shutil.copy(REPO / "fixtures" / "tools" / "convert_weights.py", tmp_path / "convert_weights.py")
    text = (REPO / "fixtures" / "tools" / "convert.sh").read_text(encoding="utf-8")
    for name in ("a.sh", "b.sh", "c.sh"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    argv = ("--isolated", "--output-format", "concise", "--jobs", "1", ".")
    first = megalint(*argv, cwd=tmp_path)
    looked: list[str] = []
    real = cache._code_digest
    monkeypatch.setattr(cache, "_code_digest", lambda path, *then: looked.append(path) or real(path, *then))
    again = megalint(*argv, cwd=tmp_path)
    assert (again.rc, again.out) == (first.rc, first.out) and first.codes.count("ML504") == 3
    assert looked and len(looked) == len(set(looked))  # the three results rest on the same files


def test_a_script_many_scripts_source_is_read_once_a_run(megalint, tmp_path, cache_on, monkeypatch):
    import megalint.checking.cache as cache

    files = {"env.sh": "TP=3\n"}
    for name in ("a.sh", "b.sh", "c.sh"):
        files[name] = "source ./env.sh\n" + ERROR.replace("size 3", "size $TP")
    write_all(tmp_path, files)
    argv = ("--isolated", "--output-format", "concise", "--jobs", "1", "a.sh", "b.sh", "c.sh")
    first = megalint(*argv, cwd=tmp_path)
    read: list[str] = []
    real = cache.decode
    monkeypatch.setattr(cache, "decode", lambda path, data: read.append(path) or real(path, data))
    again = megalint(*argv, cwd=tmp_path)
    assert (again.rc, again.out) == (first.rc, first.out) and first.codes == ["ML101"] * 3
    assert [os.path.basename(p) for p in read] == ["env.sh"]


@pytest.mark.parametrize("code", [("convert.py",), (("convert.py", "0" * 64),), 5, None])
def test_an_entry_naming_python_files_in_another_shape_is_not_trusted(tmp_path, code):
    from megalint.checking.cache import ResultCache
    from megalint.checking.outcome import Outcome

    cache = ResultCache(str(tmp_path), "setup")
    cache.put("run.sh", "text", Outcome([], {}))
    assert cache.get("run.sh", "text") is not None
    (entry,) = entries(tmp_path)
    payload = pickle.dumps((Outcome([], {}), {}, code))
    entry.write_bytes(MAGIC + hashlib.sha256(payload).digest() + payload)
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is None


def _signed(payload: bytes) -> bytes:
    return MAGIC + hashlib.sha256(payload).digest() + payload


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: _signed(pickle.dumps(((("other.py", "0" * 64),), ((1, 2, 3),)))),  # another set, whole
        lambda data: _signed(pickle.dumps(((["convert.py", "0" * 64],), ((1, 2, 3),)))),  # not (path, hash)
        lambda data: _signed(pickle.dumps(((), ()))),  # no file at all
        lambda data: _signed(pickle.dumps(pickle.loads(data[len(MAGIC) + 32 :])[0])),  # no sizes and times
    ],
)
def test_a_damaged_set_of_python_files_is_not_trusted_and_written_again(tmp_path, damage):
    """Results name the Python files they rest on by the key of a set kept once in the cache:
    a set file that does not verify, or is not the set its key names, makes no result trusted."""
    from megalint.checking.cache import ResultCache
    from megalint.checking.outcome import Outcome

    program = tmp_path / "convert.py"
    program.write_text("CHOICES = ['a']\n", encoding="utf-8")
    outcome = Outcome([], {}, code=frozenset({str(program)}))
    ResultCache(str(tmp_path), "setup").put("run.sh", "text", outcome)
    (code_set,) = (tmp_path / FOLDER / CODE_SETS).iterdir()
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is not None
    good = code_set.read_bytes()
    code_set.write_bytes(damage(good))
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is None
    ResultCache(str(tmp_path), "setup").put("run.sh", "text", outcome)  # the next run's result
    assert code_set.read_bytes() != damage(good)  # written again whole
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is not None
    program.write_text("CHOICES = ['a', 'b']\n", encoding="utf-8")
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is None


def _settled(path: Path, seconds: int = 60) -> None:
    """The file as one written `seconds` ago."""
    then = path.stat().st_mtime_ns - seconds * 1_000_000_000
    os.utime(path, ns=(then, then))


def test_a_python_file_untouched_since_it_was_hashed_is_not_read_again(tmp_path, monkeypatch):
    import megalint.checking.cache as cache

    program = tmp_path / "convert.py"
    program.write_text("CHOICES = ['a']\n", encoding="utf-8")
    _settled(program)
    outcome = cache.Outcome([], {}, code=frozenset({str(program)}))
    cache.ResultCache(str(tmp_path), "setup").put("run.sh", "text", outcome)
    read: list[str] = []
    real = cache._file_digest.__wrapped__
    monkeypatch.setattr(cache, "_file_digest", lambda path, *stat: read.append(path) or real(path, *stat))
    assert cache.ResultCache(str(tmp_path), "setup").get("run.sh", "text") is not None
    assert read == []
    program.write_text("CHOICES = ['b']\n", encoding="utf-8")  # same size, a new time
    assert cache.ResultCache(str(tmp_path), "setup").get("run.sh", "text") is None
    assert read == [str(program)]


def test_a_python_file_written_again_within_its_clocks_tick_is_read_again(tmp_path):
    """A file hashed just after it was written may be written again with the same size and time
    (a coarse clock): its size and time say nothing then, and its text is hashed again."""
    from megalint.checking.cache import ResultCache, _file_digest
    from megalint.checking.outcome import Outcome

    program = tmp_path / "convert.py"
    program.write_text("CHOICES = ['a']\n", encoding="utf-8")
    mtime = program.stat().st_mtime_ns
    ResultCache(str(tmp_path), "setup").put("run.sh", "text", Outcome([], {}, code=frozenset({str(program)})))
    program.write_text("CHOICES = ['b']\n", encoding="utf-8")
    os.utime(program, ns=(mtime, mtime))
    _file_digest.cache_clear()  # the next run is another process
    assert ResultCache(str(tmp_path), "setup").get("run.sh", "text") is None


def test_a_python_file_is_settled_by_when_its_bytes_were_read_not_by_when_a_result_was_kept(tmp_path, monkeypatch):
    """One run keeps two results resting on a file it hashed just after the file was written; the
    file is written again within the same tick before the second is kept. The second names the
    hash of the first reading, and the time of that reading: the next run reads the file again."""
    import megalint.checking.cache as cache

    program = tmp_path / "convert.py"
    program.write_text("CHOICES = ['a']\n", encoding="utf-8")
    mtime = program.stat().st_mtime_ns
    code = frozenset({str(program)})
    run = cache.ResultCache(str(tmp_path), "setup")
    run.put("a.sh", "text", cache.Outcome([], {}, code=code))
    program.write_text("CHOICES = ['b']\n", encoding="utf-8")
    os.utime(program, ns=(mtime, mtime))
    later = time.time_ns() + 10_000_000_000
    monkeypatch.setattr(cache.time, "time_ns", lambda: later)  # the second result is kept later
    other = tmp_path / "other.py"
    other.write_text("X = 1\n", encoding="utf-8")
    run.put("b.sh", "text", cache.Outcome([], {}, code=code | {str(other)}))  # another set
    cache._file_digest.cache_clear()  # the next run is another process
    assert cache.ResultCache(str(tmp_path), "setup").get("b.sh", "text") is None


def test_the_python_files_of_many_results_are_named_once(tmp_path):
    from megalint.checking.cache import ResultCache
    from megalint.checking.outcome import Outcome

    programs = [tmp_path / f"p{i}.py" for i in range(20)]
    for p in programs:
        p.write_text("X = 1\n", encoding="utf-8")
    cache = ResultCache(str(tmp_path), "setup")
    for name in ("a.sh", "b.sh", "c.sh"):
        cache.put(name, "text", Outcome([], {}, code=frozenset(str(p) for p in programs)))
    assert len(list((tmp_path / FOLDER / CODE_SETS).iterdir())) == 1
    got = ResultCache(str(tmp_path), "setup").get("b.sh", "text")
    # Named in the set only, and the outcome's again once read (as the check made it).
    assert got is not None and got.code == frozenset(str(p) for p in programs)
    assert all(str(programs[0]).encode() not in e.read_bytes() for e in entries(tmp_path))


def test_the_linter_and_settings_are_made_before_the_workers_fork(tmp_path, monkeypatch):
    """Workers forked from the run share the pipeline and each setup's settings made in it,
    instead of each importing and making its own."""
    import concurrent.futures
    import multiprocessing

    from megalint.checking.outcome import FixMode
    from megalint.checking.parallel import _results
    from megalint.checking.setup import AnalysisOptions, Configs, Setups

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the files are checked in this process where processes cannot be forked")
    configs = Configs(None, isolated=True)
    setup = Setups(AnalysisOptions(), configs).setup(configs.for_path(str(tmp_path)))
    seen = []
    real = concurrent.futures.ProcessPoolExecutor.__init__

    def pool(self, *args, **kwargs):
        seen.append(setup._settings is not None)
        real(self, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "__init__", pool)
    todo = [(CLEAN, "a.sh", setup), (WARN, "b.sh", setup)]
    results = list(_results(todo, [0, 1], FixMode(), 2))
    assert len(results) == 2 and seen == [True]
