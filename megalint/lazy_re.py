"""Regular expressions compiled when first used, not when their module is imported.

A check imports some ninety modules' patterns and a run uses few of them: on a three-line script
6 of 72, whose other 66 took 9.5 ms of its 130 ms to compile; on a real launch script 30 to 45
of 92, the others 6 to 8 ms. `compile` gives an object that compiles its pattern when first
asked for anything but its text, and keeps the compiled pattern's own bound methods on itself:
each use after that costs one attribute lookup, as a compiled pattern's does.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not from `typing`: `megalint --help` imports modules with patterns, and no typing
if TYPE_CHECKING:
    from typing import Any, AnyStr

# What a compiled pattern offers, kept on the lazy one once compiled.
_KEPT = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer", "scanner")
_KEPT_VALUES = ("flags", "groups", "groupindex")


class _LazyPattern:
    """A pattern's text and flags, compiled when first used."""

    def __init__(self, pattern: str | bytes, flags: int):
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Only reached for what is not kept yet: the first use compiles the pattern.
        if name.startswith("__"):  # copy and pickle ask for protocol methods it does not have
            raise AttributeError(name)
        compiled = self.compiled()
        return getattr(compiled, name)

    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern, compiled now the first time (then this method is replaced)."""
        compiled = re.compile(self.pattern, self._flags)
        held = self.__dict__
        for name in _KEPT + _KEPT_VALUES:
            held[name] = getattr(compiled, name)
        held["compiled"] = lambda: compiled
        return compiled

    def __reduce__(self) -> tuple[Any, tuple[str | bytes, int]]:
        return (compile, (self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy_re.compile({self.pattern!r}, {self._flags})"


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:  # noqa: A001 - as re.compile
    """`re.compile(pattern, flags)`, done when the pattern is first used."""
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]
