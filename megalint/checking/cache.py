"""A cache of results: what checking a script found, kept in `.megalint_cache/` at the root of
the run, so that a second run over unchanged files reads its findings instead of working them out.

An entry is keyed by everything the findings depend on that the run can name before checking:
megalint's version, the rules (the key the packaged rules were loaded by, the bytes of every rule
file of the user's), the configuration and the command line's analysis options, the name the file
is reported under and its text. What the script
sources is known only after checking it: the entry records each file read besides the script
with a hash of its text, and what the check asked the file system (probes.py: a sourced file not
found, a fork's marker folder), and is used only while every file reads the same and every
answer holds.

Entries not used for a month go, and the least recently used past a cap (pruning.py).

Several runs may share the folder: an entry is written to a temporary file and renamed into
place, so that a reader sees a whole entry or none. An entry carries a checksum of its payload,
and one that does not verify, does not load, or names anything but megalint's own types is
ignored (and overwritten by the next run that checks the file).
"""

from __future__ import annotations

import io
import itertools
import os
import pickle
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from megalint import __version__, probes
from megalint.cachedir import SETTLED_NS, answer, read_kept, used
from megalint.checking.outcome import Outcome
from megalint.digests import sha256
from megalint.errors import InputError
from megalint.source import decode
from megalint.stamp import package_stamp

FOLDER = ".megalint_cache"
MAGIC = b"megalint-result-5\n"
# The folder of the sets of Python files that results rest on, each in a file named by its key.
CODE_SETS = "code"
_DIGEST = sha256().digest_size
_UNREAD: Any = object()
# Types an entry may hold besides megalint's own (a builtin container or an enum's base).
_SAFE_BUILTINS = frozenset({"set", "frozenset", "tuple", "list", "dict", "str", "int", "float", "bool"})


def digest(*parts: str | bytes) -> str:
    h = sha256()
    for p in parts:
        data = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def rules_digest(folders: Sequence[str]) -> str:
    """A hash of every rule file under the user's `folders`, in a stable order, read as the
    loader reads them (links followed once, sizes capped)."""
    if not folders:
        return digest()  # no user rules: the rule loader is not imported for nothing
    from megalint.engine.loader import user_rule_files

    parts: list[str | bytes] = []
    for folder in folders:
        for name, data in sorted(user_rule_files(folder, [])):
            parts += [name, data]
    return digest(*parts)


@dataclass
class ResultCache:
    """The cache of one run at `root`, for the entries of one setup (`setup_key`)."""

    root: str
    setup_key: str
    # The Python files results rest on, hashed once a run: the scripts of one fork rest on the
    # same tens of files, which would otherwise be looked at again for every entry.
    _code_digests: dict[str, str | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Whether each set of Python files an entry names (with their hashes) is unchanged, decided
    # once a run: an entry names tens of them, the same for every script of a repository.
    _code_verdicts: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    _code_written: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    _code_paths: dict[str, frozenset[str]] = field(default_factory=dict, init=False, repr=False, compare=False)
    # The hash of each sourced script, read once a run (a common file sourced by many scripts).
    _source_digests: dict[str, str | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    # What the file system answers now to each question the entries' checks asked (probes.py),
    # asked once a run.
    _answers_now: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def folder(self) -> str:
        return os.path.join(self.root, FOLDER)

    def key(self, shown: str, text: str) -> str:
        return digest(__version__, build_stamp(), self.setup_key, shown, text)

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key[2:])

    def get(self, shown: str, text: str) -> Outcome | None:
        """The outcome stored for the file, when its entry verifies and what it read is unchanged."""
        held = self._read(self._path(self.key(shown, text)))
        if not (isinstance(held, tuple) and len(held) == 3):
            return None
        outcome, read, code = held
        if not isinstance(outcome, Outcome) or not isinstance(read, dict) or not isinstance(code, str):
            return None
        if not self._code_unchanged(code) or not self._unchanged(read) or not self._answers_hold(outcome.probes):
            return None
        # The Python files, named in their set, are the outcome's again: as the check made it.
        return replace(outcome, code=self._code_paths[code]) if code else outcome

    def put(self, shown: str, text: str, outcome: Outcome) -> None:
        """Store the outcome; a cache that cannot be written is left alone."""
        read = {path: digest(src.text) for path, src in outcome.sources.items() if path != shown}
        pairs, seen = [], []
        for path in sorted(outcome.code):
            state = _code_state(path)
            if state is None:
                return  # a file it rests on cannot be read now: nothing to check a later run against
            pairs.append((path, state[0]))
            seen.append(state[1:])
        code = self._put_code(tuple(pairs), tuple(seen))
        if code is None:
            return
        # The Python files are named once, in the file of their set; the outcome need not name them.
        payload = pickle.dumps((replace(outcome, code=frozenset()), read, code), protocol=pickle.HIGHEST_PROTOCOL)
        self._write(self._path(self.key(shown, text)), payload)

    def _put_code(self, pairs: tuple[tuple[str, str], ...], seen: tuple[tuple[int, int, int], ...]) -> str | None:
        """The key of a set of Python files and their hashes ("" for none), its file written once a
        run: the scripts of a fork rest on the same tens of files, named once instead of in each
        entry. Beside each hash, the file's size and time as it was hashed, and when (`seen`), so
        that a later run need not read a file that has not been touched since. None when it cannot
        be written."""
        if not pairs:
            return ""
        key = _code_set_key(pairs)
        if key not in self._code_written:
            data = pickle.dumps((pairs, seen), protocol=pickle.HIGHEST_PROTOCOL)
            if not self._write(os.path.join(self.folder, CODE_SETS, key), data):
                return None
            self._code_written.add(key)
        return key

    def _write(self, target: str, payload: bytes) -> bool:
        """Write an entry whole or not at all (renamed into place), checksummed."""
        try:
            self._prepare(os.path.dirname(target))
            fd, tmp = _temporary(os.path.dirname(target))
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + sha256(payload).digest() + payload)
                os.replace(tmp, target)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return False
        return True

    def _read(self, target: str) -> Any:
        """What an entry holds, when it verifies and holds only plain data and megalint's own types;
        else _UNREAD."""
        kept = read_kept(target)
        if kept is None:
            return _UNREAD
        data, mtime_ns = kept
        if not data.startswith(MAGIC):
            return _UNREAD
        body = data[len(MAGIC) :]
        checksum, payload = body[:_DIGEST], body[_DIGEST:]
        if len(checksum) != _DIGEST or sha256(payload).digest() != checksum:
            return _UNREAD
        try:
            held = _Loader(io.BytesIO(payload)).load()
        except Exception:  # noqa: BLE001 - an entry that does not load is no entry
            return _UNREAD
        used(target, mtime_ns)  # in use: not the first to go when the folder is pruned
        return held

    def _unchanged(self, read: Mapping[Any, Any]) -> bool:
        """Whether the scripts an entry's script sources still hash as they did."""
        for path, hashed in read.items():
            if not isinstance(path, str):
                return False
            now = self._source_digests.get(path, _UNREAD)
            if now is _UNREAD:
                try:
                    with open(path, "rb") as fh:
                        now = digest(decode(path, fh.read()))
                except (OSError, InputError):
                    now = None
                self._source_digests[path] = now
            if now is None or now != hashed:
                return False
        return True

    def _answers_hold(self, answers: Any) -> bool:
        """Whether the file system answers as it did each question an entry's check asked."""
        if not isinstance(answers, dict):
            return False
        if not all(isinstance(question, str) and type(found) is int for question, found in answers.items()):
            return False
        return probes.unchanged(answers, self._answer_now)

    def _answer_now(self, question: str) -> int:
        now = self._answers_now.get(question)
        if now is None:
            now = self._answers_now[question] = answer(question)
        return now

    def _code_unchanged(self, key: str) -> bool:
        """Whether the Python files of the set an entry names (its key) still hash as they did."""
        if not key:
            return True
        verdict = self._code_verdicts.get(key)
        if verdict is None:
            verdict = self._code_verdicts[key] = self._check_code_set(key)
        return verdict

    def _check_code_set(self, key: str) -> bool:
        held = self._read(os.path.join(self.folder, CODE_SETS, key))
        if not (isinstance(held, tuple) and len(held) == 2):
            return False
        pairs, seen = held
        if not (isinstance(pairs, tuple) and isinstance(seen, tuple) and pairs and len(pairs) == len(seen)):
            return False
        for pair, then in zip(pairs, seen, strict=True):
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                return False
            if not (isinstance(then, tuple) and len(then) == 3 and all(type(n) is int for n in then)):
                return False
        # The set is what its key names (a file of another set renamed into place is not).
        if _code_set_key(pairs) != key:
            return False
        self._code_paths[key] = frozenset(path for path, _ in pairs)
        for (path, hashed), (size, mtime_ns, hashed_at) in zip(pairs, seen, strict=True):
            if path not in self._code_digests:
                self._code_digests[path] = _code_digest(path, (size, mtime_ns, hashed_at), hashed)
            if self._code_digests[path] != hashed:
                return False
        return True

    def _prepare(self, folder: str) -> None:
        if not os.path.isdir(self.folder):
            os.makedirs(self.folder, exist_ok=True)
            # Git-ignored wherever it is: the cache is no part of the repository.
            with open(os.path.join(self.folder, ".gitignore"), "w", encoding="utf-8") as fh:
                fh.write("# Made by megalint: its cache of results.\n*\n")
        os.makedirs(folder, exist_ok=True)


@cache
def build_stamp() -> str:
    """This megalint's build (stamp.py): results of another build, with the same version number,
    are not these."""
    return digest(*package_stamp())


def _code_set_key(pairs: tuple[tuple[str, str], ...]) -> str:
    """The key of a set of Python files: a hash of their paths and hashes, in order."""
    return digest(*(part for pair in pairs for part in pair))


def _code_state(path: str) -> tuple[str, int, int, int] | None:
    """The hash of a Python file a result rests on, with its size and time and when it was hashed;
    hashed once per version of the file in a run (many scripts rest on the same fork's sources)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    hashed = _file_digest(path, st.st_mtime_ns, st.st_size)
    return None if hashed is None else (hashed[0], st.st_size, st.st_mtime_ns, hashed[1])


def _code_digest(path: str, then: tuple[int, int, int], hashed: str) -> str | None:
    """The hash of a Python file now. `then` (size, time, when hashed) and `hashed`: what an
    earlier run saw; a file of that size and time, not written for a while before it was hashed,
    has that hash still and is not read again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    size, mtime_ns, hashed_at = then
    if st.st_size == size and st.st_mtime_ns == mtime_ns and mtime_ns + SETTLED_NS <= hashed_at:
        return hashed
    now = _file_digest(path, st.st_mtime_ns, st.st_size)
    return None if now is None else now[0]


@cache
def _file_digest(path: str, _mtime_ns: int, _size: int) -> tuple[str, int] | None:
    """The hash of a file's bytes, and the time just before they were read."""
    at = time.time_ns()
    try:
        with open(path, "rb") as fh:
            return digest(fh.read()), at
    except OSError:
        return None


class _Loader(pickle.Unpickler):
    """Loads megalint's own types and plain containers only: an entry is data, never code."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "megalint" or module.startswith("megalint."):
            return super().find_class(module, name)
        if module == "builtins" and name in _SAFE_BUILTINS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a cache entry")


_written = itertools.count()


def _temporary(folder: str) -> tuple[int, str]:
    """A new file in `folder` for an entry being written, named `.tmp-…` (what pruning takes for
    one) and made exclusively, as `tempfile.mkstemp` makes one (whose module and its `random`
    a check would import for this alone)."""
    while True:
        path = os.path.join(folder, f".tmp-{os.getpid()}-{next(_written)}")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue  # left by a process of the same number that was killed while writing
