"""What megalint keeps in its cache folder (cachedir.py) and how it names it.

An entry is a pickle behind the BLAKE2b of its bytes (about as fast to check as OpenSSL's
SHA-256, without loading OpenSSL: CPython's own SHA-256 takes 2.5 ms over the packaged rules'
0.9 MB, BLAKE2b 0.8 ms): one that is truncated, corrupt or does not unpickle reads as missing, and
is written again. It is written to a temporary file and renamed,
so that runs sharing the folder never read a half-written one.

Every build of megalint (each upgrade, each edit of a source checkout) writes entries of its own
and never reads another's: when an entry is written, those of its folder neither written nor read
for a week are removed (a read sets an entry's time once a day, as the cache of results does).

What megalint builds from its own files (the packaged rules, the shipped catalogues) changes
when those files do. In an installed wheel they change only by the wheel being installed again,
which writes its `*.dist-info/RECORD` anew: the RECORD's stamp names them all with one stat, none
of them read. A source checkout has no such stamp: there its files are read and hashed.
"""

from __future__ import annotations

import gc
import os
import pickle
import time
from typing import Any

from megalint.cachedir import DAY_NS, read_kept, used, write_whole
from megalint.digests import blake2b

_DIGEST = 64  # hex characters of a 32-byte BLAKE2b
UNUSED_NS = 7 * DAY_NS  # an entry neither written nor read for this long is another build's


def read_entry(where: str | os.PathLike[str]) -> Any | None:
    """What an entry holds, or None when it is missing, truncated or corrupt."""
    where = os.fspath(where)
    kept = read_kept(where)
    if kept is None:
        return None
    blob, mtime_ns = kept
    digest, payload = blob[:_DIGEST], blob[_DIGEST + 1 :]
    if blob[_DIGEST : _DIGEST + 1] != b"\n" or _checksum(payload) != digest:
        return None
    used(where, mtime_ns)
    collecting = gc.isenabled()
    gc.disable()  # unpickling makes thousands of objects and no garbage: a collection only costs time
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - an entry of another build: ignored, written again
        return None
    finally:
        if collecting:
            gc.enable()


def write_entry(where: str | os.PathLike[str], value: object) -> None:
    """Keep `value` at `where`; a cache that cannot be written only costs the next run the same work."""
    where = os.fspath(where)
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if write_whole(where, _checksum(payload) + b"\n" + payload):
        forget_unused(where)


def forget_unused(where: str | os.PathLike[str], now_ns: int | None = None) -> int:
    """Remove the entries of `where`'s folder (its kind: the same suffix) neither written nor
    read for UNUSED_NS, and temporary files left a day ago by a run that was killed while
    writing; how many it removed. Removing an entry is always safe: a run that finds it gone
    builds it again."""
    now = time.time_ns() if now_ns is None else now_ns
    folder, name = os.path.split(os.fspath(where))
    suffix = os.path.splitext(name)[1]
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        if entry.name == name:
            continue
        if entry.name.endswith(".tmp") and f"{suffix}." in entry.name:
            limit = DAY_NS  # a write in progress is younger
        elif entry.name.endswith(suffix) and not entry.name.endswith(".tmp"):
            limit = UNUSED_NS
        else:
            continue
        try:
            if now - entry.stat().st_mtime_ns > limit:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


def _checksum(payload: bytes) -> bytes:
    return blake2b(payload, digest_size=_DIGEST // 2).hexdigest().encode()
