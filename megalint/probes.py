"""The questions a check asks the file system ("is there a file here?"), kept with their answers.

What a script's findings say can rest on a file that is not there: a `source ./env.sh` that is
not found, a fork's marker folder above the script, a `.git` that ends the search for one. The
cache of results (checking/cache.py) and the replay (replay.py) name the files a result read;
these answers are what they must also see unchanged before they trust the result again: a sourced
file created since is read, not reported missing from a stale entry.

A check asks through `is_file`, `is_dir`, `exists` and `py_files`; `recorded()` collects every
question asked while it is open, with the answer (the kind of file found, an `S_IFMT` value, 0 for
none; for a folder's Python files, a checksum of their names). Work that is remembered across a
run's files (`remembered`), or kept on disk (the extraction cache), hands its answers to each
later check that uses it (`told`); work a script's launches share is done once per script
(`once_per_check`), and work the scripts of one run share (the folders above them, the entry
files they run) once per run (`once_per_run`).
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from megalint.cachedir import PY_FILES, answer, file_kind

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")
# absolute path -> S_IFMT of what is there (links followed), 0 for nothing; or a folder's Python
# files (cachedir.PY_FILES) -> a checksum of their names
Answers = dict[str, int]

_asked: Answers | None = None  # the answers of the check now running, when one is recorded
_kept: dict[object, object] | None = None  # what `once_per_check` computed in the check now running (one_check)
_run: dict[object, tuple[object, Answers]] | None = None  # what `once_per_run` computed in the run now going (one_run)


def _ask(path: str | os.PathLike[str]) -> int:
    full = os.path.abspath(os.fspath(path))
    found = file_kind(full)
    if _asked is not None:
        _asked.setdefault(full, found)
    return found


def is_file(path: str | os.PathLike[str]) -> bool:
    """`os.path.isfile`, recorded."""
    return _ask(path) == stat.S_IFREG


def is_dir(path: str | os.PathLike[str]) -> bool:
    """`os.path.isdir`, recorded."""
    return _ask(path) == stat.S_IFDIR


def exists(path: str | os.PathLike[str]) -> bool:
    """`os.path.exists`, recorded."""
    return _ask(path) != 0


def py_files(folder: Path) -> list[Path]:
    """The Python files anywhere under `folder`; recorded by a checksum of their names, so that a
    module added there later is a change."""
    found = list(folder.rglob("*.py"))
    if _asked is not None:
        question = os.path.abspath(folder) + PY_FILES
        _asked.setdefault(question, answer(question))
    return found


@contextmanager
def recorded() -> Iterator[Answers]:
    """Collect the answers given while open (also into any recording around this one)."""
    global _asked
    outer = _asked
    mine: Answers = {}
    _asked = mine
    try:
        yield mine
    finally:
        _asked = outer
        told(mine)


def told(answers: Answers) -> None:
    """Answers an earlier check got, given to the recording now open: work remembered from then
    (in memory, or in a cache on disk) rests on them as if it had asked again."""
    if _asked is not None:
        for path, found in answers.items():
            _asked.setdefault(path, found)


def gather(into: Answers, answers: Answers) -> None:
    """Add one check's answers to those of a run: a path two checks found different (a file made
    meanwhile) gets -1, which no kind matches, so that nothing resting on it is trusted."""
    for path, found in answers.items():
        if into.setdefault(path, found) != found:
            into[path] = -1


def unchanged(answers: Answers, now: Callable[[str], int] = answer) -> bool:
    """Whether the file system answers each question as it did (`now`: how it is asked)."""
    return all(now(path) == found for path, found in answers.items())


@contextmanager
def one_check() -> Iterator[None]:
    """While one script is checked (pipeline.lint_text): what `once_per_check` computes is kept."""
    global _kept
    outer, _kept = _kept, {}
    try:
        yield
    finally:
        _kept = outer


def once_per_check(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn` computed once per check for the same arguments (the launches of one script look at the
    same folders): the files do not change while one script is checked, but may before the next,
    so nothing is kept past it. Outside a check (`one_check`), computed every time. Its answers go
    to the recording the first call was made in, the check's own."""

    @functools.wraps(fn)
    def call(*args: object) -> T:
        kept = _kept
        if kept is None:
            return fn(*args)
        key = (fn, args)
        if key not in kept:
            kept[key] = fn(*args)
        return kept[key]  # type: ignore[return-value]

    return call


@contextmanager
def one_run() -> Iterator[None]:
    """While the files of one run are checked (checking/run.py): what `once_per_run` computes is
    kept, for this process and the workers it forks."""
    global _run
    outer, _run = _run, {}
    try:
        yield
    finally:
        _run = outer


def once_per_run(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn` computed once per run for the same arguments: a run reads the files as they are when
    it starts, and the next run asks again. A call answered from what was kept gives the answers
    the first call got to the recording now open, as if it had asked again (a file's cached
    result rests on them). Outside a run (`one_run`), computed every time."""

    @functools.wraps(fn)
    def call(*args: object) -> T:
        kept = _run
        if kept is None:
            return fn(*args)
        key = (fn, args)
        found = kept.get(key)
        if found is None:
            found = kept[key] = _with_answers(fn, args)  # its recording told the one now open
        else:
            told(found[1])
        return found[0]  # type: ignore[return-value]

    return call


def _with_answers(fn: Callable[..., T], args: tuple[object, ...]) -> tuple[T, Answers]:
    """What `fn(*args)` gives, and the answers it got (told to the recording open around it too)."""
    with recorded() as answers:
        value = fn(*args)
    return value, answers


def remembered(maxsize: int | None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """`functools.lru_cache` for work that asks the file system: a call answered from memory
    gives the answers the first call got to the recording now open, as if it had asked again."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.lru_cache(maxsize=maxsize)
        def computed(*args: object) -> tuple[T, Answers]:
            return _with_answers(fn, args)

        @functools.wraps(fn)
        def call(*args: object) -> T:
            value, answers = computed(*args)
            told(answers)
            return value

        call.cache_clear = computed.cache_clear  # type: ignore[attr-defined]
        return call

    return wrap
