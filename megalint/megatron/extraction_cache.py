"""A cache of catalogues extracted from source trees, kept outside the trees.

An entry is found by what was asked (the kind of fork and the folders read) and holds the
SHA-256 of every file the extraction read, and what it asked the file system (probes.py: a module
looked for and not found); it is used only while each of those files still has that content and
each answer holds, so an edit in the tree is seen on the next run. An entry that cannot be read or
does not parse is ignored and written again. The folder is `$MEGALINT_CACHE_DIR`, else
`$XDG_CACHE_HOME/megalint`, else `~/.cache/megalint`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from megalint import __version__, probes
from megalint.cachedir import CACHE_ENV as CACHE_ENV  # the variable that names the folder
from megalint.cachedir import cache_folder, write_whole
from megalint.digests import sha256

# Raised when what an entry holds changes meaning, so that older entries are not read.
CACHE_FORMAT = 4


def file_digest(path: str | os.PathLike[str]) -> str | None:
    try:
        with open(path, "rb") as fh:
            return sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _entry_path(key: str) -> str:
    name = sha256(f"{CACHE_FORMAT}\0{__version__}\0{key}".encode()).hexdigest()[:32]
    return os.path.join(cache_folder(), "catalogues", f"{name}.json")


def _valid(entry: Any, key: str) -> tuple[dict[str, Any], list[str]] | None:
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("files"), dict):
        return None
    answers = entry.get("probes")
    if not isinstance(answers, dict) or not all(type(k) is int for k in answers.values()):
        return None
    for path, digest in entry["files"].items():
        if file_digest(path) != digest:
            return None
    if not probes.unchanged(answers):
        return None
    data = entry.get("data")
    if not isinstance(data, dict):
        return None
    probes.told(answers)
    return data, [str(p) for p in entry["files"]]


def cached(
    key: str, make: Callable[[], tuple[dict[str, Any], Iterable[str | os.PathLike[str]]]]
) -> tuple[dict[str, Any], list[str]]:
    """The data `make` returns for `key`, from the cache while the files it read are unchanged;
    and those files.

    `make` returns the data (JSON-able) and the files it read."""
    where = _entry_path(key)
    try:
        with open(where, encoding="utf-8") as fh:
            entry = json.loads(fh.read())
    except (OSError, UnicodeDecodeError, ValueError):
        entry = None
    found = _valid(entry, key)
    if found is not None:
        return found
    with probes.recorded() as answers:
        data, files = make()
    digests = {str(p): file_digest(p) for p in files}
    entry = {"key": key, "files": digests, "probes": answers, "data": data}
    write_whole(where, json.dumps(entry).encode("utf-8"))
    return data, list(digests)
