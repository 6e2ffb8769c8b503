"""The values the evaluator computes: text that remembers where every character came from.

A `Segment` is a run of characters with one provenance. Its `site` is where the characters
appear at the level a user reads them: for `--tensor-model-parallel-size $TP` written inside
`GPT_ARGS="…"`, the segment "8" has its site at `$TP` in that string, and its `origin` chain
points at `TP=8`. Expanding `$GPT_ARGS` later into a command keeps every field's site (the
flag is still written inside the string) and records the expansion in `via`.

A `Word` is one field after expansion and word splitting: one element of a command's argv.
Unknown parts carry an `Unknown` with the reason; a word with any unknown part has no text.
A `Word` with `splat` set stands for any number of unknown words (`"$@"` of the script).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from megalint.source import SourceFile, Span

# Never changed once made (see Span for why these are not `frozen`). Segments and words are
# hashed over and over when paths are compared (interp/algebra.py): each keeps its hash once
# computed, and leaves it out when pickled, since string hashes differ from process to process.


@dataclass(slots=True, unsafe_hash=True)
class Unknown:
    """A value that cannot be known, with why and where."""

    reason: str
    span: Span | None = None

    def __str__(self) -> str:
        return self.reason


@dataclass(slots=True)
class Segment:
    """A run of a word's text from one place (or unknown), with where it came from."""

    text: str | None
    site: Span | None
    origin: tuple[Span, ...] = ()
    unknown: Unknown | None = None
    via: tuple[Span, ...] = ()
    # Set when the text is a default the script gives for an input it does not control
    # (`${NNODES:-1}`, `${1:-8}`): usable for most checks, not for a node count.
    assumed: str | None = None
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        if not h:
            h = self._hash = hash((self.text, self.site, self.origin, self.unknown, self.via, self.assumed)) or 1
        return h

    def __reduce__(self) -> tuple[type[Segment], tuple[object, ...]]:
        return (Segment, (self.text, self.site, self.origin, self.unknown, self.via, self.assumed))

    @staticmethod
    def unknown_at(reason: str, site: Span | None, origin: tuple[Span, ...] = ()) -> Segment:
        return Segment(None, site, origin, Unknown(reason, site))


@dataclass(slots=True)
class Word:
    """One word as the shell would pass it, in segments."""

    segments: tuple[Segment, ...]
    splat: Unknown | None = None
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        h = self._hash
        if not h:
            h = self._hash = hash((self.segments, self.splat)) or 1
        return h

    def __reduce__(self) -> tuple[type[Word], tuple[object, ...]]:
        return (Word, (self.segments, self.splat))

    @property
    def text(self) -> str | None:
        if self.splat is not None:
            return None
        segs = self.segments
        if len(segs) == 1:
            return segs[0].text
        try:
            return "".join([seg.text for seg in segs])  # type: ignore[misc]
        except TypeError:  # an unknown part (its text is None)
            return None

    @property
    def partial_text(self) -> str:
        """The text with unknown parts shown as `…`, for messages."""
        if self.splat is not None:
            return "…"
        return "".join("…" if s.text is None else s.text for s in self.segments)

    @property
    def known_suffix(self) -> str:
        """The text after the last unknown part: `/Megatron-LM/pretrain_gpt.py` of
        `$HOME/Megatron-LM/pretrain_gpt.py`. What a value ends with, never the value itself."""
        if self.splat is not None:
            return ""
        parts: list[str] = []
        for seg in reversed(self.segments):
            if seg.text is None:
                break
            parts.append(seg.text)
        return "".join(reversed(parts))

    @property
    def unknown(self) -> Unknown | None:
        if self.splat is not None:
            return self.splat
        for seg in self.segments:
            if seg.text is None:
                return seg.unknown or Unknown("unknown value")
        return None

    @property
    def span(self) -> Span | None:
        sites = [s.site for s in self.segments if s.site is not None]
        if not sites:
            return self.splat.span if self.splat else None
        return sites_span(sites[0], sites[-1])

    @property
    def assumed(self) -> str | None:
        for seg in self.segments:
            if seg.assumed:
                return seg.assumed
        return None

    @property
    def defaults_assumed(self) -> tuple[str, ...]:
        """The assumed defaults of inputs its text rests on (`${NNODES:-2}`), each once."""
        out: list[str] = []
        for seg in self.segments:
            if is_default_assumption(seg.assumed) and seg.assumed not in out:
                out.append(seg.assumed)  # type: ignore[arg-type]
        return tuple(out)

    @property
    def origins(self) -> tuple[Span, ...]:
        seen: list[Span] = []
        for seg in self.segments:
            for sp in seg.origin:
                if sp not in seen:
                    seen.append(sp)
        return tuple(seen)

    @property
    def via(self) -> tuple[Span, ...]:
        seen: list[Span] = []
        for seg in self.segments:
            for sp in seg.via:
                if sp not in seen:
                    seen.append(sp)
        return tuple(seen)

    def __repr__(self) -> str:
        return f"Word({self.partial_text!r} @ {self.span})"


def sites_span(first: Span, last: Span) -> Span:
    """The span of a word whose first part was written at `first` and last at `last`: from one to
    the other when they are in that order in one file, else the first."""
    if first.path == last.path and first.start <= last.end and last.start >= first.start:
        return Span(first.path, first.start_line, first.start_col, last.end_line, last.end_col, first.start, last.end)
    return first


# An assumed default reads "the default NNODES=2; the environment may set it": a finding that
# rests on one says "with " + this text, and `megalint explain` lists it with its place.
_DEFAULT_PREFIX = "the default "


def default_assumption(name: str, value: str) -> str:
    """What is assumed when `${NAME:-value}` (or `${NAME:=value}`) reads an input the script never sets."""
    if name.isdigit():
        return f"{_DEFAULT_PREFIX}${name}={value}; the caller may give it"
    return f"{_DEFAULT_PREFIX}{name}={value}; the environment may set it"


def is_default_assumption(text: str | None) -> bool:
    """Whether an assumption is a default of an input (not, say, the working directory's)."""
    return text is not None and text.startswith(_DEFAULT_PREFIX)


def default_name(text: str) -> str | None:
    """The input an assumed default is of (`NNODES`, `$1`), or None for another assumption."""
    if not is_default_assumption(text):
        return None
    return text[len(_DEFAULT_PREFIX) :].split("=", 1)[0]


def literal_word(text: str, span: Span | None) -> Word:
    return Word((Segment(text, span),))


def written_at(
    seg: Segment, text: str, sources: Mapping[str, SourceFile], depth: int | None = None
) -> tuple[Span, tuple[Span, ...], tuple[Span, ...]] | None:
    """Where the segment's characters (its text `text`) were written as they are: its site, or
    the nearest place of its origin when the segment was shown at an expansion (`"$CMD --tp 3"`
    read again through `$CMD`), so that a part cut from it can be pointed at exactly; `depth`
    places of the origin at most. With it, where the text came from before that place, and the
    expansions it was shown at on the way (oldest first). None when no place holds the text."""
    chain = (seg.site, *seg.origin)
    if depth is not None:
        chain = chain[: depth + 1]
    for k, sp in enumerate(chain):
        if sp is None or sp.end - sp.start != len(text):
            continue
        src = sources.get(sp.path)
        if src is not None and src.text[sp.start : sp.end] == text:
            return sp, seg.origin[k:], tuple(p for p in reversed(chain[:k]) if p is not None)
    return None
