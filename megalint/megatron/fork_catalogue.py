"""The catalogue of a fork's parser: its Megatron base plus the flags the fork adds elsewhere.

The base is the fork's own Megatron tree when it is at hand (extracted with libcst), else the
shipped catalogue of the upstream release the fork pins. MindSpeed and MindSpeed-LLM add their
features' `register_args` flags (and the legacy `arguments.py`), Pai-Megatron-Patch its
`get_patch_args`, Megatron-DeepSpeed DeepSpeed's own four flags. What is not at hand is said in
`missing`: a flag the parts at hand do not define is then undecided, not an error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from megalint import probes
from megalint.megatron.catalogue import Catalogue, CatalogueError, shipped_options
from megalint.megatron.catalogue_choice import catalogue_for, release_catalogue
from megalint.megatron.extract.sources import DirectoryTree, ExtractError
from megalint.megatron.extraction_cache import cached
from megalint.megatron.forks import (
    ARGUMENTS_FILES,
    MEGATRON_DEEPSPEED,
    MINDSPEED,
    MINDSPEED_LLM,
    PAI_MEGATRON_PATCH,
    Fork,
)

if TYPE_CHECKING:
    from pathlib import Path

    from megalint.megatron.extract.added_flags import AddedFlags

# MindSpeed and MindSpeed-LLM patch Megatron-LM core_v0.12.1 (MindSpeed-LLM's 3rdparty/Megatron-LM
# submodule pins a845aa7e, that tag).
MINDSPEED_BASE = "0.12.1"
# deepspeed/__init__.py:270@edaa7221 `add_config_arguments`, which Megatron-DeepSpeed's parse_args
# calls (megatron/arguments.py:54@f4157bea); DeepSpeed is not in the fork's tree. `--deepspeed_mpi`
# is added by DeepSpeed before v0.13.1.
DEEPSPEED_FLAGS: tuple[dict[str, Any], ...] = (
    {"option_strings": ["--deepspeed"], "dest": "deepspeed", "action": "store_true", "default": False},
    {"option_strings": ["--deepspeed_config"], "dest": "deepspeed_config", "default": None},
    {"option_strings": ["--deepscale"], "dest": "deepscale", "action": "store_true", "default": False},
    {"option_strings": ["--deepscale_config"], "dest": "deepscale_config", "default": None},
    {"option_strings": ["--deepspeed_mpi"], "dest": "deepspeed_mpi", "action": "store_true", "default": False},
)


@dataclass(frozen=True)
class ForkCatalogue:
    """A fork's parser as far as it is at hand: `missing` says what is not (None: all of it);
    `base_pinned` is False when the upstream base is a shipped release chosen for want of the
    pinned tree, so a flag of another release is not known to be absent."""

    data: dict[str, Any] = field(repr=False, compare=False)  # as extracted (Catalogue.to_dict's form)
    origin: str
    missing: str | None
    base_pinned: bool
    extra_options: tuple[str, ...] = ()  # what it defines that no Megatron-LM release does
    sources: tuple[str, ...] = ()  # the files it was read from

    @cached_property
    def catalogue(self) -> Catalogue:
        """The fork's catalogue, built when first asked for: a launch in Megatron-LM's own tree
        that adds no flag runs on the curated catalogue, and building this one took 6 ms of
        its first check. Raises ExtractError when the data does not make a catalogue."""
        try:
            return Catalogue.from_dict(self.data, origin=self.origin)
        except CatalogueError as exc:
            raise ExtractError(str(exc)) from None


# Folders are named by strings (absolute, resolved), as `pathlib.Path` writes them: a launch in a
# Megatron-LM checkout reads its catalogue from the extraction cache without importing pathlib.


def _megatron_tree(folders: Sequence[str]) -> str | None:
    return next((f for f in folders if any(probes.is_file(os.path.join(f, a)) for a in ARGUMENTS_FILES)), None)


def _package(folders: Sequence[str], name: str) -> str | None:
    """The first folder holding the Python package `name` (itself, or a checkout around it)."""
    for f in folders:
        if probes.is_file(os.path.join(f, name, "__init__.py")):
            return f
        if os.path.basename(f) == name and probes.is_file(os.path.join(f, "__init__.py")):
            return os.path.dirname(f)
    return None


def _feature_files(root: str, package: str) -> list[str]:
    """A MindSpeed-style package's modules that add flags: features_manager/ and the argument modules."""
    from pathlib import Path

    base = Path(root)
    found = sorted(p.relative_to(base).as_posix() for p in probes.py_files(base / package / "features_manager"))
    for module in ("training/arguments.py", "arguments.py"):
        if probes.is_file(os.path.join(root, package, module)):
            found.append(f"{package}/{module}")
    return found


def _merge(flags: list[dict[str, Any]], added: AddedFlags) -> list[dict[str, Any]]:
    """`added` applied to `flags` as the fork's parser applies it: a flag defined again replaces
    the earlier one (MindSpeed's parsers resolve conflicts), one added if absent is kept only when
    new, and added choices extend the flag's list."""
    out = list(flags)
    for defined in added.flags:
        flag: dict[str, Any] = defined.to_json()
        strings = set(flag["option_strings"])
        kept = []
        for old in out:
            rest = [o for o in old["option_strings"] if o not in strings]
            if rest:
                kept.append(old if len(rest) == len(old["option_strings"]) else {**old, "option_strings": rest})
        out = [*kept, flag]
    known = {o for f in out for o in f["option_strings"]}
    for if_absent in added.if_absent:
        flag = dict(if_absent.to_json())
        if not known.intersection(flag["option_strings"]):
            out.append(flag)
            known.update(flag["option_strings"])
    for option, value in added.choices:
        for i, f in enumerate(out):
            choices = f.get("choices")
            if option in f["option_strings"] and isinstance(choices, list) and value not in choices:
                out[i] = {**f, "choices": [*choices, value]}
    return out


def _first_definitions(flags: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each option string in its first definition only: a flag a tree defines on two branches of an
    `if`, or one DeepSpeed would add again, is one flag of the parser."""
    seen: set[str] = set()
    out = []
    for f in flags:
        if f.get("choices") is not None and not isinstance(f["choices"], list):
            f = {**f, "choices": None}  # an enum's members: any value is taken as possible
        rest = [o for o in f["option_strings"] if o not in seen]
        seen.update(rest)
        if rest:
            out.append(f if len(rest) == len(f["option_strings"]) else {**f, "option_strings": rest})
    return out


def _extract(
    fork: Fork, tree: str | None, base: str, scans: list[tuple[str, list[str]]]
) -> tuple[dict[str, Any], list[Path]]:
    # Imported here: reading a tree needs libcst; a catalogue from the extraction cache does not.
    from pathlib import Path

    from megalint.megatron.extract import extract_from_tree
    from megalint.megatron.extract.added_flags import AddedFlags, read_added_flags

    read: list[Path] = []
    if tree is not None:
        extracted = extract_from_tree(DirectoryTree(Path(tree)))
        flags: list[dict[str, Any]] = [f.to_json() for f in extracted.flags]
        read.extend(Path(tree) / p for p in extracted.parsed_files)
    else:
        flags = release_catalogue(base).to_dict()["flags"]
    choices: list[tuple[str, object]] = []
    for folder, files in scans:
        root = Path(folder)
        added = read_added_flags(DirectoryTree(root), files)
        # Choices are added once every feature has defined its flags: MindSpeed-LLM defines
        # `--context-parallel-algo` again after MindSpeed's features added their algorithms to it.
        choices.extend(added.choices)
        flags = _merge(flags, replace(added, choices=[]))
        read.extend(root / p for p in added.parsed_files)
    flags = _merge(flags, AddedFlags(choices=choices))
    if fork.name == MEGATRON_DEEPSPEED:
        flags.extend(DEEPSPEED_FLAGS)
    flags = _first_definitions(flags)
    return {"format": 1, "version": base, "generated_from": f"{fork.name}: {fork.reason}", "flags": flags}, read


def fork_catalogue(fork: Fork, source_roots: Sequence[str], version: str | None) -> ForkCatalogue:
    """The catalogue of `fork`'s parser from its source and the folders the user named.

    Raises ExtractError when a tree at hand cannot be read."""
    # Every launch of a repository runs on the same parser: build it (check the cache's files,
    # read its flags) once per run, not once per launch.
    return _fork_catalogue(fork.name, fork.root, tuple(source_roots), version)


@probes.remembered(maxsize=16)
def _fork_catalogue(name: str, root: str | None, source_roots: tuple[str, ...], version: str | None) -> ForkCatalogue:
    fork = Fork(name, f"{name} at {root}", root)
    fork_root = root
    named = [os.path.realpath(r) for r in source_roots]
    here = [fork_root] if fork_root is not None else []
    tree = _megatron_tree([*here, *named])
    missing: str | None = None
    scans: list[tuple[str, list[str]]] = []
    base = MINDSPEED_BASE if fork.name in (MINDSPEED, MINDSPEED_LLM) else catalogue_for(version)[0].version
    if fork.name in (MINDSPEED, MINDSPEED_LLM):
        mindspeed = _package([*here, *(os.path.join(f, "3rdparty", "MindSpeed") for f in here), *named], "mindspeed")
        if mindspeed is not None:
            scans.append((mindspeed, _feature_files(mindspeed, "mindspeed")))
        else:
            missing = "MindSpeed (the `mindspeed` package this fork runs on) is not at hand: name its checkout with --megatron-root"
        if fork.name == MINDSPEED_LLM and fork_root is not None:
            pkg = "mindspeed_llm" if probes.is_dir(os.path.join(fork_root, "mindspeed_llm")) else "modellink"
            if probes.is_dir(os.path.join(fork_root, pkg)):
                scans.append((fork_root, _feature_files(fork_root, pkg)))
        if fork.name == MINDSPEED_LLM and not any(r == fork_root for r, _ in scans):
            missing = "MindSpeed-LLM's source is not at hand: name its checkout with --megatron-root"
    elif fork.name == PAI_MEGATRON_PATCH:
        patch = _package([*here, *named], "megatron_patch")
        if patch is not None and probes.is_file(os.path.join(patch, "megatron_patch", "arguments.py")):
            scans.append((patch, ["megatron_patch/arguments.py"]))
        else:
            missing = "Pai-Megatron-Patch's megatron_patch/arguments.py is not at hand: name its checkout with --megatron-root"
    elif tree is None:
        missing = f"the {fork.name} source is not at hand: name its checkout with --megatron-root"
    key_parts = [fork.name, str(tree), base, *(f"{r}:{','.join(files)}" for r, files in scans)]
    try:
        data, sources = cached("\n".join(key_parts), lambda: _extract(fork, tree, base, scans))
    except RecursionError:
        raise ExtractError(f"{tree}: the parser nests too deeply to read") from None
    flags = data.get("flags")
    if not isinstance(flags, list) or not all(isinstance(f, dict) for f in flags):
        raise ExtractError(f"{fork.name}: the catalogue read has no list of flags")
    options = {o for f in flags for o in f.get("option_strings") or () if isinstance(o, str)}
    # MindSpeed(-LLM) pin a known release; any other base chosen here is a guess.
    extra = tuple(sorted(options - shipped_options()))
    pinned = tree is not None or fork.name in (MINDSPEED, MINDSPEED_LLM)
    return ForkCatalogue(data, fork.name, missing, pinned, extra, tuple(sources))
