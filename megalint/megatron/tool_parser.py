"""The parser of a program that reads its flags itself (launch/tools.py), read with libcst
(`extract/own_parser.py`) and kept by the file's content in the extraction cache.

A checkpoint converter that writes `--num-layers 64 --target-tensor-parallel-size 2` builds an
`argparse.ArgumentParser` of its own and calls `parse_args()` on it; it is never imported. Its
parser is read only when the file says all of it: every `add_argument` has literal option
strings, the parser is handed to no function of another module (which could add flags), there
are no sub-commands. Anything else leaves the command unchecked, never wrongly checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from megalint import probes
from megalint.megatron.bind import bind
from megalint.megatron.bound import BoundArgs, ProblemKind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.forks import repository_root
from megalint.shell.values import Word

_MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class ToolParser:
    """The parser of one program: its flags as a catalogue, how messages name it, and what
    argparse does with a word it does not know (`parse_known_args` keeps it for the program)."""

    catalogue: Catalogue
    name: str
    entry_file: Path
    keeps_unknown: bool
    has_positionals: bool
    allows_abbreviations: bool


def _entry_file(script: str | None, entry: str, source_roots: Sequence[str]) -> Path | None:
    """The file `entry` names, looked up where the command may run from: the script's folder,
    the repository it is in (up to its top), and the folders the user named."""
    path = Path(entry)
    if path.is_absolute():
        return path if probes.is_file(path) else None
    folders: list[Path] = []
    if script:
        here = Path(script).resolve().parent
        folders.append(here)
        found = repository_root(str(here))
        root = Path(found) if found is not None else None
        for folder in here.parents:
            folders.append(folder)
            if folder == root or probes.exists(folder / ".git"):
                break
    folders.extend(Path(r).resolve() for r in source_roots)
    return next((f / path for f in folders if probes.is_file(f / path)), None)


@probes.once_per_check
def tool_parser(script: str | None, entry: str | None, source_roots: Sequence[str] = ()) -> ToolParser | None:
    """The parser of the program `entry` (as the command writes it), or None when it is not at
    hand or cannot be read in full. Looked for once per check: a script's launches on each of
    its paths mostly run one program."""
    if not entry or "$" in entry:
        return None
    found = _entry_file(script, entry, source_roots)
    if found is None:
        return None
    try:
        stat = found.stat()
    except OSError:
        return None
    # Read once per version of the file: a process that lints again after an edit reads it again.
    return _read(found.resolve(), stat.st_mtime_ns, stat.st_size)


@probes.remembered(maxsize=None)
def _read(entry_file: Path, _mtime_ns: int, size: int) -> ToolParser | None:
    if size > _MAX_BYTES:
        return None
    from megalint.megatron.extraction_cache import cached

    # Kept by the file's content: libcst takes half a second on a converter of 900 lines.
    data, _files = cached(f"own-parser\n{entry_file}", lambda: ({"parser": _extract(entry_file)}, [entry_file]))
    found = data.get("parser")
    if not isinstance(found, dict):
        return None
    catalogue = Catalogue.from_dict({"format": 1, "version": "HEAD", "flags": found["flags"]}, origin=str(entry_file))
    return ToolParser(
        catalogue,
        entry_file.name,
        entry_file,
        keeps_unknown=bool(found["keeps_unknown"]),
        has_positionals=bool(found["has_positionals"]),
        allows_abbreviations=bool(found["allows_abbreviations"]),
    )


def _extract(entry_file: Path) -> dict[str, Any] | None:
    from megalint.megatron.extract.own_parser import read_own_parser

    return read_own_parser(entry_file)


def bind_tool(argv: Sequence[Word], parser: ToolParser) -> BoundArgs | None:
    """`argv` bound as the program's own parser reads it; None when a word is a prefix argparse
    could take as an abbreviation of one of its flags, which the binding cannot follow."""
    bound = bind(argv, parser.catalogue)
    options = parser.catalogue.option_strings()
    problems = []
    for p in bound.problems:
        if p.kind is ProblemKind.UNKNOWN_FLAG and p.option is not None:
            written = p.option.split("=", 1)[0]
            if parser.allows_abbreviations and any(o.startswith(written) for o in options):
                return None
            if parser.keeps_unknown:
                continue  # parse_known_args hands it back to the program
        if p.kind is ProblemKind.POSITIONAL and (parser.keeps_unknown or parser.has_positionals):
            continue
        if p.kind is ProblemKind.OTHER_VERSION:
            p = replace(p, kind=ProblemKind.UNKNOWN_FLAG, history=None)
        problems.append(p)
    bound.problems = problems
    return bound
