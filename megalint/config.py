"""Configuration: `[tool.megalint]` in pyproject.toml, or a `megalint.toml`, nearest to each file.

Keys (the same in both files; in megalint.toml at the top level):

    megatron-version = "0.15"          # default Megatron version (HEAD when unset)
    gpu = "h100"                        # default GPU when the script does not say
    assume = { NNODES = 4 }             # values for environment inputs
    select = ["ML1", "fp8-requires-hopper"]
    extend-select = []
    ignore = ["ML301"]
    rule-dirs = ["ci/megalint-rules"]   # extra rule folders, relative to the config file
    exclude = ["legacy/**"]             # gitignore-style, relative to the config file
    failure-threshold = "warning"       # error | warning | info | none
    follow-source-outside-root = false
    megatron-roots = ["../Megatron-LM"] # Megatron or fork trees launches run on, relative to the config file
    max-file-size = 4194304             # bytes of a script checked; a larger one is one finding (ML019)
    [severity]                          # ([tool.megalint.severity]) per-rule overrides
    missing-nccl-ib-timeout = "error"
    [per-file-ignores]                  # gitignore-style globs, relative to the config file
    "examples/*.sh" = ["ML301"]

Every error starts with `file:line:col` of the offending key or value; a pyproject.toml that is
not valid TOML is an error too, whether or not it holds a megalint table. Rule codes in the
file are checked against the rules once they are loaded (`Config.error_at`).
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass, field
from typing import Any

from megalint import lazy_re
from megalint.errors import ConfigError
from megalint.levels import SEVERITIES, THRESHOLDS

CONFIG_NAMES = ("megalint.toml", ".megalint.toml")
PYPROJECT = "pyproject.toml"
# Every file of a folder that may hold its configuration (config_in), in the order looked for.
CANDIDATE_NAMES = (*CONFIG_NAMES, PYPROJECT)
_KEYS: dict[str, type] = {
    "megatron-version": str,
    "gpu": str,
    "assume": dict,
    "select": list,
    "extend-select": list,
    "ignore": list,
    "rule-dirs": list,
    "exclude": list,
    "failure-threshold": str,
    "follow-source-outside-root": bool,
    "jobs": int,
    "max-file-size": int,
    "cache": bool,
    "megatron-roots": list,
    "severity": dict,
    "per-file-ignores": dict,
}


@dataclass
class Config:
    """The settings of one configuration file (or the defaults), as read."""

    path: str | None = None  # the file it came from; None for the defaults
    root: str = "."  # the folder paths in it are relative to
    megatron_version: str | None = None
    gpu: str | None = None
    assume: dict[str, str] = field(default_factory=dict)
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    rule_dirs: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    failure_threshold: str | None = None
    follow_source_outside_root: bool = False
    jobs: int | None = None  # worker processes of a run (1: one process); None: every core
    max_file_size: int | None = None  # bytes of a script checked; None: the default (shell/budget.py)
    cache: bool = True  # keep results in .megalint_cache/ at the root
    megatron_roots: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    text: str = field(default="", repr=False)
    prefix: tuple[str, ...] = ()  # ("tool", "megalint") in a pyproject.toml

    def error_at(self, keys: tuple[str, ...], message: str, value: str | None = None) -> ConfigError:
        """A ConfigError pointing at `keys` (below the megalint table), or at `value` after it."""
        line, col = position(self.text, self.prefix + tuple(keys), value)
        return ConfigError(f"{self.path}:{line}:{col}: {message}")

    def version_note(self) -> str | None:
        """Where `megatron-version` is checked against another release's catalogue (a version
        beyond the newest known, a patch or pre-release), the note that says so, at its value."""
        if self.megatron_version is None:
            return None
        from megalint.megatron.catalogue_choice import version_for

        _version, fallback = version_for(self.megatron_version)
        if fallback is None:
            return None
        line, col = position(self.text, self.prefix + ("megatron-version",), self.megatron_version)
        return f"{self.path}:{line}:{col}: megatron-version {self.megatron_version}: {fallback}"


# -- where a key is ------------------------------------------------------------------------

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
_KEY_PART = rf"(?:{_BARE}|{_QUOTED})"
_DOTTED = rf"{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*"
_HEADER = lazy_re.compile(rf"^[ \t]*\[\[?[ \t]*(?P<key>{_DOTTED})[ \t]*\]\]?")
_ASSIGN = lazy_re.compile(rf"^[ \t]*(?P<key>{_DOTTED})[ \t]*=")
_PART = lazy_re.compile(rf"(?P<part>{_KEY_PART})")


def _key_parts(dotted: str) -> list[tuple[str, int]]:
    """Each part of a dotted key, unquoted, with its offset in `dotted`."""
    out = []
    for m in _PART.finditer(dotted):
        raw = m.group("part")
        if raw[0] in "\"'":
            raw = raw[1:-1] if raw[0] == "'" else raw[1:-1].encode().decode("unicode_escape")
        out.append((raw, m.start()))
    return out


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def position(text: str, keys: tuple[str, ...], value: str | None = None) -> tuple[int, int]:
    """1-based (line, col) of the key path `keys` in a TOML text.

    Follows `[table]` headers, dotted keys and inline tables (`assume = { NNODES = 4 }`);
    with `value`, the position of that string inside the key's value. Falls back to the
    nearest enclosing key that is found, then to 1:1.
    """
    keys = tuple(keys)
    best: tuple[int, int] = (0, 0)  # (depth matched, offset)
    table: list[str] = []
    offset = 0
    in_multiline: str | None = None
    for line in text.splitlines(keepends=True):
        start = offset
        offset += len(line)
        if in_multiline:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header:
            table = [p for p, _ in _key_parts(header.group("key"))]
            depth = _common(table, keys)
            if depth == min(len(table), len(keys)) and depth > best[0]:
                best = (depth, start + header.start("key"))
            continue
        assign = _ASSIGN.match(line)
        if not assign:
            continue
        parts = _key_parts(assign.group("key"))
        full = table + [p for p, _ in parts]
        depth = _common(full, keys)
        for quote in ('"""', "'''"):
            if line[assign.end() :].count(quote) % 2 == 1:
                in_multiline = quote
        if depth <= len(table) or depth <= best[0] or _common(table, keys) < len(table):
            continue
        key_at = start + assign.start("key")
        best = (depth, key_at + parts[depth - len(table) - 1][1])
        if depth == len(full) < len(keys):
            inner = _in_inline_table(line[assign.end() :], keys[depth:])
            if inner is not None:
                best = (len(keys), start + assign.end() + inner)
        if best[0] == len(keys):
            if value is not None:
                found = _find_value(text, start + assign.end(), value)
                if found is not None:
                    return _line_col(text, found)
            break
    if best[0] == 0:
        return 1, 1
    return _line_col(text, best[1])


def _common(a: list[str], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _in_inline_table(rest: str, keys: tuple[str, ...]) -> int | None:
    """Offset in `rest` (the text after `key =`) of keys[0] inside an inline table."""
    m = re.match(r"[ \t]*\{", rest)
    if not m:
        return None
    for km in re.finditer(rf"(?:\{{|,)[ \t]*(?P<key>{_DOTTED})[ \t]*=", rest):
        parts = _key_parts(km.group("key"))
        if parts and parts[0][0] == keys[0]:
            return km.start("key") + parts[min(len(keys), len(parts)) - 1][1]
    return None


def _find_value(text: str, after: int, value: str) -> int | None:
    """Offset of the quoted string `value` in the value that starts at `after`."""
    pattern = re.compile(r'"' + re.escape(value) + r'"|\'' + re.escape(value) + r"'")
    m = pattern.search(text, after)
    if m is None:
        return None
    # Stop at the next assignment or header: the value belongs to another key there.
    nxt = re.compile(rf"(?m)^[ \t]*(?:\[|{_DOTTED}[ \t]*=)").search(text, text.find("\n", after) + 1 or len(text))
    if nxt is not None and m.start() > nxt.start():
        return None
    return m.start()


# -- loading -------------------------------------------------------------------------------

_TOML_TYPES: dict[type, str] = {
    str: "a string",
    list: "an array",
    dict: "a table",
    bool: "a boolean",
    int: "an integer",
    float: "a float",
}


def _type_name(value: object) -> str:
    for t in (bool, int, float, str, list, dict):
        if isinstance(value, t):
            return _TOML_TYPES[t]
    return f"a {type(value).__name__}"


# A configuration is a few dozen lines; tomllib reads nested values recursively, so a file
# nested thousands deep would exhaust Python's stack.
MAX_CONFIG_BYTES = 1 << 20
MAX_NESTING = 32


def _read(path: str) -> bytes:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}:1:1: cannot read the configuration: not a regular file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}:1:1: cannot read the configuration: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}:1:1: cannot read the configuration: larger than {MAX_CONFIG_BYTES:,} bytes")
    return data


def _too_deep(text: str) -> int | None:
    """The offset where arrays and inline tables open more than MAX_NESTING deep, if they do
    (strings and comments skipped; a quote left open is tomllib's to report)."""
    depth = 0
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if text.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            if c == "\\" and quote[0] == '"':
                i += 1
        elif c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            continue
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return i
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return None


def load_config(path: str) -> Config:
    # Imported here: most runs find no configuration file.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    data = _read(path)
    try:
        # A byte-order mark is accepted, as it is in scripts; positions are counted after it.
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
        raise ConfigError(f"{path}:{line}:1: invalid TOML: not UTF-8 text") from None
    deep = _too_deep(text)
    if deep is not None:
        line, col = _line_col(text, deep)
        raise ConfigError(f"{path}:{line}:{col}: invalid TOML: values nested more than {MAX_NESTING} deep") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        if m is None and "end of document" in str(exc):
            where = "{}:{}".format(*_line_col(text, len(text)))
        else:
            where = f"{m.group(1)}:{m.group(2)}" if m else "1:1"
        msg = re.sub(r"\s*\(at (?:line \d+, column \d+|end of document)\)", "", str(exc))
        raise ConfigError(f"{path}:{where}: invalid TOML: {msg}") from None
    root = os.path.dirname(os.path.abspath(path))
    prefix: tuple[str, ...] = ()
    if os.path.basename(path) == PYPROJECT:
        prefix = ("tool", "megalint")
        tool = doc.get("tool", {})
        table = tool.get("megalint") if isinstance(tool, dict) else None
        if table is None:
            return Config(path=None, root=root)
        if not isinstance(table, dict):
            line, col = position(text, prefix)
            raise ConfigError(f"{path}:{line}:{col}: `tool.megalint` must be a table, not {_type_name(table)}")
    else:
        table = doc
    cfg = Config(path=path, root=root, text=text, prefix=prefix)
    _fill(cfg, table)
    return cfg


def _fill(cfg: Config, table: dict[str, Any]) -> None:
    # `table` is as tomllib reads it: the first loop checks each value's type against _KEYS.
    err = cfg.error_at
    for key, value in table.items():
        if key not in _KEYS:
            from difflib import get_close_matches

            near = get_close_matches(key, list(_KEYS), n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            raise err((key,), f"unknown key `{key}`{hint}")
        want = _KEYS[key]
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            raise err((key,), f"`{key}` must be {_TOML_TYPES[want]}, not {_type_name(value)}")
        if isinstance(value, list):  # an array, as `want` is list
            for item in value:
                if not isinstance(item, str):
                    raise err((key,), f"`{key}` must be an array of strings, not an array with {_type_name(item)}")
    cfg.megatron_version = table.get("megatron-version")
    if cfg.megatron_version is not None:
        from megalint.megatron.versions import VersionError, parse_version

        try:
            parse_version(cfg.megatron_version)
        except VersionError:
            raise err(
                ("megatron-version",),
                f'`{cfg.megatron_version}` is not a Megatron-LM version (e.g. "0.15", "core_v0.12.0", "HEAD")',
            ) from None
        from megalint.megatron.catalogue_choice import unknown_version

        unknown = unknown_version(cfg.megatron_version)
        if unknown is not None:
            raise err(("megatron-version",), unknown, cfg.megatron_version)
    cfg.gpu = table.get("gpu")
    if cfg.gpu is not None:
        from megalint.hardware.profiles import find_gpu

        if find_gpu(cfg.gpu) is None:
            raise err(("gpu",), f'unknown GPU `{cfg.gpu}` (e.g. "h100", "a100-80gb", "v100")')
    for k, v in table.get("assume", {}).items():
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise err(("assume", k), f"`assume.{k}` must be a string or an integer, not {_type_name(v)}")
        cfg.assume[k] = str(v)
    cfg.select = table.get("select")
    cfg.extend_select = table.get("extend-select", [])
    cfg.ignore = table.get("ignore", [])
    for d in table.get("rule-dirs", []):
        full = os.path.join(cfg.root, d)
        if not os.path.exists(full):
            raise err(("rule-dirs",), f"rule folder `{d}` does not exist (relative to {cfg.root})", d)
        cfg.rule_dirs.append(full)
    cfg.exclude = table.get("exclude", [])
    th = table.get("failure-threshold")
    if th is not None and th not in THRESHOLDS:
        raise err(("failure-threshold",), f"`failure-threshold` must be one of {', '.join(THRESHOLDS)}, not `{th}`")
    cfg.failure_threshold = th
    cfg.follow_source_outside_root = table.get("follow-source-outside-root", False)
    cfg.jobs = table.get("jobs")
    if cfg.jobs is not None and cfg.jobs < 1:
        raise err(("jobs",), f"`jobs` must be at least 1, not {cfg.jobs}")
    cfg.max_file_size = table.get("max-file-size")
    if cfg.max_file_size is not None and cfg.max_file_size < 1:
        raise err(("max-file-size",), f"`max-file-size` must be at least 1, not {cfg.max_file_size}")
    cfg.cache = table.get("cache", True)
    for d in table.get("megatron-roots", []):
        full = os.path.join(cfg.root, d)
        if not os.path.isdir(full):
            raise err(("megatron-roots",), f"Megatron root `{d}` is not a folder (relative to {cfg.root})", d)
        cfg.megatron_roots.append(full)
    for k, v in table.get("severity", {}).items():
        if not isinstance(v, str) or v not in SEVERITIES:
            shown = f"`{v}`" if isinstance(v, str) else _type_name(v)
            raise err(("severity", k), f"severity of `{k}` must be one of {', '.join(SEVERITIES)}, not {shown}")
        cfg.severity[k] = v
    for k, v in table.get("per-file-ignores", {}).items():
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise err(("per-file-ignores", k), f"per-file-ignores `{k}` must be an array of rule codes")
        cfg.per_file_ignores[k] = v


def find_config(start: str) -> str | None:
    """The nearest megalint.toml, .megalint.toml, or pyproject.toml with a [tool.megalint] table
    (or that is not valid TOML, so reading it reports the error)."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    while True:
        found = config_in(d)
        if found:
            return found
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


# `[tool.megalint]`, `[tool.megalint.x]`, or `megalint = …` / `tool.megalint = …` as a key.
_MEGALINT_TABLE = lazy_re.compile(
    rb"(?m)^[ \t]*(?:\[[ \t]*tool[ \t]*\.[ \t]*megalint[ \t]*[\].]"
    rb"|(?:tool[ \t]*\.[ \t]*)?megalint[ \t]*(?:=|\.))"
)


def config_in(folder: str) -> str | None:
    """The configuration file in `folder` itself, if any.

    A pyproject.toml counts when it has a megalint table, and also when it is not valid TOML:
    whether it holds one cannot be known then, so reading it reports the error (as ruff does)
    instead of passing over it. One that parses and has no megalint table is skipped.
    """
    for name in CONFIG_NAMES:
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            return p
    p = os.path.join(folder, PYPROJECT)
    if os.path.isfile(p):
        try:
            with open(p, "rb") as fh:
                data = fh.read(MAX_CONFIG_BYTES + 1)
        except OSError:
            return p  # load_config says why it cannot be read
        if len(data) > MAX_CONFIG_BYTES or _MEGALINT_TABLE.search(data) or not _is_toml(data):
            return p
    return None


# Raised when what makes a pyproject.toml valid changes (the depth limit, the reader).
_VALID_TOML_FORMAT = 1


def _is_toml(data: bytes) -> bool:
    """Whether a pyproject.toml's bytes are valid TOML, remembered in the cache folder once they
    were: every first check in a Megatron-LM checkout (whose pyproject.toml has no megalint table)
    read its 10 kB again, about 6 ms with importing tomllib. Only a valid file is remembered, by a
    hash of its bytes: an edited one is read again, an invalid one always is (and reported)."""
    if os.environ.get("MEGALINT_NO_CACHE"):
        return _parses(data)
    from megalint.cache_entry import read_entry, write_entry
    from megalint.cachedir import cache_folder
    from megalint.digests import sha256

    head = f"{_VALID_TOML_FORMAT}\0{sys.version_info[0]}.{sys.version_info[1]}\0".encode()
    entry = os.path.join(cache_folder(), "valid-toml", sha256(head + data).hexdigest()[:32])
    if read_entry(entry) is True:
        return True
    valid = _parses(data)
    if valid:
        write_entry(entry, True)
    return valid


def _parses(data: bytes) -> bool:
    # Imported here: most runs find no configuration file.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
        if _too_deep(text) is not None:
            return False
        tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return True
