"""Configuration: `[tool.megalint]` in pyproject.toml, or a `megalint.toml`, nearest to each file.

Keys (the same in both files; in megalint.toml at the top level):

    megatron-version = "0.15"          # default Megatron version (HEAD when unset)
    gpu = "h100"                        # default GPU when the script does not say
    assume = { NNODES = "4" }           # values for environment inputs
    select = ["ML1", "fp8-requires-hopper"]
    extend-select = []
    ignore = ["ML301"]
    rule-dirs = ["ci/megalint-rules"]   # extra rule folders, relative to the config file
    exclude = ["legacy/**"]
    failure-threshold = "warning"       # error | warning | info
    follow-source-outside-root = false
    [severity]                          # ([tool.megalint.severity]) per-rule overrides
    missing-nccl-ib-timeout = "error"
    [per-file-ignores]
    "examples/*.sh" = ["ML301"]

Errors carry `file:line:col` of the offending key.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SEVERITIES = ("error", "warning", "info")
_KEYS = {
    "megatron-version": str, "gpu": str, "assume": dict, "select": list, "extend-select": list, "ignore": list,
    "rule-dirs": list, "exclude": list, "failure-threshold": str, "follow-source-outside-root": bool,
    "severity": dict, "per-file-ignores": dict,
}


class ConfigError(Exception):
    """A configuration file megalint cannot use; the message starts with file:line:col."""


@dataclass
class Config:
    path: str | None = None  # the file it came from
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
    severity: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)


def _position(text: str, key: str) -> tuple[int, int]:
    m = re.search(r'(?m)^[ \t]*"?' + re.escape(key) + r'"?[ \t]*=', text)
    if m is None:
        m = re.search(re.escape(key), text)
    if m is None:
        return 1, 1
    start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return line, col


def load_config(path: str) -> Config:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}:1:1: cannot read the configuration: {exc.strerror or exc}") from None
    text = data.decode("utf-8", "replace")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{m.group(1)}:{m.group(2)}" if m else "1:1"
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"{path}:{where}: invalid TOML: {msg}") from None
    if os.path.basename(path) == "pyproject.toml":
        table = doc.get("tool", {}).get("megalint")
        if table is None:
            return Config(path=None, root=os.path.dirname(os.path.abspath(path)))
    else:
        table = doc
    return _from_table(table, path, text)


def _from_table(table: dict, path: str, text: str) -> Config:
    cfg = Config(path=path, root=os.path.dirname(os.path.abspath(path)))

    def err(key: str, msg: str) -> ConfigError:
        line, col = _position(text, key)
        return ConfigError(f"{path}:{line}:{col}: {msg}")

    for key, value in table.items():
        if key not in _KEYS:
            import difflib

            near = difflib.get_close_matches(key, list(_KEYS), n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            raise err(key, f"unknown key `{key}`{hint}")
        want = _KEYS[key]
        if not isinstance(value, want):
            raise err(key, f"`{key}` must be a {want.__name__}, not {type(value).__name__}")
        if want is list and not all(isinstance(v, str) for v in value):
            raise err(key, f"`{key}` must be a list of strings")
    cfg.megatron_version = table.get("megatron-version")
    cfg.gpu = table.get("gpu")
    for k, v in table.get("assume", {}).items():
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise err(k, f"assume.{k} must be a string or an integer")
        cfg.assume[k] = str(v)
    cfg.select = table.get("select")
    cfg.extend_select = table.get("extend-select", [])
    cfg.ignore = table.get("ignore", [])
    cfg.rule_dirs = [os.path.join(cfg.root, d) for d in table.get("rule-dirs", [])]
    cfg.exclude = table.get("exclude", [])
    th = table.get("failure-threshold")
    if th is not None and th not in SEVERITIES:
        raise err("failure-threshold", f"failure-threshold must be one of {', '.join(SEVERITIES)}, not `{th}`")
    cfg.failure_threshold = th
    cfg.follow_source_outside_root = table.get("follow-source-outside-root", False)
    for k, v in table.get("severity", {}).items():
        if v not in SEVERITIES:
            raise err(k, f"severity of `{k}` must be one of {', '.join(SEVERITIES)}, not `{v}`")
        cfg.severity[k] = v
    for k, v in table.get("per-file-ignores", {}).items():
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise err(k, f"per-file-ignores `{k}` must be a list of codes")
        cfg.per_file_ignores[k] = v
    return cfg


def find_config(start: str) -> str | None:
    """The nearest megalint.toml, or pyproject.toml with a [tool.megalint] table, above `start`."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    while True:
        for name in ("megalint.toml", ".megalint.toml"):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p
        p = os.path.join(d, "pyproject.toml")
        if os.path.isfile(p):
            try:
                with open(p, "rb") as fh:
                    if b"[tool.megalint" in fh.read():
                        return p
            except OSError:
                pass
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
