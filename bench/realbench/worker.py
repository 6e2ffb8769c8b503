"""Checking the files with megalint's own pipeline, as `megalint --isolated` does: no
configuration, every default rule, suppression comments applied; the repository's checkout is the
root that `source` may follow within. Files are shared among worker processes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from importlib import resources

from bench.realbench.count import FileRecord, record_of
from bench.realbench.files import flag_sites, known_flags
from megalint.checking.one_file import finalise
from megalint.checking.setup import AnalysisOptions, Configs, Setup, Setups
from megalint.errors import InputError, internal_error_line
from megalint.megatron.catalogue import SHIPPED_FOLDERS, Catalogue
from megalint.pipeline import lint_text
from megalint.source import decode

Job = tuple[str, str]  # (file, the checkout it belongs to)

_state: dict[str, object] = {}


def catalogue_flags() -> frozenset[str]:
    """The Megatron flags: every long option string of every catalogue megalint ships."""
    options: set[str] = set()
    root = resources.files("megalint.data")
    for folder in SHIPPED_FOLDERS:
        for entry in sorted(root.joinpath(folder).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                options.update(Catalogue.from_file(str(entry)).option_strings())
    return known_flags(options)


def start(with_memory: bool, known: frozenset[str]) -> None:
    """Set up a worker: the rules and settings of an isolated run, made once."""
    configs = Configs(None, isolated=True)
    assert configs.fixed is not None
    _state["setup"] = Setups(AnalysisOptions(with_memory=with_memory), configs).setup(configs.fixed)
    _state["known"] = known


def check(job: Job) -> FileRecord:
    path, checkout = job
    setup = _state["setup"]
    known = _state["known"]
    assert isinstance(setup, Setup) and isinstance(known, frozenset)
    shown = os.path.realpath(path)
    try:
        with open(shown, "rb") as fh:
            text = decode(shown, fh.read())
    except (InputError, OSError) as exc:
        return FileRecord(shown, problem=str(exc))
    written = flag_sites(text, known)
    settings = replace(setup.settings, root_dir=os.path.realpath(checkout))
    try:
        result = lint_text(shown, text, settings)
        diagnostics = finalise(result, text, setup, shown)
    except Exception as exc:  # noqa: BLE001 - a failure is a figure of the bench, not its end
        return FileRecord(shown, written, problem=internal_error_line(exc, shown))
    return record_of(shown, written, result, diagnostics, known)


def check_all(jobs: Sequence[Job], n: int, with_memory: bool, known: frozenset[str]) -> Iterator[FileRecord]:
    """The records of `jobs`, in order, from `n` worker processes (in this process when n is 1)."""
    if n <= 1:
        start(with_memory, known)
        yield from map(check, jobs)
        return
    with ProcessPoolExecutor(max_workers=n, initializer=start, initargs=(with_memory, known)) as pool:
        yield from pool.map(check, jobs, chunksize=4)
