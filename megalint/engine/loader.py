"""Load rule files: the packaged rules and the user's folders, each file read, validated and
compiled, every problem of every file reported together in one `RuleFileError`.

The packaged rules come from the rule cache (rule_cache.py) once they have been read: the YAML
reader, the JSON Schema and the catalogues are imported only to read a rule file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from megalint import packaged
from megalint.engine import rule_cache
from megalint.engine.rule import Rule, RuleSet
from megalint.errors import RuleError, RuleFileError

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from megalint.engine.rulefile import RuleFile

RULE_SUFFIXES = (".yaml", ".yml")
# rules/codes.yaml records which codes serve which categories; it is not a rule.
CODE_REGISTRY = "codes.yaml"

__all__ = [
    "RuleError",
    "RuleFileError",
    "load_rule_texts",
    "load_rules",
    "packaged_rules",
    "packaged_rules_dir",
    "parse_rule_text",
]


Position = tuple[int, int]


def parse_rule_text(
    text: str, path: str, *, packaged: bool = False, dests: Collection[str] | None = None
) -> tuple[list[Rule], list[RuleError], list[tuple[Rule, Position, Position]]]:
    """The rules of one file, its errors, and (rule, code pos, name pos) for duplicate checks.

    A packaged file (`path` is `rules/<category>/<file>`) must hold one rule, named as the file.
    With `dests`, every Megatron argument a rule names must be one of them.
    """
    from megalint.engine.builder import RuleBuilder
    from megalint.engine.rulefile import dedupe, read_rule_file

    doc, errors = read_rule_file(text, path)
    if doc is None:
        return [], errors, []
    if packaged:
        _check_layout(doc)
    rules, keys = [], []
    for m in doc.rule_mappings():
        rule = RuleBuilder(doc, m, dests).build()
        if rule is not None:
            rules.append(rule)
            keys.append((rule, doc.value_pos(m, "code"), doc.value_pos(m, "name")))
    return rules, dedupe(doc.errors), keys


def _check_layout(doc: RuleFile) -> None:
    """A packaged rule lives in rules/<category>/<name>.yaml, one rule per file."""
    if "rules" in doc.root:
        doc.error(doc.key_pos(doc.root, "rules"), "a packaged rule file holds one rule, not a list of rules")
        return
    m = doc.root
    expected = f"rules/{m['category']}/{m['name']}.yaml"
    folder, _, file = doc.path.rpartition("/")
    if folder != expected.rpartition("/")[0]:
        doc.error(doc.value_pos(m, "category"), f"category: a packaged rule lives in {expected}, not {doc.path}")
    if file != expected.rpartition("/")[2]:
        doc.error(doc.value_pos(m, "name"), f"name: a packaged rule lives in {expected}, not {doc.path}")


def packaged_rules_dir() -> Traversable:
    """The rules shipped with megalint: the `megalint.rules` package (the repository's rules/)."""
    try:
        return packaged.files("megalint.rules")
    except ModuleNotFoundError:
        # A source checkout run without installing: rules/ sits next to the package.
        return packaged.Folder(
            os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "rules")
        )


def _rule_files(folder: Traversable) -> list[tuple[Traversable, str]]:
    """The rule files under `folder`, with their paths relative to it, in name order."""
    out: list[tuple[Traversable, str]] = []

    def walk(node: Traversable, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            name = child.name
            if child.is_dir():
                if not name.startswith((".", "__")):
                    walk(child, f"{rel}{name}/")
            elif name.endswith(RULE_SUFFIXES):
                out.append((child, f"{rel}{name}"))

    walk(folder, "")
    return out


@dataclass(frozen=True)
class _ParsedFile:
    """One rule file read: its rules with their positions, or its errors."""

    path: str
    errors: list[RuleError]
    keys: list[tuple[Rule, Position, Position]]  # (rule, code pos, name pos)


def _parse(path: str, text: str, *, packaged: bool = False, check_arguments: bool = True) -> _ParsedFile:
    from megalint.megatron.catalogue import shipped_dests

    dests = shipped_dests() if check_arguments else None
    _, errors, keys = parse_rule_text(text, path, packaged=packaged, dests=dests)
    return _ParsedFile(path, errors, keys)


def packaged_rule_sources() -> list[tuple[str, bytes]]:
    """The packaged rule files: (`rules/<category>/<file>`, content), in name order."""
    folder = packaged_rules_dir()
    if isinstance(folder, os.PathLike):  # installed as files: os.scandir reads them 4x faster than Traversable
        return [(f"rules/{rel}", data) for rel, data in _files_on_disk(os.fspath(folder), "") if rel != CODE_REGISTRY]
    return [(f"rules/{rel}", res.read_bytes()) for res, rel in _rule_files(folder) if rel != CODE_REGISTRY]


def _files_on_disk(folder: str, rel: str) -> list[tuple[str, bytes]]:
    """The rule files under `folder` as `_rule_files` finds them, with their contents."""
    out: list[tuple[str, bytes]] = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir():
            if not entry.name.startswith((".", "__")):
                out.extend(_files_on_disk(entry.path, f"{rel}{entry.name}/"))
        elif entry.name.endswith(RULE_SUFFIXES):
            with open(entry.path, "rb") as fh:
                out.append((f"{rel}{entry.name}", fh.read()))
    return out


def parse_packaged(sources: list[tuple[str, bytes]]) -> tuple[_ParsedFile, ...]:
    """The packaged rule files read, validated and compiled: what the rule cache keeps, what
    each rule reads worked out (Rule.needs, Rule.reads) and kept with it."""
    files = tuple(_parse(path, data.decode("utf-8"), packaged=True) for path, data in sources)
    for file in files:
        for rule, _code_pos, _name_pos in file.keys:
            _ = rule.reads
    return files


def _is_parsed_files(value: object) -> bool:
    return isinstance(value, tuple) and all(isinstance(f, _ParsedFile) for f in value)


def packaged_rules_key() -> str:
    """What names the packaged rules as they are now, and their entry in the rule cache: in an
    installed wheel its stamp, which changes whenever any of its files does (no rule file is
    read); in a source checkout, where they change under the user's hands, their contents."""
    return _rules_key(str(packaged_rules_dir()))


# Both kept per folder (`where`, the packaged rules' folder), once a process: the rule loading and
# the result cache ask for the same.
@lru_cache(maxsize=2)
def _rules_key(where: str) -> str:
    installed = rule_cache.wheel_rules_key()
    if installed is not None:
        return installed
    return rule_cache.cache_key(_packaged_sources(where))


@lru_cache(maxsize=2)
def _packaged_sources(where: str) -> list[tuple[str, bytes]]:
    return packaged_rule_sources()


@lru_cache(maxsize=1)
def _packaged_files() -> tuple[_ParsedFile, ...]:
    """The packaged rule files, from the rule cache, else read and compiled (once per process)."""
    where = str(packaged_rules_dir())
    return rule_cache.cached(_rules_key(where), lambda: parse_packaged(_packaged_sources(where)), _is_parsed_files)


@lru_cache(maxsize=1)
def packaged_rules() -> RuleSet:
    """The rules shipped with megalint."""
    return _build(list(_packaged_files()), [])


def load_rules(
    paths: Iterable[os.PathLike[str] | str] | None = None, *, packaged: bool = True, check_arguments: bool = True
) -> RuleSet:
    """The packaged rules plus the rule files and folders in `paths` (searched recursively).

    Every Megatron argument a rule names (`args.NAME`, `given.NAME`, `flag(NAME)` ...) must be a
    dest of some shipped catalogue; `check_arguments=False` lets the rules of `paths` name any.
    Raises `RuleFileError` listing every problem of every file.
    """
    parsed: list[_ParsedFile] = list(_packaged_files()) if packaged else []
    errors: list[RuleError] = []
    for p in paths or []:
        from pathlib import Path  # a user's rule folders: their names written as they always were

        for name, data in user_rule_files(str(Path(p)), errors):
            try:
                parsed.append(_parse(name, data.decode("utf-8"), check_arguments=check_arguments))
            except UnicodeDecodeError as e:
                errors.append(RuleError(name, 1, 1, f"not UTF-8 text ({e.reason} at byte {e.start})"))
    return _build(parsed, errors)


# A user's rule folder is a handful of files: a bigger one is a wrong path (`/`), and a bigger
# file is not a rule (`/dev/zero`).
MAX_RULE_FILE_BYTES = 1 << 20
MAX_RULE_FOLDER_ENTRIES = 20_000


def user_rule_files(path: str, errors: list[RuleError]) -> list[tuple[str, bytes]]:
    """The rule files a path names (a file, or the `*.yaml`/`*.yml` under a folder, in name
    order) with their contents; what cannot be read is added to `errors`. Each folder is walked
    once however many links lead to it, only regular files are read, and sizes are capped."""
    out: list[tuple[str, bytes]] = []
    try:
        is_dir = os.path.isdir(path)
    except ValueError:  # a NUL in the path
        is_dir = False
    if not is_dir:
        if not os.path.lexists(path):
            errors.append(RuleError(path, 1, 1, "no such rule file or folder"))
        else:
            _read_rule_file(path, out, errors)
        return out
    seen: set[tuple[int, int]] = set()
    entries = 0
    todo = [path]
    while todo:
        folder = todo.pop()
        try:
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                continue  # reached again through a link: read once
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(folder) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            errors.append(RuleError(folder, 1, 1, f"cannot read the rule folder: {exc.strerror or exc}"))
            continue
        entries += len(children)
        if entries > MAX_RULE_FOLDER_ENTRIES:
            errors.append(
                RuleError(path, 1, 1, f"more than {MAX_RULE_FOLDER_ENTRIES:,} entries: not a folder of rule files")
            )
            return out
        folders: list[str] = []
        for child in children:
            try:
                child_is_dir = child.is_dir()
            except OSError:
                child_is_dir = False
            if child_is_dir:
                if not child.name.startswith((".", "__")):
                    folders.append(child.path)
            elif child.name.endswith(RULE_SUFFIXES):
                _read_rule_file(child.path, out, errors)
        todo.extend(reversed(folders))
    return out


def _read_rule_file(path: str, out: list[tuple[str, bytes]], errors: list[RuleError]) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        errors.append(RuleError(path, 1, 1, "a link to a file that does not exist"))
        return
    except OSError as exc:
        errors.append(RuleError(path, 1, 1, f"cannot read the rule file: {exc.strerror or exc}"))
        return
    if not stat.S_ISREG(st.st_mode):
        errors.append(RuleError(path, 1, 1, "not a regular file (a device, a pipe or a socket)"))
        return
    if st.st_size > MAX_RULE_FILE_BYTES:
        errors.append(RuleError(path, 1, 1, f"larger than {MAX_RULE_FILE_BYTES:,} bytes: not a rule file"))
        return
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_RULE_FILE_BYTES + 1)
    except OSError as exc:
        errors.append(RuleError(path, 1, 1, f"cannot read the rule file: {exc.strerror or exc}"))
        return
    if len(data) > MAX_RULE_FILE_BYTES:
        errors.append(RuleError(path, 1, 1, f"larger than {MAX_RULE_FILE_BYTES:,} bytes: not a rule file"))
        return
    out.append((path, data))


def load_rule_texts(sources: Iterable[tuple[str, str]], *, check_arguments: bool = True) -> RuleSet:
    """Rules from (path, text) pairs, as `load_rules` does for files."""
    return _build([_parse(path, text, check_arguments=check_arguments) for path, text in sources], [])


def _build(files: list[_ParsedFile], errors: list[RuleError]) -> RuleSet:
    rules: list[Rule] = []
    seen_code: dict[str, str] = {}
    seen_name: dict[str, str] = {}
    for file in files:
        path = file.path
        errors.extend(file.errors)
        for rule, code_pos, name_pos in file.keys:
            dup = False
            if rule.code in seen_code:
                errors.append(
                    RuleError(
                        path, *code_pos, f"duplicate rule code {rule.code} (also defined at {seen_code[rule.code]})"
                    )
                )
                dup = True
            if rule.name in seen_name:
                errors.append(
                    RuleError(
                        path, *name_pos, f"duplicate rule name {rule.name} (also defined at {seen_name[rule.name]})"
                    )
                )
                dup = True
            if not dup:
                seen_code[rule.code] = f"{path}:{code_pos[0]}:{code_pos[1]}"
                seen_name[rule.name] = f"{path}:{name_pos[0]}:{name_pos[1]}"
                rules.append(rule)
    if errors:
        raise RuleFileError(errors)
    return RuleSet(rules)
