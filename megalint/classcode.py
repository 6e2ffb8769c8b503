"""The methods `dataclasses` writes for megalint's classes, compiled once and kept between runs.

`@dataclass` writes `__init__`, `__repr__`, `__eq__`… of each class as Python source and compiles
it when the class is made: for megalint's hundred or so classes, a third of the start-up of a
command that checks one small script. Python keeps no compiled form of that source (it is not a
module with a `.pyc`), so the command line keeps one: the code of each source text, by a hash
of the text, in a file of megalint's cache folder (cachedir.py) named for the interpreter's bytecode. The
code is what `dataclasses` would compile from the same text; a file that is missing, unreadable
or from another interpreter is ignored, and a run that compiled anything new writes the file again.
Each code is kept as its own marshalled bytes and made into code when a class first asks for it:
a run uses a tenth of the file (a run from the cache of results a few tens of its hundreds of
methods), and unmarshalling all of it took longer than compiling what was used.

Only the command line installs this (enabled by cli/__init__.py `run`, installed once a command's
options are read), for its own process and the worker processes it forks; megalint used as a
library leaves `dataclasses` alone.
"""

from __future__ import annotations

import builtins
import os
import sys
from types import CodeType

from megalint.cachedir import cache_folder, write_whole

TYPE_CHECKING = False  # not from `typing`: the command line imports this module first
if TYPE_CHECKING:
    from typing import Any

# The hash and marshal are imported by `install`: `megalint --version` imports this module and
# needs neither.

_MAX_ENTRIES = 4096  # far more than megalint's classes need: a file past it starts again

_codes: dict[bytes, CodeType | bytes] = {}  # a code, or its marshalled bytes until first used
_used: set[bytes] = set()
_added = False
_enabled = False
_installed = False
_blake2b: Any = None


def cache_file() -> str:
    """Where the compiled methods are kept for this interpreter's bytecode and this build of
    megalint: another build's classes are other source texts, and in one file a run would read
    the methods of every build it ever ran (1,322 after some upgrades, 1.1 MB, 5.5 ms to read,
    of which a run uses 350 to 520)."""
    return os.path.join(cache_folder(), f"{_prefix()}{_build()}.marshal")


def _prefix() -> str:
    """What the names of this interpreter's files start with, whatever the build."""
    from importlib.util import MAGIC_NUMBER

    tag = sys.implementation.cache_tag or "unknown"
    return f"dataclass-codes-{tag}-{MAGIC_NUMBER.hex()}-"


def _build() -> str:
    """This build of megalint, named by the installed wheel's stamp (stamp.py), in a checkout by
    the version (its classes change under the user's hands: its file starts again past
    _MAX_ENTRIES)."""
    from megalint import __version__
    from megalint.digests import blake2b
    from megalint.stamp import wheel_stamp

    named = "\0".join(wheel_stamp() or ("checkout", __version__))
    return blake2b(named.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def enable() -> None:
    """This process is the command line's: `install` takes effect."""
    global _enabled
    _enabled = True


def install() -> None:
    """Compile the source `dataclasses` writes through the kept codes, in the command line's
    process only (no effect with MEGALINT_NO_CACHE set, or where `dataclasses` does not compile
    through `exec`)."""
    global _installed
    if not _enabled or _installed or os.environ.get("MEGALINT_NO_CACHE"):
        return
    import dataclasses

    from megalint.digests import blake2b

    global _blake2b
    _blake2b = blake2b

    if getattr(dataclasses, "exec", builtins.exec) is not builtins.exec:
        return  # somebody else's: leave it be
    _codes.update(_load(cache_file()))
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    _installed = True


def save() -> None:
    """Write the kept codes when this run compiled any; a folder that cannot be written is left alone."""
    if not _added:
        return
    path = cache_file()
    import marshal

    kept = _codes if len(_codes) <= _MAX_ENTRIES else {k: v for k, v in _codes.items() if k in _used}
    try:
        data = marshal.dumps({k: v if isinstance(v, bytes) else marshal.dumps(v) for k, v in kept.items()})
    except ValueError:
        data = None
    if data is not None:
        write_whole(path, data)
    _forget_old_builds(path)


_OLD_NS = 7 * 86_400 * 10**9


def _forget_old_builds(path: str) -> None:
    """Remove the files of other builds not written for a week: a build upgraded away from is
    not run again, and one still in use (another environment sharing the folder) writes its file
    again when it next runs."""
    import time

    # The prefix without its last `-`: a file of the earlier shape, one for every build, too.
    folder, prefix, now = os.path.dirname(path), _prefix()[:-1], time.time_ns()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        other = os.path.join(folder, name)
        if name.startswith(prefix) and name.endswith(".marshal") and other != path:
            try:
                if now - os.stat(other).st_mtime_ns > _OLD_NS:
                    os.unlink(other)
            except OSError:
                pass


def _load(path: str) -> dict[bytes, CodeType | bytes]:
    import marshal

    try:
        with open(path, "rb") as fh:
            loaded = marshal.load(fh)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, bytes) and isinstance(v, bytes)}


def _code(key: bytes) -> CodeType | None:
    """The kept code of a source text's hash, made from its bytes the first time it is asked for."""
    held = _codes.get(key)
    if held is None or isinstance(held, CodeType):
        return held
    import marshal

    try:
        code = marshal.loads(held)
    except (EOFError, ValueError, TypeError):
        code = None
    if not isinstance(code, CodeType):
        del _codes[key]
        return None
    _codes[key] = code
    return code


def _exec(source: Any, globals_: dict[str, Any] | None = None, locals_: Any = None) -> None:
    global _added
    if isinstance(source, str):
        key = _blake2b(source.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        code = _code(key)
        if code is None:
            # As `exec` compiles a string: no `__future__` flags of this module.
            code = _codes[key] = compile(source, "<string>", "exec", dont_inherit=True)
            _added = True
        _used.add(key)
        source = code
    builtins.exec(source, globals_, locals_)
