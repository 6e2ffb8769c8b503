"""What every stage reports and every renderer prints."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TypedDict

from megalint.source import Span


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class LocationJson(TypedDict):
    row: int
    column: int


class EditJson(TypedDict):
    content: str
    location: LocationJson
    end_location: LocationJson


class FixJson(TypedDict):
    message: str
    applicability: str
    edits: list[EditJson]


class Applicability(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True)
class Edit:
    """Replace the characters [span.start, span.end) of span.path with `content`."""

    span: Span
    content: str

    def to_json(self) -> EditJson:
        return {
            "content": self.content,
            "location": {"row": self.span.start_line, "column": self.span.start_col},
            "end_location": {"row": self.span.end_line, "column": self.span.end_col},
        }


@dataclass(frozen=True)
class Fix:
    """The edits that fix a finding, with how safe they are to apply."""

    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    def to_json(self) -> FixJson:
        return {
            "message": self.message,
            "applicability": self.applicability.value,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Label:
    """A secondary place a finding points at, with what it says there."""

    span: Span
    text: str


@dataclass
class Diagnostic:
    """One finding: a rule's verdict at a place of a script, with why and how to fix it."""

    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    labels: tuple[Label, ...] = ()
    help: str | None = None
    fix: Fix | None = None
    url: str | None = None
    # Shown when the finding holds only on some paths through undecided branches.
    condition: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
    # The assumptions it rests on (a default of an input, what a loaded module sets): reported
    # one severity lower, and said in the message.
    assumed: tuple[str, ...] = ()
    # The command the finding is about (a launch), which a suppression above that command covers
    # wherever the finding points (`#SBATCH --nodes`, a variable set earlier).
    command: Span | None = None

    @property
    def path(self) -> str:
        return self.span.path

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.path, self.span.start_line, self.span.start_col, self.code)

    # A plain dict rather than a TypedDict: the JSON renderer adds its own keys to it.
    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "filename": self.span.path,
            "location": {"row": self.span.start_line, "column": self.span.start_col},
            "end_location": {"row": self.span.end_line, "column": self.span.end_col},
            "labels": [
                {
                    "message": lab.text,
                    "filename": lab.span.path,
                    "location": {"row": lab.span.start_line, "column": lab.span.start_col},
                    "end_location": {"row": lab.span.end_line, "column": lab.span.end_col},
                }
                for lab in self.labels
            ],
            "help": self.help,
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.url,
        }
