"""What expanding a word yields before it is cut into fields.

A word such as `--data-path=${DIR:-/data}/$NAME` expands to a run of pieces: text with where it
came from (a `SegmentPiece`, unquoted text open to word splitting), a field boundary bash makes
between the elements of `"$@"` (`FieldBreak`), a whole unknown run of words (`Splat`: the
script's own arguments), or the mark of a quoted empty string that still makes a word
(`QuotedEmpty`). splitting.py turns pieces into `Word`s.
"""

from __future__ import annotations

from dataclasses import dataclass

from megalint.shell.values import Segment, Unknown
from megalint.source import Span


@dataclass(slots=True, unsafe_hash=True)
class Expansion:
    """One expansion (`$X`, `${X:-d}`, `$(…)`) that pieces came from. When it gives exactly one
    field, the field is shown where the expansion is written; when it gives several (`$ARGS`),
    each stays where its text was written.

    Equal by value (literal pieces are cached under it); the pieces of one expansion share one
    object, and splitting counts them by identity."""

    span: Span
    array: bool  # `"${A[@]}"` and `"$@"`: each element its own word, never shown at the expansion


@dataclass(slots=True)
class SegmentPiece:
    """A segment of an expansion, with whether word splitting applies to it."""

    segment: Segment
    split: bool  # unquoted: word splitting applies to its text
    expansion: Expansion | None  # the expansion it came from; None for text written in the word


@dataclass(slots=True)
class FieldBreak:
    """A boundary between fields that no blank makes: between the elements of `"$@"`."""


@dataclass(slots=True)
class Splat:
    """Any number of unknown words (`"$@"` of the script, an unknown array)."""

    unknown: Unknown


@dataclass(slots=True)
class QuotedEmpty:
    """`""` or `''`: no text, but a word all the same."""


FIELD_BREAK = FieldBreak()
QUOTED_EMPTY = QuotedEmpty()

Piece = SegmentPiece | FieldBreak | Splat | QuotedEmpty
