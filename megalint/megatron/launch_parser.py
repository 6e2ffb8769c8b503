"""The parser a launch's flags are read by: Megatron-LM's catalogue, or the fork's own.

`parser_for_launch` is the one question the pipeline asks per launch; `bind_launch` binds the
launch's words against the answer. Where a part of the fork's parser is not at hand, a flag the
parts at hand do not define leaves the flag checks undecided, with the reason, rather than wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from megalint import probes
from megalint.megatron.bind import bind
from megalint.megatron.bound import BoundArgs, ProblemKind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.catalogue_choice import catalogue_for
from megalint.megatron.entry_points import ENTRY_DEPENDENT, bind_entry_point, entry_problems, stock_entry
from megalint.megatron.forks import (
    MEGATRON_TREE,
    PAI_MEGATRON_PATCH,
    Fork,
    detect_fork,
    entry_file_read,
    pai_pinned_release,
)
from megalint.megatron.supplied import supplied_args
from megalint.shell.values import Word

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True)
class LaunchParser:
    """What reads a launch's flags. `fork` is None for Megatron-LM; `missing` says which part of
    the fork's parser is not at hand; `other_releases` why a flag of another Megatron-LM release
    is not known to be wrong (the fork's pinned base is not at hand); `whole` that the catalogue
    is the entry point's whole parser (the flags its `extra_args_provider` adds included);
    `release` why `version` is the release the launch pins rather than the run's; `code` the
    Python files it was read from (a result resting on them is stale once one of them changes)."""

    catalogue: Catalogue
    version: str
    fork: Fork | None = None
    missing: str | None = None
    other_releases: str | None = None
    whole: bool = False
    release: str | None = None
    code: tuple[str, ...] = ()


def _whole(fork: Fork, entry: str | None) -> bool:
    """Whether the fork's catalogue is the whole parser of the entry point: a file that imports
    the fork and adds no flags of its own (Pai's `get_patch_args` is in the catalogue)."""
    if fork.entry_file is None:
        return stock_entry(entry) is not None
    try:
        with open(fork.entry_file, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return False
    if "add_argument(" in text:
        return False  # the entry point adds flags of its own, however it hands them to Megatron
    providers = set(re.findall(r"extra_args_provider\s*=\s*([A-Za-z_][\w.]*)", text)) - {"None"}
    if fork.name == PAI_MEGATRON_PATCH:
        return providers == {"get_patch_args"}
    # A script that does not import Megatron (a Hugging Face trainer beside the fork) has its own parser.
    return not providers and re.search(r"^\s*(?:from|import)\s+(?:megatron|mindspeed)", text, re.M) is not None


def parser_for_launch(
    version_text: str | None,
    script: str | None,
    entry: str | None,
    argv: Sequence[Word],
    source_roots: Sequence[str] = (),
    pythonpath: Word | None = None,
) -> LaunchParser:
    """The parser of one launch: its fork's (from the source at hand) or Megatron-LM's for the
    version given; a Pai-Megatron-Patch launch runs the Megatron-LM its PYTHONPATH pins, unless
    the user names a version."""
    catalogue, version, _note = catalogue_for(version_text)
    fork = detect_fork(script, entry, argv, source_roots)
    if fork is None:
        read = entry_file_read(script, entry, source_roots)
        return LaunchParser(catalogue, version, code=(str(read),) if read is not None else ())
    pinned = pai_pinned_release(pythonpath) if fork.name == PAI_MEGATRON_PATCH and version_text is None else None
    if pinned is not None:
        version_text = pinned[0]
    # Reading a fork's source needs libcst: imported only when a launch runs on a fork.
    from megalint.megatron.extract.sources import ExtractError
    from megalint.megatron.fork_catalogue import fork_catalogue

    try:
        found = fork_catalogue(fork, source_roots, version_text)
        code = found.sources + ((str(fork.entry_file),) if fork.entry_file is not None else ())
        if fork.name == MEGATRON_TREE and found.missing is None and not found.extra_options:
            # Megatron-LM's own tree: its curated catalogue is better, plus the flags a non-stock
            # entry point's provider adds when they can be read.
            return replace(_with_entry_provider(version_text, fork, entry), code=code)
        found_catalogue = found.catalogue  # built here: a fork's own flags are bound against it
    except ExtractError as exc:
        return LaunchParser(catalogue, version, fork, f"the {fork.name} parser could not be read: {exc}")
    if fork.name == MEGATRON_TREE and found.missing is None:
        extra = found.extra_options
        fork = replace(fork, reason=f"{fork.reason}, which adds {', '.join(extra[:3])}{' …' if len(extra) > 3 else ''}")
    other = (
        None
        if found.base_pinned
        else (
            f"the Megatron-LM release {fork.name} runs on is not at hand; a flag of another release may be defined there"
        )
    )
    if pinned is not None:
        release = f"Megatron-LM {catalogue_for(version_text)[1]}: {pinned[1]}"
        return LaunchParser(
            found_catalogue,
            catalogue_for(version_text)[1],
            fork,
            found.missing,
            other,
            _whole(fork, entry),
            release,
            code,
        )
    return LaunchParser(
        found_catalogue, found_catalogue.version, fork, found.missing, other, _whole(fork, entry), code=code
    )


def _with_entry_provider(version_text: str | None, fork: Fork, entry: str | None) -> LaunchParser:
    catalogue, version, _note = catalogue_for(version_text)
    if stock_entry(entry) is None and fork.entry_file is not None and fork.root is not None:
        own = _entry_catalogue(version_text, fork.root, fork.entry_file)
        if own is not None:
            return LaunchParser(own[0], version, whole=True, code=own[1])
    return LaunchParser(catalogue, version)


@probes.remembered(maxsize=None)
def _entry_catalogue(version_text: str | None, root: str, entry_file: str) -> tuple[Catalogue, tuple[str, ...]] | None:
    """The version's catalogue plus what `entry_file`'s provider adds, and the files that says;
    read once per entry file, and from the extraction cache while those files are unchanged."""
    from megalint.megatron.extraction_cache import cached

    def read() -> tuple[dict[str, Any], list[Path]]:
        # Imported on a miss only: reading the provider needs libcst.
        from pathlib import Path

        from megalint.megatron.entry_arguments import provider_flags

        return provider_flags(Path(root), Path(entry_file))

    data, files = cached(f"entry-arguments\n{root}\n{entry_file}", read)
    flags = data.get("flags")
    if not isinstance(flags, list):
        return None
    catalogue = catalogue_for(version_text)[0]
    base = catalogue.to_dict()
    known = {o for f in base["flags"] for o in f["option_strings"]}
    new = [f for f in flags if not known.intersection(f["option_strings"])]
    if new:
        catalogue = Catalogue.from_dict({**base, "flags": [*base["flags"], *new]}, origin=str(entry_file))
    return catalogue, tuple(files)


def bind_launch(argv: Sequence[Word], entry: str | None, parser: LaunchParser) -> BoundArgs:
    """`argv` bound against the launch's parser; flag problems that the parts not at hand could
    answer are undecided (`BoundArgs.problems_unknown`), never reported."""
    if parser.fork is None:
        if parser.whole:
            # The entry point's whole parser is known: every flag problem stands.
            return supplied_args(bind(argv, parser.catalogue), parser.version, False, entry)
        return bind_entry_point(argv, entry, parser.catalogue, parser.version)
    bound = bind(argv, parser.catalogue)
    problems = bound.problems if parser.whole else entry_problems(entry, bound.problems)
    if parser.other_releases is None:
        # The fork's own tree is its whole base: a flag of another Megatron-LM release is unknown here.
        problems = [
            replace(p, kind=ProblemKind.UNKNOWN_FLAG, history=None) if p.kind is ProblemKind.OTHER_VERSION else p
            for p in problems
        ]
    reasons = []
    if parser.missing is not None and any(p.kind in ENTRY_DEPENDENT for p in problems):
        reasons.append(parser.missing)
    if parser.other_releases is not None and any(p.kind in ENTRY_DEPENDENT for p in problems):
        reasons.append(parser.other_releases)
    bound.problems = problems
    bound.problems_unknown = "; ".join(reasons) or None
    return supplied_args(bound, parser.version, stock_entry(entry) is not None, entry)
