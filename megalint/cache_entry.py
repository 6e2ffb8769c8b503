"""What megalint keeps in its cache folder (cachedir.py) and how it names it.

An entry is a pickle behind the SHA-256 of its bytes: one that is truncated, corrupt or does not
unpickle reads as missing, and is written again. It is written to a temporary file and renamed,
so that runs sharing the folder never read a half-written one.

What megalint builds from its own files (the packaged rules, the shipped catalogues) changes
when those files do. In an installed wheel they change only by the wheel being installed again,
which writes its `*.dist-info/RECORD` anew: the RECORD's stamp names them all with one stat, none
of them read. A source checkout has no such stamp: there its files are read and hashed.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
from pathlib import Path
from typing import Any

_DIGEST = 64  # hex characters of a SHA-256


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
    """Keep `value` at `where`; a cache that cannot be written only costs the next run the same work."""
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    blob = hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_name(f"{where.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        tmp.replace(where)
    except OSError:
        pass
