"""Checking the files of a run on every core, and from the cache of results.

The files are shared among worker processes forked from the run, so that each starts with the
rules and configurations already loaded; their outcomes come back in the files' order, so the
report is the one a single process makes. Where processes cannot be forked (Windows), or when
there is one file or one job, the files are checked in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from megalint.checking.outcome import FixMode, Outcome
from megalint.errors import RuleFileError, UsageError, internal_error_line

if TYPE_CHECKING:
    from megalint.checking.cache import ResultCache
    from megalint.checking.setup import Setup

Todo = tuple[str, str, "Setup"]  # (text, the name it is reported under, its setup)
# What checking one file gives: its outcome, the line telling of an internal error, or the
# error that stops the run.
Result = Outcome | str | Exception
CacheFor = Callable[["Setup"], "ResultCache | None"]

# The files a pool's workers check, set before the pool forks them.
_TODO: list[Todo] = []
_FIXES: list[FixMode] = [FixMode()]
_AGAIN = "again"  # a worker's word for an error the run must raise itself, as it is met


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_one(todo: Todo, fixes: FixMode) -> Result:
    # Imported for the first file not in the cache: a run read from the cache needs no linter.
    from megalint.checking.one_file import check_text

    text, shown, setup = todo
    try:
        return check_text(text, shown, setup, fixes)
    except (UsageError, RuleFileError) as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - one bad file must not hide the others' findings
        return internal_error_line(exc, shown)


def _work(index: int) -> Outcome | str:
    result = check_one(_TODO[index], _FIXES[0])
    return _AGAIN if isinstance(result, Exception) else result


@dataclass
class Found:
    """What the cache of results holds for each file of a run: its cache (None: not cached, as
    with --no-cache or fixes to apply) and the outcome kept there (None: to check)."""

    caches: list[ResultCache | None]
    hits: list[Outcome | None]

    def without(self, dropped: Sequence[int]) -> Found:
        """The same without the files at `dropped` (they will not be checked)."""
        gone = set(dropped)
        keep = [k for k in range(len(self.hits)) if k not in gone]
        return Found([self.caches[k] for k in keep], [self.hits[k] for k in keep])


def look_up(todo: Sequence[Todo], fixes: FixMode, cache_for: CacheFor) -> Found:
    """Each file's outcome in the cache of results, where it is kept."""
    # Which fixes a report counts as applied depends on --unsafe-fixes, which the cache's key leaves out.
    caches = [None if fixes.active or fixes.unsafe else cache_for(setup) for _, _, setup in todo]
    hits = [c.get(shown, text) if c is not None else None for c, (text, shown, _) in zip(caches, todo, strict=True)]
    return Found(caches, hits)


def check_all(todo: Sequence[Todo], fixes: FixMode, jobs: int, found: Found) -> Iterator[Result]:
    """The result of each file of `todo`, in order: from the cache where `found` has it."""
    hits = found.hits
    misses = [k for k, hit in enumerate(hits) if hit is None]
    fresh = _results(todo, misses, fixes, jobs)
    for k, item in enumerate(todo):
        hit = hits[k]
        if hit is not None:
            yield hit
            continue
        result = next(fresh)
        if result == _AGAIN:
            result = check_one(item, fixes)
        cache = found.caches[k]
        if cache is not None and isinstance(result, Outcome):
            cache.put(item[1], item[0], result)
        yield result


def _results(todo: Sequence[Todo], misses: list[int], fixes: FixMode, jobs: int) -> Iterator[Result]:
    if misses:
        # The linter and each setup's settings are made here, before any worker is forked: the
        # workers share them instead of each importing and making its own.
        from megalint.checking import one_file  # noqa: F401

        for k in misses:
            todo[k][2].prepare()
    jobs = min(jobs, len(misses))
    if jobs <= 1:
        for k in misses:
            yield check_one(todo[k], fixes)
        return
    # Imported only for a pool: a run of one file (a pre-commit call) needs neither.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if "fork" not in multiprocessing.get_all_start_methods():
        for k in misses:
            yield check_one(todo[k], fixes)
        return
    _TODO[:] = todo
    _FIXES[0] = fixes
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            # Small chunks: launch scripts differ a hundredfold in the time they take.
            yield from pool.map(_work, misses, chunksize=max(1, min(8, len(misses) // (jobs * 8))))
    finally:
        _TODO.clear()
