"""bench/resident.py end to end on two scripts: each of its servers answers each call with what
megalint prints in a new process, and it prints its table (the figures are not checked)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "fixtures", "examples")


def _command(name: str) -> str | None:
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.isfile(beside) else shutil.which(name)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the server forks (POSIX only)")
def test_calls_through_the_server_print_and_exit_as_in_a_new_process(tmp_path: Path) -> None:
    megalint, shellcheck = _command("megalint"), _command("shellcheck")
    if megalint is None or shellcheck is None:
        pytest.skip("needs the megalint command and ShellCheck (the test extra)")
    # One script with findings (exit status 0 by --exit-zero, the findings printed) and one clean.
    with_findings = os.path.join(EXAMPLES, "gpt_13b_multinode.sbatch")
    clean = tmp_path / "clean.sh"
    clean.write_text("#!/bin/bash\nset -euo pipefail\necho hello\n")
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "bench", "resident.py"),
            "-n",
            "1",
            "--megalint",
            megalint,
            "--shellcheck",
            shellcheck,
            "--files",
            with_findings,
            str(clean),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2:] == [
        "output and exit status the same as in a new process, server forked: 2 of 2 files",
        "output and exit status the same as in a new process, server one process: 2 of 2 files",
    ]
    rows = [line.split("  ")[0] for line in lines[2:-2]]
    assert rows == [
        "megalint, a new process (a first check)",
        "megalint, through a server forking a child a call",
        "megalint, through a server running every call itself",
        "ShellCheck",
        "python -c pass (the interpreter's floor)",
        "the command's imports, nothing else",
        "the analysis alone, in a warm process",
        "the floor and the analysis: the least a call takes",
    ]


@pytest.mark.skipif(not hasattr(socket, "send_fds"), reason="descriptors are sent over Unix sockets (POSIX only)")
def test_a_call_reaches_the_server_with_its_streams_folder_and_environment(tmp_path: Path) -> None:
    # The client as the bench runs it, against a server that is this test reading the call as the
    # bench's servers do (`receive`): the call's folder, arguments and environment, and its three
    # standard streams; the client exits with the status sent back.
    resident = _load_resident()
    path = str(tmp_path / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    client = resident.CLIENT.format(imports="")
    proc = subprocess.Popen(
        [sys.executable, "-c", client, path, "--flag", "a b"],
        cwd=tmp_path,
        env={**os.environ, "MEGALINT_PROBE": "x=y"},
        stdout=subprocess.PIPE,
    )
    conn, _ = listener.accept()
    call = resident.receive(conn)
    assert (call.cwd, call.argv, call.env["MEGALINT_PROBE"]) == (str(tmp_path), ["--flag", "a b"], "x=y")
    fds = call.fds
    assert len(fds) == 3
    os.write(fds[1], b"written by the server\n")
    for fd in fds:
        os.close(fd)
    conn.sendall((7).to_bytes(4, "little", signed=True))
    conn.close()
    listener.close()
    out, _ = proc.communicate(timeout=30)
    assert (out, proc.returncode) == (b"written by the server\n", 7)


def _load_resident() -> ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location("resident", os.path.join(ROOT, "bench", "resident.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
