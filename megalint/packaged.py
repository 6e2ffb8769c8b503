"""The folders of megalint's packaged files (its data, its rules, the rule schema).

`importlib.resources.files` answers for any kind of install, but its readers import zipfile,
and zipfile the compression modules: about 3 ms of the 130 ms a first check of a three-line
script took. pip installs megalint as files, so a package's folder is
the one its `__init__.py` is in, found by the import spec alone; where a package is not a file
on disk (imported from a zip), `importlib.resources` answers, imported then.

A folder on disk is a `Folder`, not a `pathlib.Path`: pathlib imports urllib.parse, and it
ipaddress, about 4 ms of a first check that reads no packaged file but the rules' cache entry.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.abc import Traversable


@cache
def files(package: str) -> Traversable:
    """The folder of `package`'s files, as `importlib.resources.files(package)` gives it: for a
    package imported from files, the `Folder` it is in."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        # As importlib.resources says it (megalint.rules, in a checkout run in place, is not one).
        raise ModuleNotFoundError(f"No module named {package!r}", name=package)
    origin = spec.origin if spec.has_location else None
    if origin is not None and spec.submodule_search_locations is not None:
        folder, name = os.path.split(origin)
        if name == "__init__.py" and os.path.isfile(origin):
            return Folder(folder)
    from importlib import resources

    return resources.files(package)


@contextmanager
def as_file(entry: Traversable) -> Iterator[str | os.PathLike[str]]:
    """A packaged file as a path on disk, as `importlib.resources.as_file` gives it: the file
    itself when it is one."""
    if isinstance(entry, os.PathLike):
        yield entry
        return
    from importlib import resources

    with resources.as_file(entry) as path:
        yield path


class Folder(os.PathLike):  # type: ignore[type-arg]
    """A file or folder of a package on disk: as much of `importlib.abc.Traversable` as megalint
    reads of its packaged files, on `os.path`."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"Folder({self.path!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, os.PathLike) and os.fspath(other) == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    def joinpath(self, *names: str) -> Folder:
        return Folder(os.path.join(self.path, *names))

    __truediv__ = joinpath

    def iterdir(self) -> Iterator[Folder]:
        return (Folder(e.path) for e in os.scandir(self.path))

    def is_dir(self) -> bool:
        return os.path.isdir(self.path)

    def is_file(self) -> bool:
        return os.path.isfile(self.path)

    def read_bytes(self) -> bytes:
        with open(self.path, "rb") as fh:
            return fh.read()

    def read_text(self, encoding: str | None = None) -> str:
        with open(self.path, encoding=encoding) as fh:
            return fh.read()

    def open(self, mode: str = "r", *args: Any, **kwargs: Any) -> IO[Any]:
        return open(self.path, mode, *args, **kwargs)  # noqa: SIM115 - the caller closes it
