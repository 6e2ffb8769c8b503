"""A `source` the evaluator could not follow is reported as data (ScriptFacts.unread_sources),
each with the note that tells the user, which stays among the notes as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from megalint.shell.analyze import analyze_file
from megalint.shell.facts import ScriptFacts, UnreadReason, UnreadSource
from megalint.shell.interp.state import MAX_SOURCE_DEPTH


def _analyze(tmp_path: Path, main: str, **files: str | bytes) -> ScriptFacts:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    (tmp_path / "train.sh").write_text(main)
    return analyze_file(str(tmp_path / "train.sh"))


def _only(facts: ScriptFacts) -> UnreadSource:
    (unread,) = facts.unread_sources
    assert unread.note in facts.notes
    return unread


def test_a_path_not_known_statically(tmp_path: Path) -> None:
    unread = _only(_analyze(tmp_path, 'source "$CONFIG_DIR/env.sh"\n'))
    assert unread.reason is UnreadReason.UNKNOWN_PATH
    assert unread.path == "…/env.sh"
    assert (unread.span.start_line, unread.span.start_col) == (1, 1)
    assert unread.note.endswith("its variables are not read")


def test_a_file_not_found(tmp_path: Path) -> None:
    unread = _only(_analyze(tmp_path, "X=1\n. ./missing.sh\n"))
    assert (unread.reason, unread.path, unread.span.start_line) == (UnreadReason.NOT_FOUND, "./missing.sh", 2)
    assert unread.file is None
    assert "not found" in unread.note


def test_a_file_outside_the_linted_tree(tmp_path: Path) -> None:
    (tmp_path / "env.sh").write_text("TP=2\n")
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "train.sh").write_text("source ../env.sh\n")
    facts = analyze_file(str(tmp_path / "job" / "train.sh"), root_dir=str(tmp_path / "job"))
    unread = _only(facts)
    assert (unread.reason, unread.path) == (UnreadReason.OUTSIDE_ROOT, "../env.sh")
    assert "outside the linted tree" in unread.note


def test_a_cycle(tmp_path: Path) -> None:
    facts = _analyze(tmp_path, "source ./a.sh\n", **{"a.sh": "A=1\nsource ./train.sh\n"})
    unread = _only(facts)
    assert (unread.reason, unread.path) == (UnreadReason.CYCLE, "./train.sh")
    assert unread.span.path.endswith("a.sh") and "(a cycle)" in unread.note


def test_sources_nested_too_deep(tmp_path: Path) -> None:
    files = {f"s{i}.sh": f"source ./s{i + 1}.sh\n" for i in range(MAX_SOURCE_DEPTH + 2)}
    facts = _analyze(tmp_path, "source ./s0.sh\n", **files)
    unread = _only(facts)
    assert unread.reason is UnreadReason.TOO_DEEP
    assert unread.file is not None and unread.file.endswith(f"s{MAX_SOURCE_DEPTH}.sh")
    assert "nested more than" in unread.note and "cycle" not in unread.note


@pytest.mark.parametrize(
    ("content", "reason", "said"),
    [
        (b"X=1\n" * 300_000, UnreadReason.TOO_LARGE, "larger than"),
        (b"\x00\x01binary", UnreadReason.UNREADABLE, "binary file"),
        (b"X=\xff\n", UnreadReason.UNREADABLE, "not valid UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read(tmp_path: Path, content: bytes, reason: UnreadReason, said: str) -> None:
    unread = _only(_analyze(tmp_path, "source ./cfg.sh\n", **{"cfg.sh": content}))
    assert (unread.reason, unread.path) == (reason, "./cfg.sh")
    # Found but not read: what it holds still decides, so a result kept for later rests on it.
    assert unread.file == os.path.realpath(tmp_path / "cfg.sh")
    assert unread.note.startswith(f"{unread.span}: cannot read sourced file ./cfg.sh: ") and said in unread.note


def test_a_file_read_is_not_reported(tmp_path: Path) -> None:
    facts = _analyze(tmp_path, "source ./cfg.sh\n", **{"cfg.sh": "TP=2\n"})
    assert facts.unread_sources == [] and facts.notes == []
