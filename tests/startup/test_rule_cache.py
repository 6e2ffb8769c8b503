"""The packaged rules kept in the rule cache: the same rules, the same output, and an entry that is
truncated, corrupt or of another build ignored and written again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from megalint.engine import loader, rule_cache

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder, and the packaged rules read anew from it."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(folder))
    _forget()
    yield folder
    _forget()


def _forget() -> None:
    """Forget the packaged rules this process has read: the next use reads them from the cache."""
    loader._packaged_sources.cache_clear()
    loader._rules_key.cache_clear()
    loader._packaged_files.cache_clear()
    loader.packaged_rules.cache_clear()


def _entry() -> Path:
    return Path(rule_cache.entry_path(loader.packaged_rules_key()))


def _rules_json() -> list[dict]:
    return [r.to_json() for r in loader.packaged_rules()]


def _shape(files) -> list:
    """What the engine and the duplicate checks read of parsed rule files."""
    return [
        (f.path, f.errors, [(rule.to_json(), rule.examples, rule.docs, code, name) for rule, code, name in f.keys])
        for f in files
    ]


def test_cached_rules_are_the_rules_read(cache):
    read = loader.parse_packaged(loader.packaged_rule_sources())
    loader.packaged_rules()  # reads the files and writes the entry
    assert _entry().is_file()
    _forget()
    assert _shape(loader._packaged_files()) == _shape(read)  # from the entry


def test_cel_programs_are_compiled_when_their_rule_first_runs(cache):
    loader.packaged_rules()
    _forget()
    exprs = [e for r in loader.packaged_rules() for e, _ in r.exprs()]
    assert exprs and all(e._program is None for e in exprs)
    assert exprs[0].program is not None and exprs[0]._program is not None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b[:100] + bytes([b[100] ^ 0xFF]) + b[101:], id="a byte changed"),
        pytest.param(lambda b: b"", id="empty"),
        pytest.param(lambda b: b"not a cache entry\n", id="garbage"),
    ],
)
def test_a_damaged_entry_is_ignored_and_written_again(cache, damage):
    want = _rules_json()
    entry = _entry()
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    _forget()
    assert _rules_json() == want
    assert entry.read_bytes() == good


def test_an_entry_holding_something_else_is_ignored(cache):
    want = _rules_json()
    entry = _entry()
    rule_cache.write_entry(entry, ["not", "rules"])  # a valid checksum over the wrong content
    _forget()
    assert _rules_json() == want
    assert isinstance(rule_cache.read_entry(entry), tuple)


def test_an_unwritable_cache_only_costs_the_work(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot be made
    _forget()
    try:
        assert len(loader.packaged_rules()) > 100
    finally:
        _forget()


def test_the_key_follows_the_rule_files_and_megalint(monkeypatch):
    sources = loader.packaged_rule_sources()
    key = rule_cache.cache_key(sources)
    assert rule_cache.cache_key(list(sources)) == key
    path, data = sources[0]
    assert rule_cache.cache_key([(path, data + b"\n"), *sources[1:]]) != key
    assert rule_cache.cache_key(sources[1:]) != key
    monkeypatch.setattr(rule_cache, "__version__", "0.0.0-other")
    assert rule_cache.cache_key(sources) != key


def _run(cache_dir: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY")}
    env.update(MEGALINT_CACHE_DIR=str(cache_dir), COLUMNS="100", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "megalint", *argv], capture_output=True, env=env, cwd=ROOT)


def test_a_run_from_the_cache_prints_what_a_run_that_reads_the_rules_prints(tmp_path):
    scripts = sorted(str(p.relative_to(ROOT)) for p in (FIXTURES / "headline").rglob("*.sh"))[:12]
    scripts += sorted(str(p.relative_to(ROOT)) for p in (FIXTURES / "cli").rglob("*.sh"))[:4]
    assert scripts
    for fmt in ("full", "json"):
        argv = ("--isolated", "--exit-zero", "--output-format", fmt, *scripts)
        cold = _run(tmp_path / fmt, *argv)  # reads the rule files, writes the entry
        assert list((tmp_path / fmt / "rules").iterdir())
        warm = _run(tmp_path / fmt, *argv)  # reads the entry
        assert cold.returncode == warm.returncode == 0, cold.stderr
        assert cold.stdout == warm.stdout and cold.stderr == warm.stderr
        assert cold.stdout


def test_the_rule_files_read_from_disk_are_those_the_package_resources_name():
    folder = loader.packaged_rules_dir()
    assert isinstance(folder, os.PathLike)
    by_resources = [
        (f"rules/{rel}", res.read_bytes()) for res, rel in loader._rule_files(folder) if rel != loader.CODE_REGISTRY
    ]
    assert loader.packaged_rule_sources() == by_resources
    assert len(by_resources) > 100


def test_runs_that_fill_one_cache_at_once_print_the_same(tmp_path):
    # Each writes its own temporary file and renames it over the entry: none reads a half-written one.
    script = tmp_path / "job.sh"
    script.write_text("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY")}
    env.update(MEGALINT_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="100", PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "megalint", "--isolated", "--output-format", "json", str(script)]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(4)]
    outputs = [run.communicate() for run in runs]
    assert [run.returncode for run in runs] == [1] * 4
    assert len(set(outputs)) == 1
    entries = list((tmp_path / "cache" / "rules").iterdir())
    assert [e.suffix for e in entries] == [".pickle"]  # no temporary file left
    assert isinstance(rule_cache.read_entry(entries[0]), tuple)
    assert _run(tmp_path / "cache", "--isolated", "--output-format", "json", str(script)).stdout == outputs[0][0]


def _read_of(needs) -> tuple:
    return (sorted(needs.whole), sorted((root, sorted(keys)) for root, keys in needs.keys.items()))


def test_what_each_rule_reads_is_kept_in_the_entry(cache):
    """A first check reads what each rule reads from the entry, as worked out when the rules were
    read: the same as scanning the rules' expressions again, rule by rule and for all of them."""
    from megalint.engine.rule import _needs_of

    loader.packaged_rules()  # reads the files and writes the entry
    _forget()
    rules = loader.packaged_rules()
    assert all({"needs", "reads"} <= vars(r).keys() for r in rules)  # unpickled, not worked out here
    for r in rules:
        scanned = _needs_of((r,))
        assert _read_of(r.needs) == _read_of(scanned), r.code
        assert r.reads == scanned.tokens() | {"megatron"}
    assert _read_of(rules.needs) == _read_of(_needs_of(rules))
    assert rules.reads == [r.reads for r in rules]


def test_entries_no_build_used_for_a_week_go_when_an_entry_is_written(tmp_path):
    from megalint.cache_entry import DAY_NS, forget_unused, read_entry, write_entry

    folder = tmp_path / "rules"
    folder.mkdir()
    now = time.time_ns()
    ages = {
        "old.pickle": 8,  # another build's, unused for a week: removed
        "recent.pickle": 2,  # another build's, in use this week: kept
        "old.pickle.123.tmp": 2,  # a write killed two days ago: removed
        "fresh.pickle.456.tmp": 0,  # a write in progress: kept
        "notes.json": 30,  # not an entry of this kind: left alone
    }
    for name, days in ages.items():
        (folder / name).write_bytes(b"x")
        os.utime(folder / name, ns=(now - days * DAY_NS, now - days * DAY_NS))
    write_entry(folder / "mine.pickle", {"rules": 1})
    assert sorted(p.name for p in folder.iterdir()) == [
        "fresh.pickle.456.tmp",
        "mine.pickle",
        "notes.json",
        "recent.pickle",
    ]
    # An entry read is in use: its time is set again once it is a day old.
    os.utime(folder / "mine.pickle", ns=(now - 3 * DAY_NS, now - 3 * DAY_NS))
    assert read_entry(folder / "mine.pickle") == {"rules": 1}
    assert now - (folder / "mine.pickle").stat().st_mtime_ns < DAY_NS
    # A week later: the other build's entry and the write left behind go.
    assert forget_unused(folder / "mine.pickle", now + 8 * DAY_NS) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["mine.pickle", "notes.json"]


def test_what_only_a_finding_or_the_docs_read_is_unpickled_when_first_read(cache):
    import dataclasses
    import pickle

    from megalint.engine.rule import _PACKED_GROUPS, Rule

    read = [rule for f in loader.parse_packaged(loader.packaged_rule_sources()) for rule, _, _ in f.keys]
    loader.packaged_rules()  # writes the entry
    _forget()
    cached = [rule for f in loader._packaged_files() for rule, _, _ in f.keys]
    assert len(cached) == len(read) > 100
    packed = {n for names in _PACKED_GROUPS.values() for n in names}
    rule = cached[0]
    assert set(_PACKED_GROUPS) <= set(vars(rule)) and not packed & set(vars(rule))
    assert rule.message.source == read[0].message.source  # reading one field unpacks its group
    assert "message" in vars(rule) and "labels" in vars(rule) and "_packed_finding" not in vars(rule)
    assert "docs" not in vars(rule) and "_packed_docs" in vars(rule)
    # A group unpacked by another thread after this one found the field missing: the same objects.
    assert rule._unpack("_packed_finding")["message"] is rule.message
    again = pickle.loads(pickle.dumps(rule))  # a rule half unpacked is kept whole
    for before, after in zip(read, cached, strict=True):
        for f in dataclasses.fields(Rule):
            assert getattr(after, f.name) == getattr(before, f.name), (before.code, f.name)
    for f in dataclasses.fields(Rule):
        assert getattr(again, f.name) == getattr(rule, f.name)
