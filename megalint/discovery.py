"""Which files a `megalint PATHS` run checks.

- A folder is searched recursively for `*.sh`, `*.bash`, `*.slurm`, `*.sbatch` and for files
  without an extension whose shebang runs sh, bash or dash; `.gitignore` files (of the folder,
  its parents up to the repository root, and below it) and `.git/info/exclude` are respected.
- A file named on the command line is always checked, whatever its name, unless
  `--force-exclude` is given: then the excludes apply to it too, and it is checked only when a
  folder search would take it (pre-commit passes every changed file explicitly, configured
  excludes must still hold, and an extensionless file is a script only by its shebang).
- `-` is standard input.

Excludes are gitignore-style patterns: those of a configuration file are relative to the
folder it is in, those of `--exclude` to the current folder.

A folder reached again through a link (`sub/up -> ..`) is not searched twice, and a link to a
folder outside the one named is not followed; an entry whose type cannot be read (a link to
itself) is a problem for that path and the search goes on. A name is
kept as the file system gives it (undecodable bytes as surrogates, `os.fsdecode`) to read and
write the file, and shown with those bytes and control characters escaped (`shown_name`), so
every output format can carry it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from megalint import lazy_re

if TYPE_CHECKING:
    import pathspec

SHELL_EXTENSIONS = (".sh", ".bash", ".slurm", ".sbatch")
SHELL_INTERPRETERS = {"sh", "bash", "dash"}
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
}
# A .gitignore is read up to this size, and a longer pattern than a path can be is skipped: a
# sparse file of gigabytes must not fill the memory, nor one line of megabytes make a regex of them.
MAX_IGNORE_CHARS = 1024 * 1024
MAX_PATTERN_CHARS = 4096
_SHEBANG = lazy_re.compile(rb"^#![ \t]*(\S+)(.*)$")

STDIN = "-"


@dataclass(frozen=True)
class Job:
    """A file a run checks, with how it was named."""

    path: str  # as shown in findings (`shown_name`)
    real: str | None  # on disk; None for standard input
    explicit: bool  # named on the command line (or standard input)
    root: str | None = None  # the folder named on the command line it was found in (its own folder
    # when named itself): fixes are never written outside it


def shown_name(path: str) -> str:
    """`path` as findings show it: each byte that is not UTF-8 (a lone surrogate of
    `os.fsdecode`) as `\\xNN`, each control character as `\\xNN` too (a newline or an escape
    sequence in a name would forge a line of the report or a terminal command)."""
    if path.isprintable():
        return path
    out = []
    for ch in path:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # the byte `code - 0xDC00`, as os.fsdecode keeps it
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF or (not ch.isprintable() and ch != " "):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


class Excludes:
    """Gitignore-style patterns anchored at a folder."""

    def __init__(self, patterns: list[str], base: str):
        self.base = os.path.abspath(base)
        self.spec: pathspec.GitIgnoreSpec | None = None
        if patterns:  # pathspec is imported only by a run that has excludes
            import pathspec

            self.spec = pathspec.GitIgnoreSpec.from_lines(patterns)

    def match(self, path: str, is_dir: bool = False) -> bool:
        if self.spec is None:
            return False
        ap = os.path.abspath(path)
        if not (ap == self.base or ap.startswith(self.base.rstrip(os.sep) + os.sep)):
            # Outside the anchor: only a pattern without a slash (a bare name) can apply.
            rel = os.path.basename(ap)
        else:
            rel = os.path.relpath(ap, self.base)
        rel = rel.replace(os.sep, "/")
        return self.spec.match_file(rel + ("/" if is_dir else ""))


def is_shell_script(path: str) -> bool:
    """A shell script by extension, or an extensionless file with an sh/bash/dash shebang."""
    if path.endswith(SHELL_EXTENSIONS):
        return True
    if "." in os.path.basename(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.readline(256)
    except OSError:
        return False
    return shebang_is_shell(head)


def shebang_is_shell(line: bytes) -> bool:
    m = _SHEBANG.match(line.rstrip(b"\r\n"))
    if not m:
        return False
    prog = os.path.basename(m.group(1)).decode("utf-8", "replace")
    if prog == "env":
        args = [a for a in m.group(2).split() if not a.startswith(b"-")]
        prog = os.path.basename(args[0]).decode("utf-8", "replace") if args else ""
    return prog in SHELL_INTERPRETERS


class GitIgnore:
    """The .gitignore rules that apply below a folder, loaded once per folder."""

    def __init__(self) -> None:
        self._specs: dict[str, list[Excludes]] = {}

    def _own(self, folder: str) -> list[Excludes]:
        if folder not in self._specs:
            specs = []
            for name in (".gitignore", os.path.join(".git", "info", "exclude")):
                p = os.path.join(folder, name)
                if os.path.isfile(p):
                    try:
                        with open(p, encoding="utf-8", errors="replace") as fh:
                            lines = fh.read(MAX_IGNORE_CHARS).splitlines()
                        specs.append(Excludes([x for x in lines if len(x) <= MAX_PATTERN_CHARS], folder))
                    except OSError:
                        pass
            self._specs[folder] = specs
        return self._specs[folder]

    def parents(self, folder: str) -> list[Excludes]:
        """The rules of `folder`'s ancestors up to the repository root (the folder with .git)."""
        out: list[Excludes] = []
        d = os.path.dirname(os.path.abspath(folder))
        if os.path.isdir(os.path.join(os.path.abspath(folder), ".git")):
            return out
        while True:
            out.extend(self._own(d))
            parent = os.path.dirname(d)
            if os.path.isdir(os.path.join(d, ".git")) or parent == d:
                return out
            d = parent

    def ignored(self, specs: list[Excludes], path: str, is_dir: bool) -> bool:
        return any(s.match(path, is_dir) for s in specs)


def walk(
    folder: str,
    excluded: Callable[[str, bool], bool],
    gitignore: GitIgnore | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> Iterator[str]:
    """Shell scripts below `folder`, sorted, skipping what is excluded or git-ignored; `on_problem`
    is told of each entry whose type cannot be read. Iterative, and each folder (by device and
    inode) is searched once: links that lead back up cannot make it loop or recurse."""
    gitignore = gitignore or GitIgnore()
    tell = on_problem or (lambda message: None)
    seen: set[tuple[int, int]] = set()
    top = os.path.realpath(folder).rstrip(os.sep) + os.sep

    def entries(d: str, specs: list[Excludes]) -> Iterator[tuple[os.DirEntry[str], list[Excludes]]] | None:
        try:
            st = os.stat(d)
        except OSError as exc:
            tell(f"{shown_name(d)}: cannot read: {exc.strerror or exc}")
            return None
        if (st.st_dev, st.st_ino) in seen:
            return None
        seen.add((st.st_dev, st.st_ino))
        specs = specs + gitignore._own(os.path.abspath(d))
        try:
            listed = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            tell(f"{shown_name(d)}: cannot read: {exc.strerror or exc}")
            return None
        return ((e, specs) for e in listed)

    first = entries(folder, gitignore.parents(folder))
    stack = [first] if first is not None else []
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        e, specs = item
        try:
            is_dir = e.is_dir()
            is_file = not is_dir and e.is_file()
        except OSError as exc:  # a link to itself, a name too long
            tell(f"{shown_name(e.path)}: cannot read: {exc.strerror or exc}")
            continue
        if is_dir and e.name in SKIP_DIRS:
            continue
        if gitignore.ignored(specs, e.path, is_dir) or excluded(e.path, is_dir):
            continue
        if is_dir and e.is_symlink() and not (os.path.realpath(e.path) + os.sep).startswith(top):
            continue  # a link out of the folder (`x -> /`) would search the whole disk
        if is_dir:
            below = entries(e.path, specs)
            if below is not None:
                stack.append(below)
        elif is_file and is_shell_script(e.path):
            yield e.path


def discover(
    paths: list[str],
    excluded: Callable[[str, bool], bool],
    on_problem: Callable[[str], None],
    force_exclude: bool = False,
) -> Iterator[Job]:
    """The jobs for the command line's paths, in order.

    `excluded(path, is_dir)` says whether a path is excluded (by its configuration and
    --exclude); `on_problem` is told of each path that does not exist or cannot be searched,
    in one line that names it.
    """
    gitignore = GitIgnore()
    seen: set[str] = set()
    for p in paths:
        if p == STDIN:
            yield Job(STDIN, None, True)
            continue
        if os.path.isdir(p):
            if force_exclude and excluded(p, True):
                continue
            for f in walk(p, excluded, gitignore, on_problem):
                key = os.path.abspath(f)
                if key not in seen:
                    seen.add(key)
                    yield Job(shown_name(os.path.normpath(f)), f, False, p)
        elif os.path.lexists(p):
            if force_exclude and (excluded(p, False) or not is_shell_script(p)):
                continue
            key = os.path.abspath(p)
            if key not in seen:
                seen.add(key)
                yield Job(shown_name(os.path.normpath(p)), p, True, os.path.dirname(p) or os.curdir)
        else:
            on_problem(f"{shown_name(p)}: no such file or folder")
