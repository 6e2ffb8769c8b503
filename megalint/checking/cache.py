"""A cache of results: what checking a script found, kept in `.megalint_cache/` at the root of
the run, so that a second run over unchanged files reads its findings instead of working them out.

An entry is keyed by everything the findings depend on that the run can name before checking:
megalint's version, the rules (the key the packaged rules were loaded by, the bytes of every rule
file of the user's), the configuration and the command line's analysis options, the name the file
is reported under and its text. What the script
sources is known only after checking it: the entry records each file read besides the script
with a hash of its text, and is used only while every one of them still reads the same.

Several runs may share the folder: an entry is written to a temporary file and renamed into
place, so that a reader sees a whole entry or none. An entry carries a checksum of its payload,
and one that does not verify, does not load, or names anything but megalint's own types is
ignored (and overwritten by the next run that checks the file).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from megalint import __version__
from megalint.cache_entry import wheel_stamp
from megalint.checking.outcome import Outcome
from megalint.errors import InputError
from megalint.source import decode

FOLDER = ".megalint_cache"
MAGIC = b"megalint-result-4\n"
# The folder of the sets of Python files that results rest on, each in a file named by its key.
CODE_SETS = "code"
_DIGEST = hashlib.sha256().digest_size
_UNREAD: Any = object()
# Types an entry may hold besides megalint's own (a builtin container or an enum's base).
_SAFE_BUILTINS = frozenset({"set", "frozenset", "tuple", "list", "dict", "str", "int", "float", "bool"})


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
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
    # The hash of each sourced script, read once a run (a common file sourced by many scripts).
    _source_digests: dict[str, str | None] = field(default_factory=dict, init=False, repr=False, compare=False)

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
        if not self._code_unchanged(code) or not self._unchanged(read):
            return None
        return outcome

    def put(self, shown: str, text: str, outcome: Outcome) -> None:
        """Store the outcome; a cache that cannot be written is left alone."""
        read = {path: digest(src.text) for path, src in outcome.sources.items() if path != shown}
        pairs = []
        for path in sorted(outcome.code):
            hashed = _code_digest(path)
            if hashed is None:
                return  # a file it rests on cannot be read now: nothing to check a later run against
            pairs.append((path, hashed))
        code = self._put_code(tuple(pairs))
        if code is None:
            return
        # The Python files are named once, in the file of their set; the outcome need not name them.
        payload = pickle.dumps((replace(outcome, code=frozenset()), read, code), protocol=pickle.HIGHEST_PROTOCOL)
        self._write(self._path(self.key(shown, text)), payload)

    def _put_code(self, pairs: tuple[tuple[str, str], ...]) -> str | None:
        """The key of a set of Python files and their hashes ("" for none), its file written once a
        run: the scripts of a fork rest on the same tens of files, named once instead of in each
        entry. None when it cannot be written."""
        if not pairs:
            return ""
        key = digest(*(part for pair in pairs for part in pair))
        if key not in self._code_written:
            if not self._write(
                os.path.join(self.folder, CODE_SETS, key), pickle.dumps(pairs, protocol=pickle.HIGHEST_PROTOCOL)
            ):
                return None
            self._code_written.add(key)
        return key

    def _write(self, target: str, payload: bytes) -> bool:
        """Write an entry whole or not at all (renamed into place), checksummed."""
        try:
            self._prepare(os.path.dirname(target))
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + hashlib.sha256(payload).digest() + payload)
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
        try:
            with open(target, "rb") as fh:
                data = fh.read()
        except OSError:
            return _UNREAD
        if not data.startswith(MAGIC):
            return _UNREAD
        body = data[len(MAGIC) :]
        checksum, payload = body[:_DIGEST], body[_DIGEST:]
        if len(checksum) != _DIGEST or hashlib.sha256(payload).digest() != checksum:
            return _UNREAD
        try:
            return _Loader(io.BytesIO(payload)).load()
        except Exception:  # noqa: BLE001 - an entry that does not load is no entry
            return _UNREAD

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

    def _code_unchanged(self, key: str) -> bool:
        """Whether the Python files of the set an entry names (its key) still hash as they did."""
        if not key:
            return True
        verdict = self._code_verdicts.get(key)
        if verdict is None:
            pairs = self._read(os.path.join(self.folder, CODE_SETS, key))
            verdict = isinstance(pairs, tuple) and bool(pairs)
            for pair in pairs if verdict else ():
                if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                    verdict = False
                    break
                path, hashed = pair
                if path not in self._code_digests:
                    self._code_digests[path] = _code_digest(path)
                if self._code_digests[path] is None or self._code_digests[path] != hashed:
                    verdict = False
                    break
            # The set is what its key names (a file of another set renamed into place is not).
            verdict = verdict and digest(*(part for pair in pairs for part in pair)) == key
            self._code_verdicts[key] = verdict
        return verdict

    def _prepare(self, folder: str) -> None:
        if not os.path.isdir(self.folder):
            os.makedirs(self.folder, exist_ok=True)
            # Git-ignored wherever it is: the cache is no part of the repository.
            with open(os.path.join(self.folder, ".gitignore"), "w", encoding="utf-8") as fh:
                fh.write("# Made by megalint: its cache of results.\n*\n")
        os.makedirs(folder, exist_ok=True)


@cache
def build_stamp() -> str:
    """The size and time of every file of this megalint: a checkout changed between runs, with the
    same version number, is another megalint whose results are not these."""
    stamp = wheel_stamp()
    if stamp is not None:
        # An installed wheel changes only by being installed again, which writes its RECORD anew:
        # one stat instead of one per file (a tenth of a short run).
        return digest(*stamp)
    root = Path(__file__).resolve().parent.parent
    parts: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".yaml")):
                st = os.stat(os.path.join(folder, name))
                parts.append(f"{os.path.relpath(os.path.join(folder, name), root)}:{st.st_size}:{st.st_mtime_ns}")
    return digest(*parts)


def _code_digest(path: str) -> str | None:
    """The hash of a Python file a result rests on, worked out once per version of the file in a
    run (many scripts rest on the same fork's sources)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _file_digest(path, st.st_mtime_ns, st.st_size)


@cache
def _file_digest(path: str, _mtime_ns: int, _size: int) -> str | None:
    try:
        with open(path, "rb") as fh:
            return digest(fh.read())
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
