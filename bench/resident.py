"""What a megalint kept resident between calls would take per call, beside ShellCheck.

    python bench/resident.py [--root DIR] [--sample 50] [--seed 16] [-n 3]
                             [--megalint CMD] [--shellcheck CMD] [--files FILE ...]

A first check in a new process pays Python's start, megalint's imports and the compiling of the
rules and patterns it uses (bench/startup.py, bench/corpus.py: "one file per process"). The one
design that skips all but the start is a process kept between calls; this measures the best two
such designs do, so that the bound of one real script per process can be judged against them
rather than guessed. Both servers, started once, import megalint and check the warm-up scripts
(their rules compiled, their patterns built), and take each call's arguments, working folder,
environment and standard streams (the descriptors, over a Unix socket):

- forked: each call is run by a child forked beforehand that has itself checked a script (so the
  pages a check writes are already its own), and that exits after it: calls stay as separate as
  new processes;
- one process: the server runs each call itself, one after the other, its cwd, environment and
  streams put back after each; a call finds what the calls before left (as a resident process
  would keep caches), which a tool would then have to keep correct.

A call is a new process of megalint's interpreter that imports what the megalint command imports
before it runs (`megalint.cli`, and `re` where pip's script imports it), sends the call and exits
with the status sent back.

Each of the seeded sample's files (as bench/corpus.py picks them) is checked, `-n` times, alternated:
megalint in a new process, through each server, ShellCheck, the interpreter doing nothing (`-c pass`)
and the command's imports alone; then the analysis alone, in this process, once every file was
checked here before. The table gives the medians over the files of each file's median, and how many
files printed the same and exited alike through each server as in a new process. Every megalint
call is `--isolated --no-cache --output-format concise --exit-zero`, a first check each time. Run
it on a non-editable install (an editable install's import hook costs time of its own); POSIX only.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from typing import NamedTuple, NoReturn

# The server runs in megalint's interpreter and imports nothing of the bench (see `serve`).
SERVE = "--serve"
MEGALINT_ARGS = ["--isolated", "--no-cache", "--output-format", "concise", "--exit-zero"]


# ---------------------------------------------------------------------- the server (megalint's interpreter)


def serve(socket_path: str, forking: bool, warm: list[str]) -> None:
    """Listen on `socket_path` until the bench closes this process's standard input (or dies),
    each call run by a forked child made ready beforehand, or (`forking` false) by this process."""
    import gc
    import select
    import signal

    from megalint import classcode
    from megalint.cli import main

    classcode.enable()
    _quietly(main, [*MEGALINT_ARGS, "--jobs", "1", *warm])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    # What is imported and built is kept by every child as it is: the collector need not look at it.
    gc.freeze()
    if not forking:
        print("ready", flush=True)
        _serve_in_place(main, listener)
    live: set[int] = set()

    def stop() -> None:
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(0)

    def spare() -> None:
        pid = os.fork()
        if pid == 0:
            _child(main, listener, warm[0])
        live.add(pid)

    spare()
    print("ready", flush=True)
    while True:
        if select.select([0], [], [], 0.02)[0] and not os.read(0, 1):
            stop()
        # The next spare is made once a call is done, not while it runs: its warm-up would take
        # a core from the call.
        while live:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            live.discard(pid)
            spare()


def _child(main: Callable[[list[str]], int], listener: socket.socket, warm: str) -> NoReturn:
    """Check `warm` (its pages made this process's own), take one call, run it, report its status."""
    try:
        _quietly(main, [*MEGALINT_ARGS, "--jobs", "1", warm])
        conn, _ = listener.accept()
        listener.close()
        _answer(main, conn, restore=False)
    finally:
        os._exit(0)


def _serve_in_place(main: Callable[[list[str]], int], listener: socket.socket) -> NoReturn:
    """Run every call in this process, one after the other, each finding what the ones before left."""
    import select

    while True:
        ready = select.select([0, listener.fileno()], [], [])[0]
        if 0 in ready and not os.read(0, 1):
            os._exit(0)
        if listener.fileno() in ready:
            conn, _ = listener.accept()
            with conn:
                _answer(main, conn, restore=True)


class Call(NamedTuple):
    """What a call sends: its folder, its streams' encodings, its arguments and environment, and the
    descriptors of its standard input, output and error."""

    cwd: str
    out_encoding: str
    err_encoding: str
    argv: list[str]
    env: dict[str, str]
    fds: list[int]


def receive(conn: socket.socket) -> Call:
    """The call `conn` sends (as CLIENT writes it)."""
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < 16 or len(data) < 8 + int.from_bytes(data[:8], "little"):
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("the call was cut short")
        data += more
    split = 16 + int.from_bytes(data[8:16], "little")
    cwd, out_encoding, err_encoding, *argv = os.fsdecode(data[16:split]).split("\0")
    env = dict(item.split("=", 1) for item in os.fsdecode(data[split:]).split("\0") if "=" in item)
    return Call(cwd, out_encoding, err_encoding, argv, env, fds)


def _answer(main: Callable[[list[str]], int], conn: socket.socket, restore: bool) -> None:
    """Run the call `conn` sends, in its folder, with its environment and standard streams, and
    send back its status; with `restore`, this process's own are put back after."""
    import io

    call = receive(conn)
    if restore:
        own = ([os.dup(fd) for fd in (0, 1, 2)], os.getcwd(), dict(os.environ), (sys.stdin, sys.stdout, sys.stderr))
    for target, fd in enumerate(call.fds):
        os.dup2(fd, target)
        os.close(fd)
    try:
        os.chdir(call.cwd)
        os.environ.clear()
        os.environ.update(call.env)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=call.out_encoding)
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding=call.err_encoding, errors="backslashreplace", line_buffering=True
        )
        status = main(call.argv)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        if restore:
            for target, fd in enumerate(own[0]):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(own[1])
            os.environ.clear()
            os.environ.update(own[2])
            sys.stdin, sys.stdout, sys.stderr = own[3]
    conn.sendall(status.to_bytes(4, "little", signed=True))


def _quietly(main: Callable[[list[str]], int], argv: list[str]) -> None:
    """main(argv) with its standard output and error thrown away."""
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        main(argv)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


# A call through the server: what the megalint command imports before it runs (`{imports}`:
# `megalint.cli`, after `re` where the command's script imports it), then the call sent with the
# descriptors of its standard streams.
CLIENT = """\
import sys
{imports}import os, _socket, array
s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
s.connect(sys.argv[1])
call = os.fsencode("\\0".join([os.getcwd(), sys.stdout.encoding, sys.stderr.encoding, *sys.argv[2:]]))
env = os.fsencode("\\0".join(k + "=" + v for k, v in os.environ.items()))
data = len(call).to_bytes(8, "little") + call + env
s.sendmsg([len(data).to_bytes(8, "little") + data],
          [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
got = b""
while len(got) < 4:
    more = s.recv(4 - len(got))
    if not more:
        break
    got += more
os._exit(int.from_bytes(got, "little", signed=True) if len(got) == 4 else 3)
"""


# ---------------------------------------------------------------------- the bench


def main(argv: list[str] | None = None) -> int:
    import argparse
    import random
    import shlex
    import statistics
    import subprocess
    import tempfile
    import time

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from bench.corpus import corpus_files, in_process, run
    from bench.startup import interpreter_of, wrapper_imports_re

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_root = os.environ.get("MEGALINT_REPOS") or os.path.expanduser("~/.cache/megalint-bench/repos")
    ap.add_argument("--root", default=default_root, help="folder of checkouts named owner+name")
    ap.add_argument("--repos", default=os.path.join(os.path.dirname(__file__), "real_repos.toml"))
    ap.add_argument("--sample", type=int, default=50, help="files checked, one per call")
    ap.add_argument("--seed", type=int, default=16, help="seed of the sample (bench/corpus.py's)")
    ap.add_argument("-n", type=int, default=3, help="calls of each kind per file (default 3; their median)")
    ap.add_argument("--megalint", default="megalint", help="the megalint command (a console script)")
    ap.add_argument("--shellcheck", default="shellcheck", help="the ShellCheck command")
    ap.add_argument("--files", nargs="*", help="these files rather than a sample of the corpus")
    args = ap.parse_args(argv)
    megalint, shellcheck = shlex.split(args.megalint), shlex.split(args.shellcheck)
    python = interpreter_of(megalint)
    if python is None or not hasattr(os, "fork"):
        print("error: needs a megalint console script and a POSIX system", file=sys.stderr)
        return 2
    if args.files:
        checkouts = {os.path.abspath(f): os.path.dirname(os.path.abspath(f)) for f in args.files}
    else:
        checkouts = dict(corpus_files(os.path.abspath(args.root), args.repos))
        if not checkouts:
            print(f"error: no checkout under {args.root}", file=sys.stderr)
            return 2
    paths = list(checkouts)
    sample = paths if args.files else random.Random(args.seed).sample(paths, min(args.sample, len(paths)))
    imports = ("import re\n" if wrapper_imports_re(megalint) else "") + "from megalint.cli import run\n"
    client = CLIENT.format(imports=imports)
    # The warm-up: files outside the sample when there are any, else the sample's own.
    warm = [p for p in paths if p not in sample][:25] or sample
    servers = ("forked", "one process")
    kinds = ("new process", *servers, "shellcheck", "python -c pass", "imports")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    same = dict.fromkeys(servers, 0)
    with tempfile.TemporaryDirectory(prefix="megalint-resident-") as scratch:
        socks = {kind: os.path.join(scratch, f"s{i}") for i, kind in enumerate(servers)}
        # A server stops when its standard input closes: when the bench ends, however it ends.
        started = [
            subprocess.Popen(
                [*python, os.path.abspath(__file__), SERVE, socks[kind], kind, *warm],
                cwd=scratch,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for kind in servers
        ]
        try:
            for server in started:
                assert server.stdout is not None
                if server.stdout.readline().strip() != "ready":
                    print("error: a server did not start", file=sys.stderr)
                    return 2

            def command(kind: str, p: str) -> list[str]:
                if kind in socks:
                    return [*python, "-c", client, socks[kind], *MEGALINT_ARGS, p]
                return {
                    "new process": [*megalint, *MEGALINT_ARGS, p],
                    "shellcheck": [*shellcheck, "-f", "gcc", p],
                    "python -c pass": [*python, "-c", "pass"],
                    "imports": [*python, "-c", imports],
                }[kind]

            for p in sample:
                fresh = subprocess.run(command("new process", p), cwd=scratch, capture_output=True)
                for kind in servers:
                    kept = subprocess.run(command(kind, p), cwd=scratch, capture_output=True)
                    same[kind] += (fresh.stdout, fresh.stderr, fresh.returncode) == (
                        kept.stdout,
                        kept.stderr,
                        kept.returncode,
                    )
                per: dict[str, list[float]] = {k: [] for k in kinds}
                for _ in range(args.n):
                    for kind in kinds:
                        per[kind].append(run(command(kind, p), scratch).wall)
                        if kind == "forked":
                            time.sleep(0.1)  # the next child made ready, as between calls of a hook or an editor
                for kind in kinds:
                    times[kind].append(statistics.median(per[kind]))
        finally:
            for server in started:
                assert server.stdin is not None
                server.stdin.close()
                server.wait()
    # The analysis alone, in this process, of each file once every file was checked here before:
    # all a resident process could not skip but the call itself.
    in_process([(p, checkouts[p]) for p in sample], None)
    times["analysis"] = in_process([(p, checkouts[p]) for p in sample], None)
    # A call is at least a new process of the interpreter, and the analysis has to be made.
    times["least"] = [a + b for a, b in zip(times["python -c pass"], times["analysis"], strict=True)]
    sc = statistics.median(times["shellcheck"])
    print(f"{len(sample)} files, median over the files of each file's median of {args.n} calls, alternated")
    print(f"{'call':<52} {'wall':>9}  {'vs ShellCheck':>13}")
    rows = (
        ("megalint, a new process (a first check)", "new process"),
        ("megalint, through a server forking a child a call", "forked"),
        ("megalint, through a server running every call itself", "one process"),
        ("ShellCheck", "shellcheck"),
        ("python -c pass (the interpreter's floor)", "python -c pass"),
        ("the command's imports, nothing else", "imports"),
        ("the analysis alone, in a warm process", "analysis"),
        ("the floor and the analysis: the least a call takes", "least"),
    )
    for label, kind in rows:
        m = statistics.median(times[kind])
        print(f"{label:<52} {m * 1000:>6.1f} ms  {m / sc:>12.2f}x")
    for kind in servers:
        print(
            f"output and exit status the same as in a new process, server {kind}: {same[kind]} of {len(sample)} files"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == SERVE:
        # In megalint's interpreter: the bench's folder is not on the path, megalint is the installed one.
        sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
        serve(sys.argv[2], sys.argv[3] == "forked", sys.argv[4:])
    else:
        raise SystemExit(main())
