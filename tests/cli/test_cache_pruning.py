"""`.megalint_cache/` stays small: entries unused for a month go, the least recently used go first
past a cap, an entry read is marked in use, and a run prunes at most once a day (pruning.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from megalint import replay
from megalint.cachedir import DAY_NS, used
from megalint.checking import pruning
from megalint.checking.cache import CODE_SETS, FOLDER

from .conftest import CLEAN, ERROR
from .test_jobs_and_cache import entries, write_all

NOW = time.time_ns()


def aged(path: Path, days: float) -> Path:
    t = NOW - int(days * DAY_NS)
    os.utime(path, ns=(t, t))
    return path


def made(folder: Path, name: str, days: float) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return aged(path, days)


def test_unused_entries_and_abandoned_writes_go_the_rest_stay(tmp_path):
    cache = tmp_path / FOLDER
    keep = [made(cache, "ab/recent", 29), made(cache, f"{CODE_SETS}/set", 3), made(cache, "replay/entry", 0)]
    keep += [made(cache, "ab/.tmp-writing", 0.5), made(cache, ".gitignore", 400), made(cache, "other/file", 400)]
    gone = [made(cache, "ab/old", 31), made(cache, f"{CODE_SETS}/old", 45), made(cache, "replay/old", 90)]
    gone += [made(cache, "cd/.tmp-killed", 2), made(cache, "replay/e.123.tmp", 2)]
    assert pruning.prune(str(cache), CODE_SETS, NOW) == len(gone)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in gone)


def test_past_a_cap_the_least_recently_used_go_first(tmp_path, monkeypatch):
    monkeypatch.setitem(pruning.CAPS, "results", 3)
    cache = tmp_path / FOLDER
    files = [made(cache, f"{i:02x}/e{i}", days) for i, days in enumerate([5, 1, 9, 2, 7])]
    assert pruning.prune(str(cache), CODE_SETS, NOW) == 2
    assert [p.exists() for p in files] == [True, True, False, True, False]


def test_a_folder_is_pruned_at_most_once_a_day(tmp_path):
    cache = tmp_path / FOLDER
    made(cache, "ab/old", 40)
    assert pruning.prune(str(cache), CODE_SETS, NOW) == 1
    made(cache, "ab/old", 40)
    assert pruning.prune(str(cache), CODE_SETS, NOW + DAY_NS // 2) == 0
    assert pruning.prune(str(cache), CODE_SETS, NOW + DAY_NS + 1) == 1
    assert pruning.prune(str(tmp_path / "none"), CODE_SETS, NOW) == 0
    assert not (tmp_path / "none").exists()


def test_an_entry_read_is_marked_in_use_once_a_day(tmp_path):
    old = made(tmp_path, "old", 3)
    young = made(tmp_path, "young", 0.5)
    before = young.stat().st_mtime_ns
    used(str(old), old.stat().st_mtime_ns)
    used(str(young), before)
    assert time.time_ns() - old.stat().st_mtime_ns < DAY_NS
    assert young.stat().st_mtime_ns == before


def test_a_run_prunes_what_it_no_longer_uses_and_keeps_what_it_read(megalint, tmp_path, monkeypatch):
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    write_all(tmp_path, {"a.sh": CLEAN, "b.sh": ERROR})
    argv = ("--isolated", "--output-format", "concise", "a.sh", "b.sh")
    first = megalint(*argv, cwd=tmp_path)
    assert len(entries(tmp_path)) == 2
    for entry in entries(tmp_path):
        aged(entry, 40)
    aged(tmp_path / FOLDER / pruning.MARKER, 2)
    (tmp_path / "a.sh").write_text(CLEAN + "# edited\n", encoding="utf-8")
    again = megalint(*argv, cwd=tmp_path)
    assert (again.rc, again.out) == (first.rc, first.out)
    # b.sh's result was read (and so marked in use); a.sh's old text's result is gone.
    assert len(entries(tmp_path)) == 2
    assert all(time.time_ns() - e.stat().st_mtime_ns < DAY_NS for e in entries(tmp_path))


@pytest.mark.parametrize("days", [3, 0.5])
def test_a_replay_served_is_marked_in_use(megalint, tmp_path, monkeypatch, days):
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    monkeypatch.setattr(replay, "_enabled", True)
    monkeypatch.setattr(replay, "STARTED_NS", time.time_ns() + 60 * 10**9)
    write_all(tmp_path, {"a.sh": CLEAN})
    megalint("--isolated", "a.sh", cwd=tmp_path)
    (kept,) = (tmp_path / replay.FOLDER).iterdir()
    before = aged(kept, days).stat().st_mtime_ns
    assert replay.serve(["--isolated", "a.sh"]) == 0
    now = kept.stat().st_mtime_ns
    assert (now != before) == (days > 1)
