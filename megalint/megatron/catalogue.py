"""Megatron-LM command-line flags, per version, as data.

Catalogue file format (JSON, UTF-8), one file per Megatron version
=================================================================

    {
      "format": 1,
      "version": "0.15",                      # a catalogue version: "HEAD", "0.19", "0.15" ...
      "megatron_ref": "core_v0.15.0",         # optional: the tag/commit it describes
      "generated_from": "free text",          # optional: how it was made
      "flags": [ <flag>, ... ]                # in parser registration order (see below)
    }

One <flag> per argparse action:

    {
      "option_strings": ["--save-interval", "--persistent-save-interval"],   # required
      "dest": "save_interval",                                              # required
      "action": "store",        # store | store_true | store_false | store_const | append |
                                # append_const | count | boolean_optional
                                # (boolean_optional = argparse.BooleanOptionalAction: its
                                # option strings include the "--no-..." spellings)
      "type": "int",            # null (a string), "int", "float", "str", "bool" (argparse
                                # bool(): any non-empty string is True), "enum" (the value is
                                # a member name; choices lists the names), or the name of a
                                # Megatron converter function ("moe_freq_type", "tuple_type"...)
      "default": 1000,          # a JSON value, or {"__expr__": "<python source>"} when Megatron
                                # computes it (2 ** 32, int(os.getenv('LOCAL_RANK', '0')) ...)
      "choices": null,          # or a list of JSON values (converted with `type`)
      "nargs": null,            # null | "?" | "*" | "+" | an int
      "const": null,            # optional; store_const / append_const / nargs "?"
      "deprecated": null,       # optional; a short note when Megatron deprecates the flag
      "deprecated_choices": {"dist_muon": "use ..."},   # optional; deprecated values
      "present_in": {"--save-interval": ["0.8", "0.12", ...]},   # optional; versions that
                                # define each option string
      "source": "...",          # optional; where Megatron defines it
      "notes": ["..."]          # optional; citations for facts that needed correcting
    }

Only `option_strings` and `dest` are required; the other keys default to store / null.
Several actions may share a dest (`--yarn-x` store_true and `--no-yarn-x` store_false); as in
argparse, the default of a dest is the default of the first action registered with it, so list
flags in registration order. Option strings that are aliases of one action (same dest and
action) belong in one entry.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from megalint import __version__, packaged
from megalint.cache_entry import read_entry, write_entry
from megalint.cachedir import cache_folder
from megalint.digests import sha256
from megalint.errors import DataFormatError
from megalint.megatron import versions as _versions
from megalint.megatron.close_options import CloseOptions
from megalint.megatron.versions import KNOWN_VERSIONS, known_versions, resolve_version, version_key
from megalint.stamp import wheel_stamp

if TYPE_CHECKING:
    from importlib.abc import Traversable

__all__ = [
    "ACTIONS",
    "Catalogue",
    "CatalogueError",
    "DefaultExpr",
    "FlagHistory",
    "FlagSpec",
    "known_versions",
    "resolve_version",
    "shipped_dests",
    "shipped_options",
]

ACTIONS = frozenset(
    {
        "store",
        "store_true",
        "store_false",
        "store_const",
        "append",
        "append_const",
        "count",
        "boolean_optional",
    }
)
# Actions that never take a value word.
NO_VALUE_ACTIONS = frozenset(
    {
        "store_true",
        "store_false",
        "store_const",
        "append_const",
        "count",
        "boolean_optional",
    }
)


class CatalogueError(DataFormatError, ValueError):
    """A catalogue file that does not follow the format."""


@dataclass(frozen=True)
class DefaultExpr:
    """A default Megatron computes with Python when it builds the parser."""

    source: str

    def to_json(self) -> dict[str, Any]:
        return {"__expr__": self.source}


@dataclass(frozen=True)
class FlagSpec:
    """One argparse action of Megatron's parser."""

    option_strings: tuple[str, ...]
    dest: str
    action: str = "store"
    type: str | None = None
    default: Any = None  # a JSON value (lists as tuples) or a DefaultExpr
    choices: tuple[Any, ...] | None = None
    nargs: str | int | None = None
    const: Any = None
    deprecated: str | None = None
    deprecated_choices: tuple[tuple[Any, str], ...] = ()  # (value, note) pairs
    present_in: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (option, versions) pairs
    source: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The main spelling, for messages."""
        return self.option_strings[0]

    @property
    def takes_value(self) -> bool:
        return self.action not in NO_VALUE_ACTIONS

    def versions_of(self, option: str) -> tuple[str, ...] | None:
        for opt, vers in self.present_in:
            if opt == option:
                return vers
        return None

    @staticmethod
    def from_json(data: Mapping[str, Any], where: str = "") -> FlagSpec:
        try:
            options = data["option_strings"]
            dest = data["dest"]
        except KeyError as exc:
            raise CatalogueError(f"{where}: a flag lacks {exc.args[0]!r}") from None
        if (
            not isinstance(options, list)
            or not options
            or not all(isinstance(o, str) and o.startswith("-") for o in options)
        ):
            raise CatalogueError(f"{where}: option_strings must be a non-empty list of flags")
        if not isinstance(dest, str) or not dest:
            raise CatalogueError(f"{where}: {options[0]}: dest must be a non-empty string")
        action = data.get("action") or "store"
        if action not in ACTIONS:
            raise CatalogueError(f"{where}: {options[0]}: unknown action {action!r}")
        nargs = data.get("nargs")
        if (
            nargs is not None
            and nargs not in ("?", "*", "+")
            and not (isinstance(nargs, int) and not isinstance(nargs, bool) and nargs >= 0)
        ):
            raise CatalogueError(f"{where}: {options[0]}: bad nargs {nargs!r}")
        choices = data.get("choices")
        if choices is not None and not isinstance(choices, list):
            raise CatalogueError(f"{where}: {options[0]}: choices must be a list or null")
        return FlagSpec.from_checked_json(data)

    @staticmethod
    def from_checked_json(data: Mapping[str, Any]) -> FlagSpec:
        """A flag known to follow the format: `from_json` once it has checked it, or a flag of a
        shipped catalogue (tests/startup/test_catalogue_load.py reads each both ways)."""
        choices = data.get("choices")
        present = data.get("present_in")
        return FlagSpec(
            tuple(data["option_strings"]),
            data["dest"],
            data.get("action") or "store",
            data.get("type"),
            _default_from_json(data.get("default")),
            None if choices is None else tuple(_freeze(c) for c in choices),
            data.get("nargs"),
            _freeze(data.get("const")),
            data.get("deprecated"),
            tuple((data.get("deprecated_choices") or {}).items()),
            tuple((k, tuple(v)) for k, v in present.items()) if present else (),
            data.get("source"),
            tuple(data.get("notes") or ()),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "option_strings": list(self.option_strings),
            "dest": self.dest,
            "action": self.action,
            "type": self.type,
            "default": _default_to_json(self.default),
            "choices": None if self.choices is None else [_thaw(c) for c in self.choices],
            "nargs": self.nargs,
            "deprecated": self.deprecated,
        }
        if self.deprecated_choices:
            out["deprecated_choices"] = dict(self.deprecated_choices)
        if self.const is not None:
            out["const"] = _thaw(self.const)
        if self.present_in:
            out["present_in"] = {k: list(v) for k, v in self.present_in}
        if self.source:
            out["source"] = self.source
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _default_from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__expr__"} and isinstance(value["__expr__"], str):
            return DefaultExpr(value["__expr__"])
        raise CatalogueError(f"a default object must be {{'__expr__': source}}, got {value!r}")
    return _freeze(value)


def _default_to_json(value: Any) -> Any:
    if isinstance(value, DefaultExpr):
        return value.to_json()
    return _thaw(value)


@dataclass(frozen=True)
class FlagHistory:
    """Which catalogue versions define an option string."""

    option: str
    defined_in: tuple[str, ...]  # oldest first

    @property
    def known(self) -> bool:
        return bool(self.defined_in)

    @property
    def first(self) -> str | None:
        return self.defined_in[0] if self.defined_in else None

    @property
    def last(self) -> str | None:
        return self.defined_in[-1] if self.defined_in else None

    def relation(self, version: str) -> str:
        """ "present", "added" (only in newer versions), "removed" (only in older ones),
        "gap" (in versions on both sides but not this one) or "unknown" (in none)."""
        if not self.defined_in:
            return "unknown"
        if version in self.defined_in:
            return "present"
        key = version_key(version)
        older = [v for v in self.defined_in if version_key(v) < key]
        newer = [v for v in self.defined_in if version_key(v) > key]
        if older and newer:
            return "gap"
        return "added" if newer else "removed"

    def describe(self, version: str) -> str:
        rel = self.relation(version)
        if rel == "added":
            return f"{self.option} was added in Megatron-LM {self.first}"
        if rel == "removed":
            return f"{self.option} was removed after Megatron-LM {self.last}"
        if rel == "gap":
            return f"{self.option} is not defined in Megatron-LM {version} (it is in {', '.join(self.defined_in)})"
        if rel == "present":
            return f"{self.option} is defined in Megatron-LM {version}"
        return f"{self.option} is not defined in any known Megatron-LM version"


@dataclass
class Catalogue:
    """The flags of one Megatron-LM version."""

    version: str
    flags: tuple[FlagSpec, ...]
    generated_from: str | None = None
    origin: str | None = None  # the file it was read from
    megatron_ref: str | None = None
    _by_option: dict[str, FlagSpec] = field(default_factory=dict, repr=False)
    _by_dest: dict[str, list[FlagSpec]] = field(default_factory=dict, repr=False)
    # Suggestions already worked out, per (option string, how many): a corpus writes the same
    # few hundred unknown flags thousands of times, and difflib over every option is slow.
    _suggested: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)
    _close: CloseOptions | None = field(default=None, repr=False, compare=False)  # made on the first suggestion

    def __post_init__(self) -> None:
        for spec in self.flags:
            for opt in spec.option_strings:
                if opt in self._by_option:
                    raise CatalogueError(f"{self.origin or self.version}: option {opt} is defined twice")
                self._by_option[opt] = spec
            self._by_dest.setdefault(spec.dest, []).append(spec)

    # -- loading -----------------------------------------------------------------------

    @classmethod
    def load(cls, version: str | None = None) -> Catalogue:
        """The shipped catalogue for a version as users write it ("0.15.3", "core_v0.12.0")."""
        return _load_packaged(resolve_version(version))

    @classmethod
    def load_resolved(cls, version: str | None = None) -> tuple[Catalogue, _versions.Resolution]:
        """The shipped catalogue for a version text, with the note saying which one was taken
        when there is no exact match ("0.17" -> 0.15, the nearest lower one)."""
        res = _versions.resolve(version)
        return _load_packaged(res.version), res

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], shipped: bool = False) -> Catalogue:
        from pathlib import Path  # the name shown as the user wrote it, as it always was

        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CatalogueError(f"{path}: cannot read catalogue: {exc}") from None
        return cls.from_dict(data, origin=str(path), shipped=shipped)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], origin: str | None = None, shipped: bool = False) -> Catalogue:
        """The catalogue `data` holds. A `shipped` one (megalint/data/) is not checked flag by flag
        on every run: the tests check each shipped file, and reading one is on every launch's path."""
        where = origin or "catalogue"
        if not isinstance(data, Mapping) or not isinstance(data.get("flags"), list):
            raise CatalogueError(f"{where}: expected an object with a 'flags' list")
        fmt = data.get("format", 1)
        if fmt != 1:
            raise CatalogueError(f"{where}: unsupported catalogue format {fmt!r}")
        version = data.get("version")
        if not isinstance(version, str) or not version:
            raise CatalogueError(f"{where}: 'version' must be a non-empty string")
        if shipped:
            flags = tuple(map(FlagSpec.from_checked_json, data["flags"]))
        else:
            flags = tuple(FlagSpec.from_json(f, f"{where}: flags[{i}]") for i, f in enumerate(data["flags"]))
        return cls(
            version=version,
            flags=flags,
            generated_from=data.get("generated_from"),
            origin=origin,
            megatron_ref=data.get("megatron_ref"),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": 1, "version": self.version}
        if self.megatron_ref:
            out["megatron_ref"] = self.megatron_ref
        if self.generated_from:
            out["generated_from"] = self.generated_from
        out["flags"] = [f.to_json() for f in self.flags]
        return out

    # -- queries -------------------------------------------------------------------------

    def lookup(self, option_string: str) -> FlagSpec | None:
        """The action an exact option string belongs to (argparse: no abbreviations)."""
        return self._by_option.get(option_string)

    def by_dest(self, dest: str) -> list[FlagSpec]:
        """Every action storing into `dest`, in registration order."""
        return list(self._by_dest.get(dest, ()))

    def dests(self) -> list[str]:
        return list(self._by_dest)

    def option_strings(self) -> list[str]:
        return list(self._by_option)

    def __contains__(self, option_string: object) -> bool:
        return option_string in self._by_option

    def __len__(self) -> int:
        return len(self.flags)

    def default_spec(self, dest: str) -> FlagSpec | None:
        """The action whose default a dest takes: the first one registered (argparse)."""
        specs = self._by_dest.get(dest)
        return specs[0] if specs else None

    def suggest(self, option_string: str, n: int = 3) -> list[str]:
        """Known option strings the user may have meant, best first."""
        key = (option_string, n)
        found = self._suggested.get(key)
        if found is None:
            if self._close is None:
                self._close = CloseOptions(list(self._by_option))
            found = self._suggested[key] = tuple(suggest(option_string, self._by_option, n, self._close))
        return list(found)

    def history(self, option_string: str) -> FlagHistory:
        """Which versions define `option_string`: this catalogue's record of it when it has
        one, else the shipped catalogues."""
        spec = self.lookup(option_string)
        if spec is not None:
            recorded = spec.versions_of(option_string)
            if recorded:
                return FlagHistory(option_string, _sorted_versions(recorded))
        return shipped_history(option_string, extra=(self,) if spec is not None else ())


def suggest(option_string: str, known: Iterable[str], n: int = 3, close: CloseOptions | None = None) -> list[str]:
    """Known option strings close to `option_string`, best first: its hyphenated lower-case
    spelling, then the flags it abbreviates (up to 5), then difflib's close matches (`close`:
    the same, kept for `known`)."""
    known = list(known)
    known_set = set(known)
    text = option_string.split("=", 1)[0]
    # The spellings of wrappers and other CLIs: --hidden_size, -hidden-size, --Hidden-Size.
    norm = "--" + text.lstrip("-").replace("_", "-").lower()
    out: list[str] = []
    if norm in known_set and norm != text:
        out.append(norm)
    if len(text) > 3:  # argparse here takes no abbreviations: name the flags it could mean
        completions = sorted(o for o in known if o.startswith(norm) and o != norm)
        out.extend(o for o in completions[:5] if o not in out)
    limit = max(n, len(out))
    if close is not None:
        near = close.matches(norm, n=n + len(out), cutoff=0.75)
    else:
        import difflib  # without the kept candidates

        near = difflib.get_close_matches(norm, known, n=n + len(out), cutoff=0.75)
    for opt in near:
        if len(out) >= limit:
            break
        if opt not in out and opt != text:
            out.append(opt)
    return out


def _sorted_versions(vers: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(vers), key=version_key))


@cache
def _load_packaged(version: str) -> Catalogue:
    """A shipped catalogue, from megalint's cache folder once it has been built (a pickle loads in
    a third of the time JSON and `from_dict` take), else built from its JSON file and kept."""
    if version not in KNOWN_VERSIONS:
        raise CatalogueError(f"no shipped catalogue for Megatron-LM {version}")
    ref = packaged.files("megalint.data").joinpath("catalogue").joinpath(f"{version}.json")
    origin = f"megalint/data/catalogue/{version}.json"
    where = _kept_path(version, ref)
    kept = read_entry(where)
    if isinstance(kept, Catalogue) and kept.version == version and kept.origin == origin:
        return kept
    data = json.loads(ref.read_text(encoding="utf-8"))
    built = Catalogue.from_dict(data, origin=origin, shipped=True)
    write_entry(where, built)
    return built


def _kept_path(version: str, ref: Traversable) -> str:
    """Where a shipped catalogue is kept: named by megalint's version and Python's, and by what
    names the JSON file and this module as they are now (the installed wheel's stamp, else their
    contents and this module's size and time), so that a changed file is built again."""
    parts = [str(_KEPT_FORMAT), __version__, f"{sys.version_info[0]}.{sys.version_info[1]}", version]
    stamp = wheel_stamp()
    if stamp is not None:
        parts += stamp
    else:
        st = os.stat(__file__)
        parts += [sha256(ref.read_bytes()).hexdigest(), f"{st.st_size}:{st.st_mtime_ns}"]
    key = sha256("\0".join(parts).encode()).hexdigest()
    return os.path.join(cache_folder(), "shipped-catalogues", f"{key[:32]}.pickle")


# Raised when what a kept catalogue holds changes meaning, so that older entries are not read.
_KEPT_FORMAT = 1

# The shipped catalogues: the curated ones (catalogue/) and those extracted from every release
# (catalogue-extracted/), one JSON file each, one flag a line.
SHIPPED_FOLDERS = ("catalogue", "catalogue-extracted")


@cache
def _shipped_names() -> dict[str, list[str]]:
    """The option strings and dests of every shipped catalogue, as tools/gen_shipped_names.py
    wrote them from the catalogues (a test keeps the two in step): one small file, not 27."""
    text = packaged.files("megalint.data").joinpath("shipped_names.json").read_text(encoding="utf-8")
    data: dict[str, list[str]] = json.loads(text)
    return data


@cache
def shipped_dests() -> frozenset[str]:
    """Every dest that some shipped catalogue defines."""
    return frozenset(_shipped_names()["dests"])


@cache
def shipped_options() -> frozenset[str]:
    """Every option string that some shipped catalogue defines."""
    return frozenset(_shipped_names()["options"])


def shipped_history(option_string: str, extra: tuple[Catalogue, ...] = ()) -> FlagHistory:
    """Which shipped catalogue versions (and `extra` ones) define an option string."""
    # An option no shipped catalogue defines (a fork's own, a misspelling) is in none of the
    # curated ones: known from shipped_names.json, without loading the four not in use.
    found = (
        [v for v in KNOWN_VERSIONS if _load_packaged(v).lookup(option_string) is not None]
        if option_string in shipped_options()
        else []
    )
    for cat in extra:
        if cat.lookup(option_string) is not None:
            found.append(cat.version)
    return FlagHistory(option_string, _sorted_versions(found))


def load(version: str | None = None) -> Catalogue:
    return Catalogue.load(version)


# Re-exported for callers that only import this module.
resolve = _versions.resolve
