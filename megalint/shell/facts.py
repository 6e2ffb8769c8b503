"""What the evaluator learned about a script: the commands it would run and with what."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from megalint.shell.headers import SchedulerHeader
from megalint.shell.values import Unknown, Word
from megalint.source import SourceFile, Span


@dataclass
class CommandRecord:
    """One simple command as it would run on one path through the script."""

    words: tuple[Word, ...]
    assigns: dict[str, Word]  # `VAR=x cmd` prefixes
    env: dict[str, Word]  # exported variables at that point (values may be unknown)
    span: Span
    condition: tuple[str, ...] = ()
    wrappers: tuple[tuple[Word, ...], ...] = ()  # outer commands: `srun … bash -c "<this>"`
    in_loop: bool = False
    headers: tuple[SchedulerHeader, ...] = ()  # the `#SBATCH` lines of an `sbatch <<EOF` script it runs in


class ShellFindingKind(str, Enum):
    """The kinds of problem the shell stage reports; each has a rule in rules/shell that reads
    findings of its kind from the rule context (`shell[].kind`), which holds these values."""

    PARSE_ERROR = "parse-error"
    UNFILLED_PLACEHOLDER = "unfilled-placeholder"
    BACKSLASH_AT_EOF = "backslash-at-eof"
    BACKSLASH_TRAILING_BLANK = "backslash-trailing-blank"
    SHIFT_MISMATCH = "shift-mismatch"
    FLAG_RUN_AS_COMMAND = "flag-run-as-command"
    STRAY_BACKSLASH_IN_STRING = "stray-backslash-in-string"
    ARITHMETIC_ERROR = "arithmetic-error"
    UNSET_VARIABLE = "unset-variable-in-flag"  # found once the launches are bound (rulecontext/unset_inputs.py)
    FILE_TOO_LARGE = "file-too-large"  # over a limit of shell/budget.py: not checked, or not all

    def __str__(self) -> str:
        return self.value


@dataclass
class ShellFinding:
    """A problem found at the shell level, before any Megatron knowledge."""

    kind: ShellFindingKind
    span: Span
    message: str
    data: dict[str, object] = field(default_factory=dict)  # what rules read of it, by name


@dataclass
class VariableFact:
    """The final value of a variable on one path, for `megalint model`."""

    name: str
    value: Word | None
    unknown: Unknown | None
    exported: bool
    array: tuple[Word, ...] | None = None
    # How to split the value into the words `$NAME` unquoted would make (`fields`): only a file
    # without a launch reads them, so most runs never split their variables.
    split: Callable[[], tuple[Word, ...] | None] | None = field(default=None, repr=False, compare=False)
    _fields: tuple[Word, ...] | None = field(default=None, init=False, repr=False, compare=False)
    _split_done: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def fields(self) -> tuple[Word, ...] | None:
        """The words `$NAME` unquoted would make, for a value holding options (`--x 1 --y 2`):
        what a file of arguments without a launch is checked on. None for other values."""
        if not self._split_done:
            self._fields = None if self.split is None else self.split()
            self._split_done = True
        return self._fields


@dataclass
class PathFacts:
    """The script as it runs along one combination of undecided branches."""

    condition: tuple[str, ...]
    commands: list[CommandRecord]
    variables: dict[str, VariableFact]


class UnreadReason(str, Enum):
    """Why a `source`d file was not read."""

    UNKNOWN_PATH = "unknown-path"  # its path is not known statically
    NOT_FOUND = "not-found"
    OUTSIDE_ROOT = "outside-root"  # outside the linted tree, and following it was not asked for
    CYCLE = "cycle"  # it is being sourced already: its variables are read there
    TOO_DEEP = "too-deep"  # sourced files nested past the limit (MAX_SOURCE_DEPTH)
    TOO_LARGE = "too-large"  # larger than a launch script can be (MAX_SOURCE_BYTES)
    UNREADABLE = "unreadable"  # it could not be read, or is not a shell script (binary, not UTF-8)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class UnreadSource:
    """A `source`/`.` whose file the evaluator did not read there."""

    span: Span  # the `source` command
    path: str  # the path as the script gives it (`…` for the parts not known statically)
    reason: UnreadReason
    note: str  # the sentence among ScriptFacts.notes that reports it
    # The file found there but not read as a script (not UTF-8, too large, nested too deep): what
    # it holds still decided the findings, so a result kept for later rests on it.
    file: str | None = None


@dataclass(frozen=True)
class Assumption:
    """Something the model takes as true that the script does not say: `pwd` is the script's
    folder (the job is started from there). Shown by `megalint explain`."""

    text: str
    span: Span  # the expansion or path it was made for


# The folder a job starts in, and the folder of a script, are not in the script's text; these
# are the readings megalint takes of them (a segment's `assumed`, and an Assumption's text).
ASSUME_PWD = "`pwd` is the script's folder (the job is started from there)"
ASSUME_PWD_VAR = "`$PWD` is the script's folder (the job is started from there)"
ASSUME_DIRNAME = '`$(dirname "$0")` is the script\'s folder'
ASSUME_BASH_SOURCE = "`$BASH_SOURCE` is the script's path, folder included (it is started by its path)"
ASSUME_RELATIVE = "a relative path is read from the script's folder (the job is started from there)"


@dataclass(frozen=True)
class SplitElement:
    """An array element holding blanks that an unquoted `${A[@]}` hands to a command: bash cuts
    it into `fields` words (`A=(--tokenizer-type "GPT2 BPETokenizer")`, then `${A[@]}`)."""

    expansion: Span  # the unquoted `${A[@]}` (or `${A[*]}`)
    element: Span  # where the element's text is written
    text: str
    fields: int


@dataclass
class ScriptFacts:
    """What the shell stage found in a script: its paths, scheduler headers, comments and findings."""

    path: str
    sources: dict[str, SourceFile]
    paths: list[PathFacts]
    headers: list[SchedulerHeader]
    findings: list[ShellFinding]
    comments: list[tuple[str, Span]]  # every comment of the main script, for hardware hints
    sourced: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unread_sources: list[UnreadSource] = field(default_factory=list)  # each also reported in notes
    assumptions: list[Assumption] = field(default_factory=list)  # made to follow a `source`
    split_elements: list[SplitElement] = field(default_factory=list)  # array elements cut by an unquoted expansion
