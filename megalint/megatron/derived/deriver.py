"""The machinery of derived values: a value with how it was computed and the rule it follows,
and the deriver that computes each from known inputs or says which input is unknown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from megalint.megatron.bound import BoundArgs
from megalint.megatron.versions import version_key
from megalint.shell.values import Unknown

ARGS = "megatron/training/arguments.py"

# What a rule computes from its known inputs: (value, how), or (None, "", the error Megatron
# would stop with).
Computed = tuple[Any, str] | tuple[Any, str, str]


@dataclass(frozen=True)
class Derived:
    """One value Megatron works out from the arguments, or why it cannot be known."""

    name: str
    value: Any  # the value (None = "not set", as in Megatron), or Unknown
    how: str  # the computation with its numbers, for messages and `megalint model`
    inputs: tuple[str, ...] = ()  # the dests and derived names it reads
    source: str = ""  # file:line@version of the rule
    error: str | None = None  # what Megatron would stop with, when it would

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)


def at_least(version: str, other: str) -> bool:
    return version_key(version) >= version_key(other)


def cite(version: str, table: dict[str, str]) -> str:
    """The citation for the newest listed version not newer than `version`."""
    best = None
    for v in table:
        if at_least(version, v) and (best is None or version_key(v) > version_key(best)):
            best = v
    return table[best] if best is not None else ""


class Deriver:
    """The derived values of one binding, computed rule by rule: each rule reads the bound
    arguments and the values derived before it, and puts what it derives."""

    def __init__(self, bound: BoundArgs, world_size: Any, version: str):
        self.bound = bound
        self.version = version
        self.out: dict[str, Derived] = {}
        if world_size is None:
            world: Any = Unknown("the world size is not known")
        elif isinstance(world_size, Unknown):
            world = world_size
        elif isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
            world = Unknown(f"the world size {world_size!r} is not a positive integer")
        else:
            world = world_size
        self.put("world_size", world, "the number of processes the launch starts")

    # -- helpers ---------------------------------------------------------------------------

    def arg(self, dest: str, absent: Any = None) -> Any:
        """A bound value; `absent` when this version has no such flag."""
        return self.bound.value(dest, absent)

    def get(self, name: str) -> Any:
        return self.out[name].value

    def put(
        self, name: str, value: Any, how: str, inputs: tuple[str, ...] = (), source: str = "", error: str | None = None
    ) -> Any:
        self.out[name] = Derived(name, value, how, inputs, source, error)
        return value

    def need(
        self,
        name: str,
        inputs: dict[str, Any],
        source: str,
        compute: Callable[..., Computed],
    ) -> Any:
        """Compute `name` from inputs when all are known; else Unknown naming the first one."""
        for key, value in inputs.items():
            if isinstance(value, Unknown):
                return self.put(
                    name,
                    Unknown(f"{name} needs {key}, which is unknown: {value.reason}", value.span),
                    f"needs {key}",
                    tuple(inputs),
                    source,
                )
        result = compute(**inputs)
        value, how = result[0], result[1]
        error = result[2] if len(result) > 2 else None
        if error is not None:
            value = Unknown(error)
        return self.put(name, value, how, tuple(inputs), source, error)
