"""Which build of megalint is running, named without reading its files: what a cache entry made by
one build must not be trusted by another.

Kept to `os` and `sys` alone: the replay of a repeated command (replay.py) names the build before
importing anything else.
"""

from __future__ import annotations

import os
import sys
from functools import cache

_PACKAGE = os.path.dirname(os.path.realpath(__file__))


@cache
def _names_in(folder: str) -> tuple[str, ...] | None:
    """The names in `folder`, listed once a run (the wheel's stamp and the environment's read the
    same site-packages); None when it cannot be listed."""
    try:
        return tuple(os.listdir(folder))
    except OSError:
        return None


@cache
def wheel_stamp() -> tuple[str, ...] | None:
    """(the wheel's dist-info folder, its RECORD's time and size) when megalint runs from an
    installed wheel; None in a source checkout (or an editable install, which runs from one)."""
    site = os.path.dirname(_PACKAGE)
    if os.path.basename(site) != "site-packages":
        return None
    for name in _names_in(site) or ():
        if name.startswith("megalint-") and name.endswith(".dist-info"):
            try:
                st = os.stat(os.path.join(site, name, "RECORD"))
            except OSError:
                return None
            return name, str(st.st_mtime_ns), str(st.st_size)
    return None


@cache
def package_stamp() -> tuple[str, ...]:
    """The wheel's stamp; in a checkout, the size and time of every file megalint runs or reads
    (a checkout changed between runs, with the same version number, is another megalint)."""
    stamp = wheel_stamp()
    if stamp is not None:
        # An installed wheel changes only by being installed again, which writes its RECORD anew:
        # one stat instead of one per file (a tenth of a short run).
        return stamp
    root = os.path.dirname(_PACKAGE)
    parts: list[str] = []
    for folder, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".yaml")):
                path = os.path.join(folder, name)
                st = os.stat(path)
                parts.append(f"{os.path.relpath(path, root)}:{st.st_size}:{st.st_mtime_ns}")
    return tuple(parts)


@cache
def environment_stamp() -> tuple[str, ...]:
    """The name and version of every distribution installed beside megalint (their dist-info
    folders): a report is drawn by some of them (rich measures the cells of a line), so a
    replayed report is another's once any of them is upgraded."""
    names: list[str] = []
    for folder in sys.path:
        if os.path.basename(folder) in ("site-packages", "dist-packages"):
            names.extend(n for n in _names_in(folder) or () if n.endswith((".dist-info", ".egg-info")))
    return tuple(sorted(names))
