"""Reading the estimator's arguments: integers, switches and word lists as Megatron's argparse
gives them, or as a configuration file writes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from megalint.errors import ScriptError


class InvalidConfig(ScriptError, ValueError):
    """The arguments describe no valid Megatron layout for this world size."""


def as_int(v: Any, name: str) -> int:
    if isinstance(v, bool) or v is None:
        raise InvalidConfig(f"{name} must be an integer, got {v!r}")
    try:
        return int(v)
    except (TypeError, ValueError) as e:
        raise InvalidConfig(f"{name} must be an integer, got {v!r}") from e


def truthy(v: object) -> bool:
    if isinstance(v, str):
        return v.lower() not in ("", "0", "false", "no", "none")
    return bool(v)


def opt_int(a: Mapping[str, Any], name: str) -> int | None:
    v = a.get(name)
    return None if v is None else as_int(v, name)


def as_words(v: Any) -> list[str] | None:
    """A nargs='*' argument given as one string ("[a b]" or "a,b") or as a list."""
    if v is None:
        return None
    if isinstance(v, str):
        return [w for w in v.replace("[", " ").replace("]", " ").replace(",", " ").split() if w]
    return [str(w) for w in v]
