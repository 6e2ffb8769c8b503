"""The replay of a repeated command: `megalint FILE…` run again on files, configuration and
environment unchanged since an earlier run prints what that run printed, and exits as it did,
without importing the linter, its configuration or its reports. Entries not used for a month
are removed (checking/pruning.py).

The cache of results (checking/cache.py) spares a repeated run the checking; what it leaves is the
start-up of the command line, the configuration and the reports, several times ShellCheck's whole
run on a script. A pre-commit hook or an editor runs the same command on the same files again and
again: the replay answers it with `os` and `marshal`.

An entry is found by the command line, the working folder, megalint's build and the packages
installed beside it, the Python that runs it, the environment variables megalint reads, and
whether standard output and error are terminals (and how wide). It holds what the run wrote to
standard output and error, in order, its exit status, and each file its output rests on:
- the scripts, what they source and the Python files that decided them (a fork's parser): their
  kind, inode, size and times;
- every configuration file that could apply (megalint.toml, .megalint.toml and pyproject.toml in
  each folder from a script's and from the working folder up to the file system's root), or that
  there is none;
- whether each folder from the working folder up holds `.git` (CI reports name paths from it);
- what the checks asked the file system (probes.py: a sourced file not found, a fork's marker
  folder), by the kind of file each path held.
A file is trusted by its state only when it had not changed for two seconds when the run that
kept the entry began (git's rule for racily clean files: a file written again within the tick of
its clock keeps its times); a run that read a file changed more recently keeps no entry. Any
difference, an entry that does not verify, or a cache turned off, and the command runs in full.

Only a run that writes nothing but its report to standard output and error is kept: no fixes, no
standard input, no report to a file or a step summary, no folder of the user's rules or Megatron
checkout (their files are named by folder), the cache of results at the working folder, exit
status 0 or 1.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from megalint import __version__
from megalint.cachedir import SETTLED_NS, answer, read_kept, used, write_whole
from megalint.stamp import environment_stamp, package_stamp

TYPE_CHECKING = False  # `typing` is not imported for it: the replay imports as little as it can
if TYPE_CHECKING:
    from collections.abc import Iterable

# BLAKE2b alone, not megalint.digests: a replayed run needs no SHA-256, whose module it would look for.
try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from megalint.digests import blake2b

MAGIC = b"megalint-replay-2\n"
FOLDER = os.path.join(".megalint_cache", "replay")  # at the working folder, the root of the run's cache
_CHECKSUM = 32
# When this process began (the module is imported first): a file changed later may have been read
# before or after the change.
STARTED_NS = time.time_ns()

# The environment variables megalint reads, whole or by prefix (tests/cli/test_replay.py checks the
# package's source against them): any other can change without changing what a run prints.
ENV_NAMES = frozenset(
    {
        "CI",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLORTERM",
        "COLUMNS",
        "FORCE_COLOR",
        "HOME",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "LINES",
        "NO_COLOR",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "TERM",
        "XDG_CACHE_HOME",
    }
)
ENV_PREFIXES = ("MEGALINT_", "GITHUB_", "CI_")

_enabled = False

State = tuple[int, int, int, int, int] | None  # (mode, inode, size, mtime, ctime), None: absent
# How a file is seen unchanged: its whole state, whether it exists, or what a check was told of it
# (cachedir.answer: the kind of file, or a checksum of the Python files under a folder).
BY_STATE, BY_PRESENCE, BY_KIND = 0, 1, 2
Dependency = tuple[str, int, State | bool | int]  # (path, how, what was seen)


def enable() -> None:
    """This process is the command line's: a run of the main command keeps its entry."""
    global _enabled
    _enabled = True


def enabled() -> bool:
    return _enabled and not os.environ.get("MEGALINT_NO_CACHE")


def entry_path(argv: list[str]) -> str:
    """Where the entry of this command, run here and now, is kept."""
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k in ENV_NAMES or k.startswith(ENV_PREFIXES)))
    cwd = os.getcwd()
    key = (
        MAGIC,
        __version__,
        package_stamp(),
        environment_stamp(),
        sys.version,
        tuple(argv),
        cwd,
        env,
        _terminal(1),
        _terminal(2),
    )
    # By its repr, not marshal's bytes: those differ with which strings happen to be shared.
    named = repr(key).encode("utf-8", "surrogatepass")
    return os.path.join(cwd, FOLDER, blake2b(named, digest_size=20).hexdigest())


def _terminal(fd: int) -> tuple[bool, int]:
    """Whether `fd` is a terminal, and its width."""
    try:
        if not os.isatty(fd):
            return False, 0
        return True, os.get_terminal_size(fd).columns
    except OSError:
        return False, 0


def state(path: str) -> State:
    """What tells a file apart from itself rewritten: its kind, inode, size and both times (a
    copy that keeps the time, `cp -p` or `tar -x`, still gets a new ctime)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _seen(path: str, how: int) -> State | bool | int:
    if how == BY_STATE:
        return state(path)
    if how == BY_PRESENCE:
        return os.path.lexists(path)
    return answer(path)


def serve(argv: list[str]) -> int | None:
    """Print what the kept run of this command printed and return its exit status; None when no
    entry holds or the entry no longer applies (the command then runs in full)."""
    if not enabled() or "--no-cache" in argv:
        return None
    try:
        where = entry_path(argv)
        held = _load(where)
    except (OSError, ValueError):
        return None
    if held is None:
        return None
    dependencies, chunks, status, mtime_ns = held
    for path, how, then in dependencies:
        if _seen(path, how) != then:
            return None
    used(where, mtime_ns)
    return _write(chunks, status)


def _load(path: str) -> tuple[tuple[Dependency, ...], tuple[tuple[int, str], ...], int, int] | None:
    """What an entry holds, when it verifies and has the entry's shape, and its time."""
    kept = read_kept(path)
    if kept is None:
        return None
    data, mtime_ns = kept
    checksum, payload = data[len(MAGIC) : len(MAGIC) + _CHECKSUM], data[len(MAGIC) + _CHECKSUM :]
    if not data.startswith(MAGIC) or blake2b(payload, digest_size=_CHECKSUM).digest() != checksum:
        return None
    try:
        held = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(held, tuple) and len(held) == 3):
        return None
    dependencies, chunks, status = held
    if type(status) is not int or not isinstance(dependencies, tuple) or not isinstance(chunks, tuple):
        return None
    for dep in dependencies:
        if not (isinstance(dep, tuple) and len(dep) == 3 and isinstance(dep[0], str) and type(dep[1]) is int):
            return None
        how, then = dep[1], dep[2]
        if how == BY_STATE:
            if not (then is None or (isinstance(then, tuple) and all(type(n) is int for n in then))):
                return None
        elif how == BY_PRESENCE:
            if type(then) is not bool:
                return None
        elif how != BY_KIND or type(then) is not int:
            return None
    for chunk in chunks:
        if not (isinstance(chunk, tuple) and len(chunk) == 2 and chunk[0] in (1, 2) and isinstance(chunk[1], str)):
            return None
    return dependencies, chunks, status, mtime_ns


def _write(chunks: tuple[tuple[int, str], ...], status: int) -> int:
    current = None
    try:
        for fd, text in chunks:
            stream = sys.stdout if fd == 1 else sys.stderr
            if current is not None and stream is not current:
                current.flush()  # in the order the run wrote them, where both go to one terminal
            stream.write(text)
            current = stream
    except BrokenPipeError:  # `megalint … | head`, as the command line answers it (cli/guard.py)
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    return status


class _Tee:
    """A text stream that keeps what is written to it, in the order of both streams."""

    def __init__(self, stream: object, fd: int, chunks: list[tuple[int, str]], recording: Recording):
        self._stream = stream
        self._fd = fd
        self._chunks = chunks
        self._recording = recording

    def write(self, text: str) -> int:
        self._chunks.append((self._fd, text))
        return self._stream.write(text)  # type: ignore[attr-defined,no-any-return]

    def __getattr__(self, name: str) -> object:
        if name == "buffer":  # bytes written past the text: not kept, so the run is not either
            self._recording.whole = False
        return getattr(self._stream, name)


class Recording:
    """What a command writes to standard output and error from now until `stop`."""

    def __init__(self) -> None:
        self.chunks: list[tuple[int, str]] = []
        self.whole = True
        self._streams = (sys.stdout, sys.stderr)
        sys.stdout = _Tee(sys.stdout, 1, self.chunks, self)
        sys.stderr = _Tee(sys.stderr, 2, self.chunks, self)

    def stop(self) -> None:
        sys.stdout, sys.stderr = self._streams


def keep(
    argv: list[str],
    recording: Recording,
    status: int,
    files: set[str],
    folders: set[str],
    answers: dict[str, int],
    config_names: tuple[str, ...],
) -> bool:
    """Keep the recorded run of `argv` for the next run of the same command; `files` are those
    its output rests on, `folders` those where a configuration file (`config_names`) found in them
    or above them would apply, `answers` what its checks asked the file system (probes.py).
    Nothing is kept when a file had changed too recently to be trusted
    by its state, or the cache's folder is missing (the cache of results makes it) or cannot be
    written."""
    if not recording.whole:
        return False
    cwd = os.getcwd()
    dependencies: list[Dependency] = []
    for path in sorted(os.path.join(cwd, f) for f in files):
        dependencies.append((path, BY_STATE, state(path)))
    candidates = config_names
    for folder in sorted(_up(os.path.abspath(f) for f in {*folders, cwd})):
        dependencies.extend(
            (os.path.join(folder, name), BY_STATE, state(os.path.join(folder, name))) for name in candidates
        )
    dependencies.extend(
        (os.path.join(folder, ".git"), BY_PRESENCE, os.path.lexists(os.path.join(folder, ".git")))
        for folder in _up([cwd])
    )
    dependencies.extend((path, BY_KIND, found) for path, found in sorted(answers.items()))
    for _, how, then in dependencies:
        if how == BY_STATE and isinstance(then, tuple) and max(then[3], then[4]) + SETTLED_NS > STARTED_NS:
            return False
    target = entry_path(argv)
    payload = marshal.dumps((tuple(dependencies), tuple(recording.chunks), int(status)))
    if not os.path.isdir(os.path.dirname(os.path.dirname(target))):
        return False
    return write_whole(target, MAGIC + blake2b(payload, digest_size=_CHECKSUM).digest() + payload)


def _up(folders: Iterable[str]) -> set[str]:
    """Each folder and every folder above it."""
    out: set[str] = set()
    for folder in folders:
        while folder not in out:
            out.add(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return out
