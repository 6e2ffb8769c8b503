"""Where megalint keeps what it computed once for later runs: the packaged rules read
(engine/rule_cache.py), catalogues extracted from Megatron checkouts
(megatron/extraction_cache.py) and the compiled methods of its classes (classcode.py)."""

from __future__ import annotations

import os
import time

CACHE_ENV = "MEGALINT_CACHE_DIR"
# A file is known unchanged by its size and times alone only when it had not been written for this
# long when it was read (git's rule for racily clean files): one written again within the same
# tick of its clock keeps its time. The cache of results and the replay both rest on it.
SETTLED_NS = 2_000_000_000


DAY_NS = 86_400 * 10**9


def read_kept(path: str) -> tuple[bytes, int] | None:
    """The bytes of an entry of the cache of results or a replay, and its time (for `used`); None
    when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read(), os.fstat(fh.fileno()).st_mtime_ns
    except OSError:
        return None


def write_whole(path: str, data: bytes) -> bool:
    """Write `data` to `path` whole or not at all: to `<path>.<pid>.tmp` beside it, renamed into
    place, so that runs sharing the folder never read a half-written file (a temporary file left
    by a run that was killed is removed by pruning). False when it cannot be written, which only
    costs the next run the same work."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def used(path: str, mtime_ns: int) -> None:
    """An entry of the cache of results or a replay just read (its time `mtime_ns`): its time is
    set to now when it is a day old, so that pruning (checking/pruning.py) sees it in use. Once a
    day at most: most reads write nothing."""
    now = time.time_ns()
    if now - mtime_ns > DAY_NS:
        try:
            os.utime(path, ns=(now, now))
        except OSError:
            pass


# Ends a question that is not about one path but about the Python files anywhere under a folder.
PY_FILES = "\0**/*.py"


def file_kind(path: str) -> int:
    """The kind of file at `path` (`S_IFMT` of its mode, links followed), 0 when there is none."""
    try:
        return os.stat(path).st_mode & 0o170000
    except (OSError, ValueError):
        return 0


def answer(question: str) -> int:
    """What the file system answers now to a question a check asked (probes.py), as both caches
    compare it: the kind of file at a path, or for `FOLDER + PY_FILES` a checksum of the names of
    the Python files under the folder (a module added to a fork's features is a new answer)."""
    if not question.endswith(PY_FILES):
        return file_kind(question)
    import zlib  # only a fork's folder of features asks it

    folder = question[: -len(PY_FILES)]
    names: list[str] = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        names.extend(os.path.relpath(os.path.join(top, f), folder) for f in sorted(files) if f.endswith(".py"))
    return zlib.crc32("\0".join(names).encode("utf-8", "surrogateescape")) + 1


def cache_folder() -> str:
    """`$MEGALINT_CACHE_DIR`, else `$XDG_CACHE_HOME/megalint`, else `~/.cache/megalint`."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(xdg or os.path.join(os.path.expanduser("~"), ".cache"), "megalint")
