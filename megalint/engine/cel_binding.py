"""The CEL binding without its command line.

The `cel` package's `__init__` imports its interactive command line (typer, prompt_toolkit, rich,
pygments: about 120 ms) before the compiled module megalint uses. This module imports the compiled
module and the pure-Python standard library beside it without running that `__init__`: it puts in
its place a package module with the same search path and the names the `__init__` exports, so that
`cel.cli` can still be imported by whoever asks for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from functools import cache
from types import ModuleType


@cache
def binding() -> tuple[ModuleType, ModuleType]:
    """The compiled CEL module (`compile`, `Context`) and `cel.stdlib`, imported on first use."""
    if "cel" not in sys.modules:
        spec = importlib.util.find_spec("cel")
        if spec is not None and spec.submodule_search_locations is not None:
            package = importlib.util.module_from_spec(spec)
            sys.modules["cel"] = package
            try:
                native = importlib.import_module("cel.cel")
            except BaseException:
                del sys.modules["cel"]
                raise
            exported = getattr(native, "__all__", [n for n in dir(native) if not n.startswith("_")])
            for name in exported:
                setattr(package, name, getattr(native, name))
    # The binding logs each failing Python function (`lists.range` over its bound) as a warning,
    # which Python would print to standard error; megalint reports the rule's failure itself.
    # (Imported here, as the binding is: a script whose rules run no condition needs neither.)
    import logging

    logging.getLogger("cel").addHandler(logging.NullHandler())
    return importlib.import_module("cel.cel"), importlib.import_module("cel.stdlib")
