"""Telling a launch of a Megatron fork from a launch of Megatron-LM, and where its source is.

A fork is told by the repository the script lives in (walking up from the script's folder:
`mindspeed_llm/` or `modellink/`, `mindspeed/`, `megatron_patch/`, `examples_deepspeed/`, a
`megatron/…/arguments.py` of its own), by the imports of the entry file the launch runs, and by
`--deepspeed` on the launch line. Folders the user names (`--megatron-root`) stand in for the
repository when the script lives outside one and supply parts a fork needs (MindSpeed-LLM needs
the separate `mindspeed` package).

Folders and files are named by strings, as `pathlib.Path` would write them: every launch asks
this module where it runs, and pathlib (with the urllib.parse and ipaddress it imports) was 3 ms
of a first check.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from megalint import lazy_re, probes
from megalint.shell.values import Word

MINDSPEED = "mindspeed"
MINDSPEED_LLM = "mindspeed-llm"
MEGATRON_DEEPSPEED = "megatron-deepspeed"
PAI_MEGATRON_PATCH = "pai-megatron-patch"
MEGATRON_LLM = "megatron-llm"  # epfLLM/Megatron-LLM
MEGATRON_TREE = "megatron-tree"  # any other repository with a Megatron tree of its own
_PARSER_NAMES = {
    MINDSPEED: "MindSpeed",
    MINDSPEED_LLM: "MindSpeed-LLM",
    MEGATRON_DEEPSPEED: "Megatron-DeepSpeed",
    PAI_MEGATRON_PATCH: "Pai-Megatron-Patch",
    MEGATRON_LLM: "Megatron-LLM (epfLLM)",
}

ARGUMENTS_FILES = ("megatron/training/arguments.py", "megatron/arguments.py")
_MARKERS = ("mindspeed_llm", "modellink", "mindspeed", "megatron_patch", "examples_deepspeed", *ARGUMENTS_FILES)
_DEEPSPEED_FLAGS = ("--deepspeed", "--deepspeed_config", "--deepspeed-config")
# epfLLM/Megatron-LLM spells every flag with underscores (megatron/arguments.py:840@806a8330).
_UNDERSCORE_PARSER = lazy_re.compile(r"""["']--tensor_model_parallel_size["']""")


@dataclass(frozen=True)
class Fork:
    """A Megatron fork a launch runs: its name, as rules name it in `forks:`, why it was told
    from Megatron-LM, and the folder holding its source (None when it is not at hand)."""

    name: str
    reason: str
    root: str | None = None  # an absolute path, resolved
    entry_file: str | None = None

    @property
    def parser_name(self) -> str:
        """How a message names the parser that reads this fork's flags."""
        return _PARSER_NAMES.get(self.name, "this repository's Megatron")

    @property
    def validates_as_upstream(self) -> bool:
        """Whether Megatron-LM's own checks run on this fork's launches. Pai-Megatron-Patch adds
        flags (`extra_args_provider=get_patch_args`) to an unmodified Megatron-LM, whose
        `validate_args` and model code run as they are: upstream's rules hold there."""
        return self.name == PAI_MEGATRON_PATCH


@probes.once_per_run
def _imports(text: str, module: str) -> bool:
    return re.search(rf"^\s*(?:from|import)\s+{re.escape(module)}\b", text, re.M) is not None


@probes.once_per_run  # a repository's scripts share their folders
def repository_root(start: str) -> str | None:
    """The nearest folder at or above `start` (an absolute path, resolved) that holds a fork's or
    Megatron's source, stopping at the top of a git repository."""
    folder = start
    while True:
        if any(probes.exists(os.path.join(folder, m)) for m in _MARKERS):
            return folder
        if probes.exists(os.path.join(folder, ".git")):
            return None
        above = os.path.dirname(folder)
        if above == folder:
            return None
        folder = above


def _entry_file(entry: str | None, folders: Sequence[str]) -> str | None:
    if not entry or "$" in entry:
        return None
    path = _written(entry)
    candidates = [path] if os.path.isabs(path) else [_joined(f, path) for f in folders]
    return next((c for c in candidates if probes.is_file(c)), None)


# Texts pathlib writes otherwise: `./x.py`, `a//b`, `a/./b`, `a/`, `a/.`, `.` (on Windows, any).
_NOT_WRITTEN_SO = lazy_re.compile(r"//|/\./|^\./|/\.$|/$|^\.$")


def _written(text: str) -> str:
    """`str(Path(text))`: most entry points are written so already."""
    if os.sep == "/" and text and not _NOT_WRITTEN_SO.search(text):
        return text
    from pathlib import Path

    return str(Path(text))


def _joined(folder: str, path: str) -> str:
    """`str(Path(folder) / path)` for a folder and a relative path each as pathlib writes them."""
    if os.sep != "/":
        from pathlib import Path

        return str(Path(folder) / path)
    return folder if path == "." else os.path.join(folder, path)


@probes.once_per_run  # and mostly their entry files
def _read(path: str | None) -> str:
    if path is None:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()[:200_000]
    except OSError:
        return ""


def _own_arguments(root: str) -> str | None:
    return next((os.path.join(root, a) for a in ARGUMENTS_FILES if probes.is_file(os.path.join(root, a))), None)


@probes.once_per_run
def _spells_underscores(arguments: str) -> bool:
    return _UNDERSCORE_PARSER.search(_read(arguments)) is not None


def detect_fork(
    script: str | None, entry: str | None, argv: Sequence[Word], source_roots: Sequence[str] = ()
) -> Fork | None:
    """The Megatron fork a launch runs, or None for Megatron-LM (or a tree megalint cannot tell)."""
    placed = _placed(script, entry, tuple(source_roots))
    if placed.fork is not None:
        return placed.fork
    root, entry_file, text = placed.root, placed.entry_file, placed.text
    given = next(
        (w.text for w in argv if w.text in _DEEPSPEED_FLAGS or (w.text or "").startswith("--deepspeed_config=")), None
    )
    if given is not None or _imports(text, "deepspeed"):
        shown = os.path.basename(entry_file) if entry_file is not None else "the entry point"
        why = f"passes {given}" if given is not None else f"runs {shown}, which imports deepspeed"
        own = root if placed.arguments is not None else None
        return Fork(MEGATRON_DEEPSPEED, f"this launch {why}: it runs Megatron-DeepSpeed", own, entry_file)
    return placed.tree_fork


def entry_file_read(script: str | None, entry: str | None, source_roots: Sequence[str] = ()) -> str | None:
    """The entry file `detect_fork` read for its imports (a launch whose fork it names rests on
    it, and so does one it found none in: an import added later makes it a fork's)."""
    return _placed(script, entry, tuple(source_roots)).entry_file


@dataclass(frozen=True)
class _Placed:
    """What the files around a launch say of its fork, before its flags are read: the fork the
    repository or the entry file's imports name (`fork`), else the repository's own Megatron tree
    (`tree_fork`, when `--deepspeed` does not make it Megatron-DeepSpeed's)."""

    root: str | None
    entry_file: str | None
    text: str
    arguments: str | None
    fork: Fork | None
    tree_fork: Fork | None


@probes.once_per_check
def _placed(script: str | None, entry: str | None, source_roots: tuple[str, ...]) -> _Placed:
    # The launches of a script share its folder and mostly its entry point: the folders above it
    # are looked at (and the entry file read) once per script, not once per launch.
    script_dir = os.path.dirname(os.path.realpath(script)) if script and probes.is_file(script) else None
    root = repository_root(script_dir) if script_dir is not None else None
    named = [os.path.realpath(r) for r in source_roots]
    if root is None:
        root = next((r for r in named if repository_root(r) == r), None)
    folders = [f for f in (root, script_dir) if f is not None]
    entry_file = _entry_file(entry, folders)
    text = _read(entry_file)
    shown = os.path.basename(entry_file) if entry_file is not None else "the entry point"
    arguments = _own_arguments(root) if root is not None else None

    def placed(fork: Fork | None, tree_fork: Fork | None = None) -> _Placed:
        return _Placed(root, entry_file, text, arguments, fork, tree_fork)

    def at(name: str, why: str) -> _Placed:
        return placed(Fork(name, why, root, entry_file))

    if root is not None and (
        probes.is_dir(os.path.join(root, "mindspeed_llm")) or probes.is_dir(os.path.join(root, "modellink"))
    ):
        pkg = "mindspeed_llm" if probes.is_dir(os.path.join(root, "mindspeed_llm")) else "modellink"
        return at(MINDSPEED_LLM, f"the script lives in a MindSpeed-LLM repository ({pkg}/ at {root})")
    if _imports(text, "mindspeed_llm") or _imports(text, "modellink"):
        return at(MINDSPEED_LLM, f"{shown} imports MindSpeed-LLM's megatron_adaptor")
    if root is not None and probes.is_file(os.path.join(root, "mindspeed", "megatron_adaptor.py")):
        return at(MINDSPEED, f"the script lives in a MindSpeed repository (mindspeed/ at {root})")
    if _imports(text, "mindspeed"):
        return at(MINDSPEED, f"{shown} imports mindspeed.megatron_adaptor, which patches Megatron's arguments")
    if (root is not None and probes.is_dir(os.path.join(root, "megatron_patch"))) or _imports(text, "megatron_patch"):
        where = f"megatron_patch/ at {root}" if root is not None else f"{shown} imports megatron_patch"
        return at(PAI_MEGATRON_PATCH, f"the launch runs Pai-Megatron-Patch ({where})")
    if root is not None and probes.is_dir(os.path.join(root, "examples_deepspeed")):
        return at(
            MEGATRON_DEEPSPEED, f"the script lives in a Megatron-DeepSpeed repository (examples_deepspeed/ at {root})"
        )
    if arguments is not None and _spells_underscores(arguments):
        why = f"{arguments} spells its flags with underscores: epfLLM's Megatron-LLM"
        return placed(None, Fork(MEGATRON_LLM, why, root, entry_file))
    if arguments is not None:
        why = f"the script lives in a repository with its own Megatron tree ({arguments})"
        return placed(None, Fork(MEGATRON_TREE, why, root, entry_file))
    return placed(None)


def world_size_rewritten(fork: Fork | None, given: Callable[[str], bool]) -> str | None:
    """Why the fork does not run with processes per node × nodes as its world size, or None.

    MindSpeed-LLM's layerwise disaggregated training joins nodes with different process counts
    (cloud and edge) and sets `args.world_size` itself when it is not a multiple of TP×PP×CP
    (mindspeed_llm/features_manager/layerwise_disaggregated_training/vtp_feature.py:21-39@c77308a1)."""
    if fork is not None and fork.name == MINDSPEED_LLM and given("layerwise_disaggregated_training"):
        return (
            "--layerwise-disaggregated-training: MindSpeed-LLM joins nodes with different process counts "
            "and sets the world size itself"
        )
    return None


# The Megatron-LM each of Pai-Megatron-Patch's `backends/megatron/` folders pins (git submodules at
# a098ca5a), as the release whose line it is on: the last core_vX.Y.0 whose branch point is an
# ancestor of the pinned commit, or the release candidate the commit is tagged as.
PAI_PINNED_RELEASES = {
    "Megatron-LM-240126": ("0.4", "3709708a"),
    "Megatron-LM-240405": ("0.6", "ba773259"),
    "Megatron-LM-241113": ("0.9", "64cbae55"),
    "Megatron-LM-250217": ("0.11", "c91756d2"),
    "Megatron-LM-250328": ("0.11", "6ba97dd3"),
    "Megatron-LM-250624": ("0.13", "6a6cd478, before core_v0.14.0rc0"),
    "Megatron-LM-250908": ("0.15", "4af25fe8 = core_v0.15.0rc3"),
    "PAI-Megatron-LM-240718": ("0.15", "8399280e, after core_v0.15.0rc4"),
}
_PAI_BACKEND = lazy_re.compile(r"(?:^|[/:])((?:PAI-)?Megatron-LM-\d{6})/?(?=$|:)")


def pai_pinned_release(pythonpath: Word | None) -> tuple[str, str] | None:
    """The Megatron-LM release a Pai-Megatron-Patch launch runs, from the `backends/megatron/`
    folder its PYTHONPATH names first, and why; None when it names none megalint knows."""
    if pythonpath is None:
        return None
    for m in _PAI_BACKEND.finditer(pythonpath.partial_text):
        pinned = PAI_PINNED_RELEASES.get(m.group(1))
        if pinned is not None:
            release, commit = pinned
            return release, f"PYTHONPATH names Pai-Megatron-Patch's {m.group(1)} (Megatron-LM at {commit})"
    return None
