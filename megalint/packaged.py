"""The folders of megalint's packaged files (its data, its rules, the rule schema).

`importlib.resources.files` answers for any kind of install, but its readers import zipfile,
and zipfile the compression modules: about 3 ms of the 130 ms a first check of a three-line
script took. pip installs megalint as files, so a package's folder is
the one its `__init__.py` is in, found by the import spec alone; where a package is not a file
on disk (imported from a zip), `importlib.resources` answers, imported then.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable


@cache
def files(package: str) -> Traversable:
    """The folder of `package`'s files, as `importlib.resources.files(package)` gives it: for a
    package imported from files, the `Path` of its folder."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        # As importlib.resources says it (megalint.rules, in a checkout run in place, is not one).
        raise ModuleNotFoundError(f"No module named {package!r}", name=package)
    origin = spec.origin if spec.has_location else None
    if origin is not None and spec.submodule_search_locations is not None:
        folder, name = os.path.split(origin)
        if name == "__init__.py" and os.path.isfile(origin):
            return Path(folder)
    from importlib import resources

    return resources.files(package)


@contextmanager
def as_file(entry: Traversable) -> Iterator[Path]:
    """A packaged file as a path on disk, as `importlib.resources.as_file` gives it: the file
    itself when it is one."""
    if isinstance(entry, Path):
        yield entry
        return
    from importlib import resources

    with resources.as_file(entry) as path:
        yield path
