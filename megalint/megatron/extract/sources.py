"""Read-only access to a Megatron-LM source tree: a checkout directory or a wheel file.

A wheel is read member by member from the zip in memory; nothing is unpacked to disk. Every file
is read with a size cap (a member is streamed, so a zip bomb stops at the cap), and only regular
files are read (a FIFO named `arguments.py` would block).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from megalint import probes
from megalint.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path  # imported where a tree is opened: a first check opens none

ARGUMENTS_PATHS = ("megatron/training/arguments.py", "megatron/arguments.py")
# The source files the extractor reads are far smaller (bounds.MAX_SOURCE_CHARS caps what libcst
# parses); this caps what is read at all.
MAX_FILE_BYTES = 4 << 20


class ExtractError(InputError):
    """Bad input: the path is not a Megatron-LM tree or wheel, or its arguments cannot be read."""


class SourceTree:
    """Files of a Megatron-LM tree, addressed by POSIX paths relative to the directory holding `megatron/`."""

    label: str
    kind: str

    def read(self, relpath: str) -> str | None:
        raise NotImplementedError

    def exists(self, relpath: str) -> bool:
        raise NotImplementedError

    def arguments_path(self) -> str:
        for candidate in ARGUMENTS_PATHS:
            if self.exists(candidate):
                return candidate
        raise ExtractError(
            f"{self.label}: no megatron/training/arguments.py (nor megatron/arguments.py) in this {self.kind}; "
            "megatron-core wheels older than 0.17 ship only megatron/core"
        )

    def close(self) -> None:
        pass


class DirectoryTree(SourceTree):
    kind = "directory"

    def __init__(self, root: Path):
        self.root = root
        self.label = str(root)

    def read(self, relpath: str) -> str | None:
        path = self.root / relpath
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                raise ExtractError(f"{path}: not a regular file")
            with open(path, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            probes.exists(path)  # not there: what was read rests on that too
            return None
        except OSError as exc:
            raise ExtractError(f"{path}: cannot be read: {exc.strerror or exc}") from None
        return _text(data, str(path))

    def exists(self, relpath: str) -> bool:
        return probes.is_file(self.root / relpath)


class WheelTree(SourceTree):
    kind = "wheel"

    def __init__(self, path: Path):
        import zipfile  # only for a wheel: a checkout, the common case, needs it not

        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ExtractError(f"{path}: not a readable wheel (zip) file: {exc}") from None
        self.label = path.name
        self._names = set(self._zip.namelist())

    def read(self, relpath: str) -> str | None:
        import zipfile

        if relpath not in self._names:
            return None
        try:
            with self._zip.open(relpath) as member:
                data = member.read(MAX_FILE_BYTES + 1)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
            raise ExtractError(f"{self.label}:{relpath}: cannot be read: {exc}") from None
        return _text(data, f"{self.label}:{relpath}")

    def exists(self, relpath: str) -> bool:
        return relpath in self._names

    def close(self) -> None:
        self._zip.close()


def _text(data: bytes, where: str) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise ExtractError(f"{where}: larger than {MAX_FILE_BYTES:,} bytes: not a source file of Megatron-LM")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtractError(f"{where}: not UTF-8 text ({exc})") from None


def open_tree(path: str | os.PathLike[str]) -> SourceTree:
    """Open `path` as a Megatron-LM checkout (the directory holding `megatron/`, or `megatron/` itself) or a wheel."""
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        raise ExtractError(f"{p}: no such file or directory")
    if p.is_file():
        import zipfile

        if not zipfile.is_zipfile(p):
            raise ExtractError(f"{p}: neither a directory nor a wheel (zip) file")
        tree: SourceTree = WheelTree(p)
    elif p.is_dir():
        if not (p / "megatron").is_dir() and p.name == "megatron" and (p / "__init__.py").exists():
            p = p.parent
        tree = DirectoryTree(p)
    else:
        raise ExtractError(f"{p}: neither a directory nor a wheel file")
    try:
        tree.arguments_path()
    except ExtractError:
        tree.close()
        raise
    return tree
