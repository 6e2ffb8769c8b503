"""Flag catalogue extraction: read Megatron-LM's argument parser from its source with libcst, never importing it.

    catalogue = extract_catalogue("/path/to/Megatron-LM")            # a checkout
    catalogue = extract_catalogue("megatron_core-0.19.2-...whl")      # a wheel, read in memory
    json.dump(catalogue.to_json(), fp)

`megalint catalogue --from PATH [-o FILE] [--version-label X]` writes it (megalint/cli/catalogue.py).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from megalint import lazy_re

from .sources import ExtractError, SourceTree, open_tree

if TYPE_CHECKING:
    from .model import Catalogue, Flag

__all__ = ["Catalogue", "ExtractError", "Flag", "extract_catalogue", "extract_from_tree"]


def extract_catalogue(
    path: str | os.PathLike[str], version_label: str | None = None, generated_from: str | None = None
) -> Catalogue:
    """The catalogue of the argparse parser that `megatron/training/arguments.py` under `path` builds.

    Raises ExtractError when `path` is not a Megatron-LM tree or wheel or its parser cannot be read.
    """
    tree = open_tree(path)
    try:
        return extract_from_tree(tree, version_label, generated_from)
    finally:
        tree.close()


def extract_from_tree(
    tree: SourceTree, version_label: str | None = None, generated_from: str | None = None
) -> Catalogue:
    # Imported here: libcst is needed to read a tree, not to name this package's errors and sources
    # (a fork's catalogue read from the extraction cache).
    from .model import Catalogue
    from .parser_walk import ParserWalker
    from .pymodules import ModuleIndex

    args_path = tree.arguments_path()
    module_name = args_path[: -len(".py")].replace("/", ".")
    index = ModuleIndex(tree)
    module = index.get(module_name)
    if module is None:
        raise ExtractError(f"{tree.label}: {args_path} cannot be read")
    warnings: list[str] = []
    try:
        flags = ParserWalker(index, module, warnings).run()
    except LookupError as exc:
        raise ExtractError(f"{tree.label}: {exc}") from None
    except RecursionError:
        raise ExtractError(f"{tree.label}: {args_path}: expressions nest too deeply to read") from None
    label = version_label or _version_from_tree(tree) or "unknown"
    origin = generated_from or f"{tree.label} ({tree.kind}; {args_path} read with libcst)"
    return Catalogue(
        version=label, generated_from=origin, flags=flags, warnings=warnings, parsed_files=index.parsed_files
    )


def __getattr__(name: str) -> Any:
    if name in ("Catalogue", "Flag"):
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module 'megalint.megatron.extract' has no attribute {name!r}")


_WHEEL_VERSION = lazy_re.compile(r"^[A-Za-z0-9_.]+?-(?P<version>[0-9][^-]*)-")


def _version_from_tree(tree: SourceTree) -> str | None:
    if tree.kind == "wheel":
        m = _WHEEL_VERSION.match(tree.label)
        if m:
            return m.group("version")
    text = tree.read("megatron/core/package_info.py")
    if text is None:
        return None
    parts = {}
    for key in ("MAJOR", "MINOR", "PATCH", "PRE_RELEASE"):
        m = re.search(rf"^{key}\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|(\d+))", text, re.M)
        if m:
            parts[key] = next(g for g in m.groups() if g is not None)
    if not all(k in parts for k in ("MAJOR", "MINOR", "PATCH")):
        return None
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}{parts.get('PRE_RELEASE', '')}"
