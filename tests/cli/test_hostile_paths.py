"""A bad path is an error for that path, and the rest of the run goes on: links that loop, special
files, huge files and names that are not UTF-8 (exit status 2, the other files' findings shown)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from megalint.discovery import shown_name
from megalint.output import FORMATS

from .conftest import ERROR

ODD = os.fsdecode(b"job\xff\nx.sh")  # not UTF-8, and a newline that would forge a report line
ODD_SHOWN = "job\\xff\\x0ax.sh"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run_cli(*argv: str, cwd: Path, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command in its own process, under a memory limit and a timeout."""
    return subprocess.run(
        [sys.executable, "-m", "megalint", "--isolated", "--no-cache", "--output-format", "concise", *argv],
        cwd=cwd,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limited,
    )


def test_shown_name_escapes_bytes_and_control_characters():
    assert shown_name(ODD) == ODD_SHOWN
    assert shown_name("launch/ok é.sh") == "launch/ok é.sh"
    assert shown_name("a\x1b[31m.sh") == "a\\x1b[31m.sh"


def test_a_link_loop_in_a_folder_is_an_error_for_that_path(megalint, scripts, tmp_path):
    scripts("tree/job.sh", ERROR)
    (tmp_path / "tree" / "self.sh").symlink_to("self.sh")
    (tmp_path / "tree" / "sub").mkdir()
    (tmp_path / "tree" / "sub" / "up").symlink_to("..")  # a folder cycle: searched once
    r = megalint("--isolated", "--no-cache", "--output-format", "concise", "tree", cwd=tmp_path)
    assert r.rc == 2
    assert r.err == "megalint: tree/self.sh: cannot read: Too many levels of symbolic links\n"
    assert r.codes == ["ML101"] and r.out.startswith("tree/job.sh:1:")


def test_a_link_to_a_folder_outside_is_not_searched(megalint, scripts, tmp_path):
    scripts("tree/job.sh", ERROR)
    scripts("elsewhere/other.sh", ERROR)
    (tmp_path / "tree" / "root").symlink_to("/")  # would search the whole disk
    (tmp_path / "tree" / "out").symlink_to("../elsewhere")
    (tmp_path / "tree" / "sub").mkdir()
    (tmp_path / "tree" / "sub" / "in").symlink_to("../../tree")
    r = megalint("--isolated", "--no-cache", "--output-format", "concise", "tree", cwd=tmp_path)
    assert (r.rc, r.err) == (1, "")
    assert [line.split(":")[0] for line in r.out.splitlines() if ": ML" in line] == ["tree/job.sh"]


def test_special_files_and_huge_files_are_never_read(tmp_path):
    (tmp_path / "job.sh").write_text(ERROR)
    os.mkfifo(tmp_path / "fifo.sh")
    with open(tmp_path / "sparse.sh", "wb") as fh:
        fh.truncate(3 << 30)  # 3 GB of nothing: refused by its size, unread
    r = run_cli("/dev/zero", "fifo.sh", "sparse.sh", "job.sh", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        "megalint: /dev/zero: is a character device, not a script; only regular files are read",
        "megalint: fifo.sh: is a FIFO, not a script; only regular files are read",
        "megalint: sparse.sh: file too large (3,221,225,472 bytes; megalint reads scripts of at most 67,108,864 bytes)",
    ]
    assert r.stdout.startswith("job.sh:1:89: ML101")


def test_a_huge_gitignore_is_read_to_a_bound(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "job.sh").write_text(ERROR)
    with open(tmp_path / "tree" / ".gitignore", "wb") as fh:
        fh.truncate(3 << 30)
    r = run_cli("tree", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.startswith("tree/job.sh:1:89: ML101")


@pytest.mark.parametrize("command", ["explain", "memory", "model"])
def test_the_other_commands_never_read_a_special_file(tmp_path, command):
    os.mkfifo(tmp_path / "fifo.sh")
    for path, kind in (("fifo.sh", "a FIFO"), ("/dev/zero", "a character device")):
        r = subprocess.run(
            [sys.executable, "-m", "megalint", command, path],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_limited,
        )
        assert r.returncode == 2
        assert r.stderr == f"megalint: {path}: is {kind}, not a script; only regular files are read\n"


def test_standard_input_that_never_ends_is_read_to_the_first_block(tmp_path):
    with open("/dev/zero", "rb") as zero:
        r = run_cli("-", cwd=tmp_path, stdin=zero.fileno())
    assert r.returncode == 2
    assert r.stderr == "megalint: -: binary file (contains NUL bytes), not a shell script\n"


def test_a_binary_file_is_refused_on_its_first_block(megalint, scripts, tmp_path):
    scripts("bin.sh", b"#!/bin/bash\n\0" + b"x" * 100_000)
    scripts("job.sh", ERROR)
    r = megalint("--isolated", "--no-cache", "--output-format", "concise", "bin.sh", "job.sh", cwd=tmp_path)
    assert r.rc == 2 and r.err == "megalint: bin.sh: binary file (contains NUL bytes), not a shell script\n"
    assert r.codes == ["ML101"]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_name_that_is_not_utf8_is_escaped_in_every_format(megalint, scripts, tmp_path, fmt):
    (tmp_path / "tree").mkdir()
    with open(os.path.join(os.fsencode(tmp_path / "tree"), os.fsencode(ODD)), "w") as fh:
        fh.write(ERROR)
    out = tmp_path / f"report.{fmt}"
    r = megalint("--isolated", "--no-cache", "--output-format", f"{fmt}:{out}", "tree", cwd=tmp_path)
    assert (r.rc, r.err) == (1, "")
    text = out.read_bytes().decode("utf-8")  # valid UTF-8, whatever the name's bytes
    escaped = "%5Cxff%5Cx0a" if fmt == "sarif" else "\\xff\\x0a"  # SARIF: in a URI, percent-encoded
    if fmt in ("json", "json-lines", "gitlab"):
        escaped = escaped.replace("\\", "\\\\")  # a backslash in a JSON string
    assert escaped in text and "job\xff" not in text
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(text)
    elif fmt == "json-lines":
        assert [json.loads(line) for line in text.splitlines()]
    elif fmt == "junit":
        ET.fromstring(text)
    elif fmt in ("concise", "full", "grouped"):
        assert f"tree/{ODD_SHOWN}:1:" in text or f"tree/{ODD_SHOWN}:" in text
    r = megalint("--isolated", "--no-cache", "--output-format", fmt, "tree", cwd=tmp_path)  # to standard output
    assert r.rc == 1 and "\udcff" not in r.out and escaped in r.out
