"""Reading a script and writing its fixes back, safely on any file system a pull request can make.

A script is read only when it is a regular file (a FIFO, a device or a socket is never opened for
reading: `/dev/zero` would be read forever, a FIFO would wait for a writer), at most
`MAX_SCRIPT_BYTES` of it, and the NUL check is made on the first block before the rest is read.

Fixes are written to a temporary file beside the script and renamed over it, only when the file
still holds what was read (an edit made meanwhile is never overwritten), only inside the lint
root (a link to a file elsewhere is never followed to write), and keeping the file's permissions.
Each problem is a message for that file; the caller reports it and goes on.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from megalint.discovery import shown_name
from megalint.errors import InputError

# A launch script is a few kilobytes; the largest of the public corpus is under 100 KiB.
MAX_SCRIPT_BYTES = 64 * 1024 * 1024
_FIRST_BLOCK = 8192  # where a NUL byte marks a binary file

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(shown: str, mode: int) -> InputError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return InputError(f"{shown}: is {kind}, not a script; only regular files are read")


def _too_large(shown: str, size: int | None = None) -> InputError:
    what = f"{size:,} bytes" if size is not None else "more than that"
    return InputError(f"{shown}: file too large ({what}; megalint reads scripts of at most {MAX_SCRIPT_BYTES:,} bytes)")


def read_stream(fh: BinaryIO, shown: str) -> bytes:
    """At most `MAX_SCRIPT_BYTES` of `fh`, refused as binary on a NUL in its first block."""
    head = fh.read(_FIRST_BLOCK)
    if b"\0" in head:
        raise InputError(f"{shown}: binary file (contains NUL bytes), not a shell script")
    chunks = [head]
    size = len(head)
    while head and size <= MAX_SCRIPT_BYTES:
        head = fh.read(min(1 << 20, MAX_SCRIPT_BYTES + 1 - size))
        chunks.append(head)
        size += len(head)
    if size > MAX_SCRIPT_BYTES:
        raise _too_large(shown)
    return b"".join(chunks)


def read_script(path: str, shown: str) -> bytes:
    """The bytes of the script at `path` (reported as `shown`); InputError or OSError when it
    cannot be read as one."""
    st = os.stat(path)  # its type before it is opened
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(shown, st.st_mode)
    if st.st_size > MAX_SCRIPT_BYTES:  # a sparse file of gigabytes is refused unread
        raise _too_large(shown, st.st_size)
    # Swapped for a FIFO since the check, it must not block the open either.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(shown, mode)
        return read_stream(fh, shown)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def write_fixed(path: str, root: str, shown: str, original: bytes, fixed: bytes) -> str | None:
    """Write `fixed` over the script at `path`, which held `original` when it was read; None when
    written, else why it was not (nothing was changed then). `root` is the folder the file was
    found in: the file written, links followed, must lie inside it."""
    target = os.path.realpath(path)
    top = os.path.realpath(root)
    if not _inside(target, top):
        return f"{shown}: fixes not written: the file links outside {shown_name(root)} (to {shown_name(target)})"
    try:
        st = os.stat(target)
        # The permission bits, not only access(): a read-only file stays so even for root.
        if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(target, os.W_OK):
            return f"{shown}: fixes not written: the file is read-only"
        if read_script(target, shown) != original:
            return f"{shown}: fixes not written: the file changed while it was checked; run megalint again"
        import tempfile  # only to write fixes

        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".megalint", dir=os.path.dirname(target)
        )
    except (OSError, InputError) as exc:
        return f"{shown}: fixes not written: {getattr(exc, 'strerror', None) or exc}"
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(fixed)
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return f"{shown}: fixes not written: {exc.strerror or exc}"
    return None
