"""The packaged rules, read, validated and compiled once, then kept in the user's cache folder.

Reading the packaged rule files costs most of a short run: YAML with positions, the JSON Schema,
every CEL condition compiled and checked. What that produces does not change until the rule
files or megalint do, so it is kept as a pickle in `rules/` of the cache folder (the folder of
megatron/extraction_cache.py: `$MEGALINT_CACHE_DIR`, else `$XDG_CACHE_HOME/megalint`, else
`~/.cache/megalint`). An entry is named by megalint's version and Python's and by what names
the rule files and the code and data that read them: in an installed wheel, the wheel's stamp
(cache_entry.py: its files change only by its being installed again, so a run with a warm cache
reads no rule file); in a source checkout, the rule files' paths and contents and the size and
time of that code and data (so a changed checkout is seen too). Entries are kept as cache_entry.py
keeps them: one truncated, corrupt or that does not unpickle is ignored and written again, and
runs sharing the folder never read a half-written one. The CEL programs are not kept (they do
not pickle): each is compiled when its rule first runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from megalint import __version__
from megalint.cache_entry import read_entry, write_entry
from megalint.cachedir import cache_folder
from megalint.digests import sha256
from megalint.stamp import wheel_stamp

# Raised when what an entry holds changes meaning, so that older entries are not read.
# 2: an expression's Scan holds its guard (short_circuit.py); 3: packed groups (rule._Packed);
# 4: its guards.
CACHE_FORMAT = 4
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# The code and data whose change changes the rules read: the engine, what a finding is, and the
# catalogues the rules' argument names are checked against.
_CODE = ("engine", "diagnostics.py", "errors.py", "data/catalogue", "data/catalogue-extracted")

T = TypeVar("T")


def _code_stamp() -> Iterable[str]:
    for rel in _CODE:
        path = os.path.join(_PACKAGE, rel)
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name) if os.path.isdir(path) else [path]
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
    h = sha256()
    head = [str(CACHE_FORMAT), __version__, f"{sys.version_info[0]}.{sys.version_info[1]}", *_code_stamp()]
    h.update("\0".join(head).encode())
    for path, data in files:
        h.update(b"\0\0" + path.encode() + b"\0" + sha256(data).digest())
    return h.hexdigest()


def installed_key(stamp: Iterable[str]) -> str:
    """The name of the entry for the rules of the installed wheel `stamp` (cache_entry.wheel_stamp)
    names: its files, rules and code alike, change only with the stamp."""
    head = [str(CACHE_FORMAT), __version__, f"{sys.version_info[0]}.{sys.version_info[1]}", "wheel", *stamp]
    return sha256("\0".join(head).encode()).hexdigest()


def wheel_rules_key() -> str | None:
    """The packaged rules' key when megalint runs from an installed wheel (loader.packaged_rules_key),
    known without importing the loader; None in a source checkout, whose rule files must be read."""
    stamp = wheel_stamp()
    return None if stamp is None else installed_key(stamp)


def entry_path(key: str) -> str:
    return os.path.join(cache_folder(), "rules", f"{key[:32]}.pickle")


def cached(key: str, build: Callable[[], T], valid: Callable[[Any], bool]) -> T:
    """What `build` returns for the rules `key` names, from the cache when an entry `valid` accepts is there."""
    where = entry_path(key)
    value = read_entry(where)
    if value is not None and valid(value):
        result: T = value
        return result
    built = build()
    write_entry(where, built)
    return built
