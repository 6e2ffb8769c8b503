"""What binding a Megatron-LM argv gives: the value Megatron would see for each dest, the
occurrences of each flag, the problems argparse would have, and the words that could not be read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from megalint.megatron.argv_words import join_spans
from megalint.megatron.catalogue import Catalogue, FlagHistory, FlagSpec
from megalint.shell.values import Unknown, Word
from megalint.source import Span


class ProblemKind(str, Enum):
    UNKNOWN_FLAG = "unknown-flag"  # not an option of this version (suggestions attached)
    OTHER_VERSION = "flag-in-other-version"  # unknown here, defined in another version
    INVALID_TYPE = "invalid-type"  # int("abc")
    INVALID_CHOICE = "invalid-choice"
    INVALID_SIZE = "invalid-size"  # --tensor-model-parallel-size 0: Megatron divides by it
    MISSING_VALUE = "missing-value"  # "expected one argument"
    UNEXPECTED_VALUE = "unexpected-value"  # --bf16=true: "ignored explicit argument"
    REPEATED_FLAG = "repeated-flag"  # the same dest given twice; the last one wins
    POSITIONAL = "positional"  # a word that belongs to no flag
    BOOL_STRING = "bool-string"  # type=bool: "False" is True
    NEGATIVE_NUMBER = "negative-number"  # -1e-5, -10.: an option to Python < 3.14's argparse
    DEPRECATED = "deprecated-flag"
    HELP = "help"  # -h/--help: prints help, exits 0, trains nothing


# argparse exits with status 2 on these (HELP exits 0); the others let the job start.
FATAL = frozenset(
    {
        ProblemKind.UNKNOWN_FLAG,
        ProblemKind.OTHER_VERSION,
        ProblemKind.INVALID_TYPE,
        ProblemKind.INVALID_CHOICE,
        ProblemKind.MISSING_VALUE,
        ProblemKind.UNEXPECTED_VALUE,
        ProblemKind.POSITIONAL,
        ProblemKind.HELP,
    }
)


@dataclass(frozen=True)
class Problem:
    """A problem argparse (or Megatron before training) has with a launch's arguments."""

    kind: ProblemKind
    message: str  # argparse's wording where it has one
    span: Span | None  # the exact text at fault
    words: tuple[Word, ...] = ()
    option: str | None = None  # the option string as written
    dest: str | None = None
    suggestions: tuple[str, ...] = ()
    history: FlagHistory | None = None  # for OTHER_VERSION
    value: str | None = None  # the offending value text
    related: tuple[Span, ...] = ()  # e.g. the earlier occurrences of a repeated flag

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL


@dataclass(frozen=True)
class Occurrence:
    """One appearance of a known flag in argv."""

    option: str  # the option string as written, e.g. "--persistent-save-interval"
    spec: FlagSpec
    flag: Word  # the word holding the option (for "--x=v" the whole word)
    flag_span: Span | None  # just the option string
    values: tuple[Word, ...]  # value words; for "--x=v" a word cut out of the flag word
    value: Any  # what this occurrence stores: typed, or Unknown
    index: int  # position of the flag word in argv
    explicit: bool = False  # value written as "--x=v"

    @property
    def value_span(self) -> Span | None:
        spans = [w.span for w in self.values if w.span is not None]
        if not spans:
            return None
        return join_spans(spans[0], spans[-1])

    @property
    def span(self) -> Span | None:
        """The flag and its values, as one span when they are adjacent in one file."""
        vs = self.value_span
        if self.flag_span is None or vs is None:
            return self.flag_span or vs
        return join_spans(self.flag.span or self.flag_span, vs)


@dataclass(slots=True)
class BoundArg:
    """The value Megatron would see for one dest."""

    dest: str
    spec: FlagSpec  # the action of the last occurrence, else the one giving the default
    value: Any  # typed value, the default when not given, or Unknown
    default: Any  # the default (typed), or Unknown
    given: bool = False
    occurrences: list[Occurrence] | tuple[Occurrence, ...] = ()

    @property
    def unknown(self) -> Unknown | None:
        return self.value if isinstance(self.value, Unknown) else None

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)

    @property
    def last(self) -> Occurrence | None:
        return self.occurrences[-1] if self.occurrences else None

    @property
    def flag(self) -> Word | None:
        return self.last.flag if self.last else None

    @property
    def option(self) -> str | None:
        return self.last.option if self.last else None

    @property
    def flag_span(self) -> Span | None:
        return self.last.flag_span if self.last else None

    @property
    def value_words(self) -> tuple[Word, ...]:
        return self.last.values if self.last else ()

    @property
    def value_span(self) -> Span | None:
        return self.last.value_span if self.last else None

    @property
    def span(self) -> Span | None:
        """Where to point for this argument: its value when written, else the flag."""
        if not self.last:
            return None
        return self.last.value_span or self.last.flag_span


@dataclass(frozen=True)
class Passthrough:
    """Words binding could not read: a splat (any number of unknown words), or an unknown
    word where a flag was expected, with the words after it that may be its values."""

    word: Word
    index: int
    reason: str
    following: tuple[Word, ...] = ()
    splat: bool = False


@dataclass
class BoundArgs:
    """A launch's argv bound to a catalogue: each dest's value, and the problems found."""

    version: str
    catalogue: Catalogue
    args: dict[str, BoundArg]
    problems: list[Problem]
    passthrough: list[Passthrough]
    argv: tuple[Word, ...] = ()
    # Why the flag problems are not known: a part of the parser is not at hand (None: they are).
    problems_unknown: str | None = None
    # The dests whose BoundArg is not the one every binding of the catalogue shares for a dest
    # not given (bind.default_args), in the catalogue's order: a launch gives a few dozen of its
    # hundreds, and what is worked out from a binding looks at these alone. None: not known.
    own: tuple[str, ...] | None = None

    def own_args(self) -> Iterable[tuple[str, BoundArg]]:
        """(dest, BoundArg) of the dests `own` names, in order; of every dest when it is not known."""
        if self.own is None:
            return self.args.items()
        args = self.args
        return [(dest, args[dest]) for dest in self.own]

    def __getitem__(self, dest: str) -> BoundArg:
        return self.args[dest]

    def __contains__(self, dest: object) -> bool:
        return dest in self.args

    def get(self, dest: str) -> BoundArg | None:
        return self.args.get(dest)

    def value(self, dest: str, missing: Any = None) -> Any:
        """The value of a dest (Unknown when unknown); `missing` when this version lacks it."""
        arg = self.args.get(dest)
        return missing if arg is None else arg.value

    def given(self, dest: str) -> bool:
        arg = self.args.get(dest)
        return bool(arg and arg.given)

    def given_args(self) -> list[BoundArg]:
        return [a for a in self.args.values() if a.given]

    def problems_of(self, *kinds: ProblemKind) -> list[Problem]:
        return [p for p in self.problems if p.kind in kinds]

    @property
    def complete(self) -> bool:
        """Whether every word was read: no splat and no unreadable flag word."""
        return not self.passthrough
