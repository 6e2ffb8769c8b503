"""What a check asks the file system is kept with its answers (probes.py), including for work a
run remembers from one file to the next."""

from __future__ import annotations

import stat

from megalint import probes


def test_answers_are_kept_by_absolute_path_and_kind(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f").write_text("x", encoding="utf-8")
    (tmp_path / "d").mkdir()
    with probes.recorded() as asked:
        assert probes.is_file("f") and not probes.is_dir("f")
        assert probes.is_dir(tmp_path / "d") and probes.exists("d")
        assert not probes.exists("gone") and not probes.is_file("bad\0name")
    assert asked == {
        str(tmp_path / "f"): stat.S_IFREG,
        str(tmp_path / "d"): stat.S_IFDIR,
        str(tmp_path / "gone"): 0,
        str(tmp_path / "bad\0name"): 0,
    }
    assert probes.unchanged(asked)
    (tmp_path / "gone").write_text("", encoding="utf-8")
    assert not probes.unchanged(asked)


def test_a_recording_inside_another_gives_its_answers_to_both(tmp_path):
    with probes.recorded() as outer:
        with probes.recorded() as inner:
            probes.exists(tmp_path / "a")
        probes.exists(tmp_path / "b")
    assert set(inner) == {str(tmp_path / "a")}
    assert set(outer) == {str(tmp_path / "a"), str(tmp_path / "b")}
    probes.exists(tmp_path / "c")  # nothing is recording: nothing kept
    assert set(outer) == {str(tmp_path / "a"), str(tmp_path / "b")}


def test_remembered_work_gives_its_answers_to_every_later_check(tmp_path):
    calls = []

    @probes.remembered(maxsize=4)
    def look(name: str) -> bool:
        calls.append(name)
        return probes.is_dir(tmp_path / name)

    with probes.recorded() as first:
        assert not look("x")
    with probes.recorded() as second:
        assert not look("x")
    assert calls == ["x"]
    assert first == second == {str(tmp_path / "x"): 0}


def test_a_run_told_two_answers_for_one_path_trusts_neither():
    run: dict[str, int] = {}
    for kind in (0, stat.S_IFREG, stat.S_IFREG):
        probes.gather(run, {"/p": kind, f"/q{kind}": kind})
    assert run == {"/p": -1, "/q0": 0, f"/q{stat.S_IFREG}": stat.S_IFREG}
    assert not probes.unchanged({"/p": -1}, lambda path: 0)


def test_a_folders_python_files_are_asked_by_their_names(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("", encoding="utf-8")
    with probes.recorded() as asked:
        assert probes.py_files(tmp_path / "pkg") == [tmp_path / "pkg" / "a.py"]
    assert probes.unchanged(asked)
    (tmp_path / "pkg" / "notes.txt").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "a.py").write_text("changed", encoding="utf-8")  # its text: the files read say
    assert probes.unchanged(asked)
    (tmp_path / "pkg" / "sub" / "b.py").write_text("", encoding="utf-8")
    assert not probes.unchanged(asked)


def test_work_done_once_per_check_is_not_kept_past_it(tmp_path):
    calls = []

    @probes.once_per_check
    def look(name: str) -> bool:
        calls.append(name)
        return probes.exists(tmp_path / name)

    with probes.one_check():
        assert not look("x") and not look("x") and not look("y")
    assert calls == ["x", "y"]
    (tmp_path / "x").write_text("", encoding="utf-8")
    with probes.one_check(), probes.recorded() as asked:
        assert look("x")  # another check: the file is looked at again
    assert calls == ["x", "y", "x"] and asked == {str(tmp_path / "x"): stat.S_IFREG}
    look("x")
    look("x")  # outside a check: nothing kept
    assert calls == ["x", "y", "x", "x", "x"]


def test_work_done_once_per_run_tells_each_check_its_answers(tmp_path):
    calls = []

    @probes.once_per_run
    def look(name: str) -> bool:
        calls.append(name)
        return probes.exists(tmp_path / name)

    with probes.one_run():
        with probes.recorded() as first:
            assert not look("x")
        (tmp_path / "x").write_text("", encoding="utf-8")
        with probes.recorded() as second:
            assert not look("x")  # the run's files as they were when it looked
        assert calls == ["x"]
        # The second check rests on the same answer: a cache entry made from it is not trusted now.
        assert second == first == {str(tmp_path / "x"): 0}
        assert not probes.unchanged(second)
    with probes.one_run():
        assert look("x")  # the next run looks again
    assert calls == ["x", "x"]
    look("x")
    look("x")  # outside a run: nothing kept
    assert calls == ["x", "x", "x", "x"]


def test_runs_nest_each_with_what_it_keeps():
    assert probes._run is None
    with probes.one_run():
        outer = probes._run
        with probes.one_run():
            assert probes._run == {} and probes._run is not outer
        assert probes._run is outer
    assert probes._run is None

    @probes.one_run()  # as checking/run.py decorates a run
    def kept_by_a_run() -> object:
        return probes._run

    first, second = kept_by_a_run(), kept_by_a_run()
    assert first == {} and second == {} and first is not second and probes._run is None
