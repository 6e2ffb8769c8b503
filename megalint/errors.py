"""The problems megalint reports to its user, and the exit statuses of its commands.

Every exception that reports a problem derives from `MegalintError`, through the intermediate that
says whose problem it is: the command line's (`UsageError`, `ConfigError` for a configuration
file), a file megalint was given (`InputError`), a rule's author (`RuleDefinitionError`), the
script's own (`ScriptError`: reported as a finding, never as an exit status) or a data file's
(`DataFormatError`). The command line turns a `UsageError` and a rule file's errors into exit
status 2 and any other exception that reaches it into exit status 3, in one line each.

Exceptions that only carry control flow (a value that cannot be known statically, a run that must
start again) do not derive from it: each says in its docstring that it never leaves the code that
raises it.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit status of every command (`megalint --help` documents them)."""

    CLEAN = 0  # nothing at or above the failure threshold; a command that shows or writes did so
    FINDINGS = 1  # findings at or above the failure threshold; with --diff: some fix to show
    USAGE = 2  # a usage, configuration, rule-file or input error
    INTERNAL = 3  # a bug in megalint, reported in one line
    NO_FILES = 4  # nothing to check: no script under the paths given (none excluded)
    INTERRUPTED = 130  # stopped with Ctrl-C, as a shell reports SIGINT


class MegalintError(Exception):
    """A problem megalint reports to its user."""


class UsageError(MegalintError):
    """Something the user asked for that megalint cannot do (exit status 2)."""


class ConfigError(UsageError):
    """A configuration file megalint cannot use; the message starts with file:line:col."""


class InputError(MegalintError):
    """A file megalint was given that it cannot read as what it should be (a shell script, a
    Megatron-LM tree)."""


class RuleDefinitionError(MegalintError):
    """A rule that cannot be loaded or evaluated: a problem for the rule's author, not the script's."""


class RuleError:
    """One problem of a rule file, at `path:line:column` (1-based). A plain class rather than a
    dataclass: `megalint --version` imports this module, and dataclasses costs it 20 ms."""

    __slots__ = ("path", "line", "column", "message")

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message

    def _key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleError) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"RuleError(path={self.path!r}, line={self.line!r}, column={self.column!r}, message={self.message!r})"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


class RuleFileError(RuleDefinitionError):
    """One or more rule files are invalid; `str()` is one `file:line:col: message` per line."""

    def __init__(self, errors: list[RuleError]):
        self.errors = sorted(errors, key=lambda e: (e.path, e.line, e.column))
        super().__init__("\n".join(str(e) for e in self.errors))


class ScriptError(MegalintError):
    """Something a script asks for that bash or Megatron-LM would reject; megalint reports it as a
    finding or as the reason a value is unknown, never as an exit status."""


class DataFormatError(MegalintError):
    """A data file (a flag catalogue, GPU profiles) that does not follow its format."""


def internal_error_line(exc: BaseException, where: str | None = None) -> str:
    """How a bug in megalint is reported: one line, never a traceback."""
    place = f" while checking {where}" if where else ""
    detail = str(exc).replace("\n", " ").strip()
    return f"internal error{place}: {type(exc).__name__}{': ' + detail if detail else ''}. Please report it."
