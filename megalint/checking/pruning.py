"""Keeping `.megalint_cache/` small: entries not used for a month go, and past a cap the least
recently used go first.

Every edit of a script makes a new result, and every new command line a new replay; nothing else
ever removes the old ones. An entry's time is when it was last written or used: a run that reads
one whose time is a day old sets it again (`cachedir.used`), so that an entry in daily use is never the
oldest. A run that wrote entries prunes the folder at most once a day (the time of a marker file
says when it last did), so a run pays for the scan about once a day. Removing an entry is always
safe: a run that finds it gone checks the file again, and one that had it open reads it whole.
"""

from __future__ import annotations

import os
import time

from megalint.cachedir import DAY_NS
from megalint.replay import FOLDER as REPLAY_FOLDER

UNUSED_NS = 30 * DAY_NS  # an entry not used for this long is removed
MARKER = "pruned"  # its time: when the folder was last pruned
# The most entries kept of each kind: results (one per version of each script checked), the sets
# of Python files results rest on, and replays (one per command line run).
CAPS = {"results": 20_000, "code": 2_000, "replay": 2_000}
_TEMPORARY = (".tmp-", ".tmp")  # a write in progress (prefix of results, suffix of replays)


def prune(folder: str, code_sets: str, now_ns: int | None = None) -> int:
    """Prune the cache `folder` if it was not pruned in the last day; how many files it removed.
    `code_sets`: the name of the results' folder of sets of Python files."""
    now = time.time_ns() if now_ns is None else now_ns
    marker = os.path.join(folder, MARKER)
    try:
        if now - os.stat(marker).st_mtime_ns < DAY_NS:
            return 0
    except OSError:
        if not os.path.isdir(folder):
            return 0
    try:
        # Said first: a run starting meanwhile does not prune the same folder again.
        with open(marker, "wb"):
            pass
        os.utime(marker, ns=(now, now))
    except OSError:
        return 0
    groups: dict[str, list[tuple[int, str]]] = {kind: [] for kind in CAPS}
    removed = 0
    for name, kind in _folders(folder, code_sets):
        for entry, mtime in _entries(os.path.join(folder, name)):
            if entry.name.startswith(_TEMPORARY[0]) or entry.name.endswith(_TEMPORARY[1]):
                # Left by a run that was killed while writing; one in progress is younger.
                if now - mtime > DAY_NS:
                    removed += _remove(entry.path)
            elif now - mtime > UNUSED_NS:
                removed += _remove(entry.path)
            else:
                groups[kind].append((mtime, entry.path))
    for kind, entries in groups.items():
        excess = len(entries) - CAPS[kind]
        if excess > 0:
            entries.sort()
            removed += sum(_remove(path) for _, path in entries[:excess])
    return removed


def _folders(folder: str, code_sets: str) -> list[tuple[str, str]]:
    """The folders of entries in the cache, each with the kind of its entries."""
    replay = os.path.basename(REPLAY_FOLDER)
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in sorted(names):
        if name == code_sets:
            out.append((name, "code"))
        elif name == replay:
            out.append((name, "replay"))
        elif len(name) == 2 and all(c in "0123456789abcdef" for c in name):
            out.append((name, "results"))
    return out


def _entries(folder: str) -> list[tuple[os.DirEntry[str], int]]:
    out = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    if entry.is_file(follow_symlinks=False):
                        out.append((entry, entry.stat(follow_symlinks=False).st_mtime_ns))
                except OSError:
                    continue
    except OSError:
        pass
    return out


def _remove(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1
