"""The packaged rules, read, validated and compiled once, then kept in the user's cache folder.

Reading the packaged rule files costs most of a short run: YAML with positions, the JSON Schema,
every CEL condition compiled and checked. What that produces does not change until the rule
files or megalint do, so it is kept as a pickle in `rules/` of the cache folder (the folder of
megatron/extraction_cache.py: `$MEGALINT_CACHE_DIR`, else `$XDG_CACHE_HOME/megalint`, else
`~/.cache/megalint`). An entry is named by the SHA-256 of the rule files' paths and contents, of
megalint's version and Python's, and of the size and time of the code and data that read them
(so a changed checkout is seen too). It starts with the SHA-256 of what follows: an entry that is
truncated, corrupt or does not unpickle is ignored and written again. Entries are written to a
temporary file and renamed, so runs sharing the folder never read a half-written one. The CEL
programs are not kept (they do not pickle): each is compiled when its rule first runs.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from megalint import __version__
from megalint.megatron.extraction_cache import cache_dir

# Raised when what an entry holds changes meaning, so that older entries are not read.
CACHE_FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent.parent
# The code and data whose change changes the rules read: the engine, what a finding is, and the
# catalogues the rules' argument names are checked against.
_CODE = ("engine", "diagnostics.py", "errors.py", "data/catalogue", "data/catalogue-extracted")
_DIGEST = 64  # hex characters of a SHA-256

T = TypeVar("T")


def _code_stamp() -> Iterable[str]:
    for rel in _CODE:
        path = _PACKAGE / rel
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name) if path.is_dir() else [path]
        except OSError:
            continue
        for entry in entries:
            name = os.path.basename(entry)
            if not name.endswith((".py", ".json")):  # not __pycache__, whose time changes as it fills
                continue
            try:
                st = os.stat(entry)
            except OSError:
                continue
            yield f"{rel}/{name}:{st.st_size}:{st.st_mtime_ns}"


def cache_key(files: Iterable[tuple[str, bytes]]) -> str:
    """The name of the entry for these rule files (path, content) and this megalint."""
    h = hashlib.sha256()
    head = [str(CACHE_FORMAT), __version__, f"{sys.version_info[0]}.{sys.version_info[1]}", *_code_stamp()]
    h.update("\0".join(head).encode())
    for path, data in files:
        h.update(b"\0\0" + path.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def entry_path(key: str) -> Path:
    return cache_dir() / "rules" / f"{key[:32]}.pickle"


def read_entry(where: Path) -> Any | None:
    """What an entry holds, or None when it is missing, truncated or corrupt."""
    try:
        blob = where.read_bytes()
    except OSError:
        return None
    digest, payload = blob[:_DIGEST], blob[_DIGEST + 1 :]
    if blob[_DIGEST : _DIGEST + 1] != b"\n" or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    collecting = gc.isenabled()
    gc.disable()  # unpickling makes thousands of objects and no garbage: a collection only costs time
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - an entry of another build: ignored, written again
        return None
    finally:
        if collecting:
            gc.enable()


def write_entry(where: Path, value: object) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    blob = hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_name(f"{where.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        tmp.replace(where)
    except OSError:
        pass  # a cache that cannot be written only costs the next run the same work


def cached(files: list[tuple[str, bytes]], build: Callable[[], T], valid: Callable[[Any], bool]) -> T:
    """What `build` returns for these rule files, from the cache when an entry `valid` accepts is there."""
    where = entry_path(cache_key(files))
    value = read_entry(where)
    if value is not None and valid(value):
        result: T = value
        return result
    built = build()
    write_entry(where, built)
    return built
