"""Read-only access to a Megatron-LM source tree: a checkout directory or a wheel file.

A wheel is read member by member from the zip in memory; nothing is unpacked to disk.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from megalint.errors import InputError

ARGUMENTS_PATHS = ("megatron/training/arguments.py", "megatron/arguments.py")


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
            return path.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except UnicodeDecodeError as exc:
            raise ExtractError(f"{path}: not UTF-8 text ({exc})") from None

    def exists(self, relpath: str) -> bool:
        return (self.root / relpath).is_file()


class WheelTree(SourceTree):
    kind = "wheel"

    def __init__(self, path: Path):
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ExtractError(f"{path}: not a readable wheel (zip) file: {exc}") from None
        self.label = path.name
        self._names = set(self._zip.namelist())

    def read(self, relpath: str) -> str | None:
        if relpath not in self._names:
            return None
        try:
            return self._zip.read(relpath).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ExtractError(f"{self.label}:{relpath}: not UTF-8 text ({exc})") from None
        except (zipfile.BadZipFile, OSError) as exc:
            raise ExtractError(f"{self.label}:{relpath}: cannot be read: {exc}") from None

    def exists(self, relpath: str) -> bool:
        return relpath in self._names

    def close(self) -> None:
        self._zip.close()


def open_tree(path: str | os.PathLike[str]) -> SourceTree:
    """Open `path` as a Megatron-LM checkout (the directory holding `megatron/`, or `megatron/` itself) or a wheel."""
    p = Path(path)
    if not p.exists():
        raise ExtractError(f"{p}: no such file or directory")
    if p.is_file():
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
