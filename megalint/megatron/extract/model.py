"""The catalogue data model and argparse's rules for turning add_argument() keywords into an action."""

from __future__ import annotations

from dataclasses import dataclass, field

from .values import EnumClass, EnumMember, Expr

# argparse's own defaults per action when add_argument() is given no `default=`.
_ACTION_DEFAULTS = {"store_true": False, "store_false": True}

# argparse.BooleanOptionalAction and friends, by the name the source uses.
ACTION_CLASSES = {
    "BooleanOptionalAction": "boolean_optional",
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_CountAction": "count",
    "_ExtendAction": "extend",
}

NARGS_CONSTANTS = {
    "OPTIONAL": "?",
    "ZERO_OR_MORE": "*",
    "ONE_OR_MORE": "+",
    "REMAINDER": "...",
    "SUPPRESS": "==SUPPRESS==",
}


@dataclass
class Flag:
    """One argparse action. `origin` and `condition` say where it came from; they are not part of the JSON."""

    option_strings: list[str]
    dest: str
    action: str
    type: str | None
    default: object
    choices: list[object] | dict[str, object] | None
    nargs: str | int | dict[str, object] | None
    deprecated: object = None
    origin: str = ""
    condition: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "option_strings": list(self.option_strings),
            "dest": self.dest,
            "action": self.action,
            "type": self.type,
            "default": self.default,
            "choices": self.choices,
            "nargs": self.nargs,
            "deprecated": self.deprecated,
        }


@dataclass
class Catalogue:
    """The flags extracted from one source tree, before they become a catalogue."""

    version: str
    generated_from: str
    flags: list[Flag]
    warnings: list[str] = field(default_factory=list)
    parsed_files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "version": self.version,
            "generated_from": self.generated_from,
            "flags": [f.to_json() for f in self.flags],
        }

    def by_option(self) -> dict[str, Flag]:
        return {opt: f for f in self.flags for opt in f.option_strings}


def json_value(value: object) -> object:
    """A JSON-ready form: enum members by name, unknown values as {"__expr__": source}."""
    if isinstance(value, Expr):
        return {"__expr__": value.source}
    if isinstance(value, EnumMember):
        return value.name
    if isinstance(value, EnumClass):
        return [m.name for m in value.members]
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(json_value(k)): json_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"__expr__": repr(value)}


def json_choices(value: object) -> list[object] | dict[str, object] | None:
    if value is None:
        return None
    if isinstance(value, EnumClass):
        return [m.name for m in value.members]
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, str):
        return list(value)  # argparse tests `in` on a string: each character is a choice
    return json_value(value)  # type: ignore[return-value]


def infer_dest(option_strings: list[str]) -> str:
    """argparse's dest for optional arguments: the first `--long` name, else the first name, dashes to underscores."""
    long_names = [s for s in option_strings if len(s) > 1 and s[1] == "-"]
    chosen = long_names[0] if long_names else option_strings[0]
    return chosen.lstrip("-").replace("-", "_")


def boolean_optional_strings(option_strings: list[str]) -> list[str]:
    out: list[str] = []
    for s in option_strings:
        out.append(s)
        if s.startswith("--"):
            out.append("--no-" + s[2:])
    return out


def build_flag(
    option_strings: list[str],
    kwargs: dict[str, object],
    *,
    type_name: str | None,
    action: str,
    origin: str,
    condition: str | None,
) -> Flag:
    """Apply argparse's add_argument() semantics to already-evaluated keywords."""
    strings = list(option_strings)
    if option_strings and not option_strings[0].startswith("-"):
        dest_default = option_strings[0]
    else:
        dest_default = infer_dest(option_strings) if option_strings else ""
    if action == "boolean_optional":
        strings = boolean_optional_strings(option_strings)
    dest = kwargs.get("dest", dest_default)
    if "default" in kwargs:
        default = kwargs["default"]
    else:
        default = _ACTION_DEFAULTS.get(action)
    nargs = kwargs.get("nargs")
    deprecated = kwargs.get("deprecated")
    return Flag(
        option_strings=strings,
        dest=dest if isinstance(dest, str) else json_value(dest),  # type: ignore[arg-type]
        action=action,
        type=type_name,
        default=json_value(default),
        choices=json_choices(kwargs.get("choices")),
        nargs=json_value(nargs),  # type: ignore[arg-type]
        deprecated=json_value(deprecated) if deprecated is not None else None,
        origin=origin,
        condition=condition,
    )
