"""What the interpreter holds while it reads a script: variables, one path's `State`, the
frame being read, and the limits that keep any script's evaluation small."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import tree_sitter

from megalint.shell.equality import Taken
from megalint.shell.facts import CommandRecord
from megalint.shell.parse import ParsedScript
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import Span

Node = tree_sitter.Node
Scalar = tuple[Segment, ...]
Positional = tuple[Scalar, ...] | None  # None: the script's own arguments, not known
Function = tuple[Node, ParsedScript]  # a function's body, and the script it is written in

MAX_STATES = 16
MAX_STEPS = 100_000  # statements evaluated, counted once per path they run on
MAX_LOOP_UNROLL = 64
MAX_CALL_DEPTH = 32
MAX_SOURCE_DEPTH = 16
# Statements nested deeper than this (if in if in function in eval …) are not read: real
# scripts nest a handful of levels, and each level costs Python stack frames.
MAX_NEST = 40
MAX_EXPANSION_DEPTH = 24  # `${A:-${B:-${C:-…}}}`
MAX_CONDITION_DEPTH = 64  # `a && b && c …`, `[[ a && b && … ]]`
# Values past these sizes become Unknown("too long"): `X=$X$X` in a loop must not fill memory.
MAX_VALUE_CHARS = 65_536
MAX_VALUE_SEGMENTS = 2_048
MAX_FIELDS = 10_000  # words one expansion may produce
MAX_ARRAY = 10_000  # elements of one array
MAX_SOURCE_BYTES = 1 << 20
MAX_PATTERN_SUBJECT = 4_096  # glob `#`/`%` operators are quadratic in the value's length
MAX_PATTERN_REPLACE = 512  # glob `/`/`//` are cubic
MEMO_ENTRIES = 8  # remembered results per word; paths that share inputs share the result

# A variable that stands for "a file sourced here was not read": while it is set, a variable
# the script reads and never sets may come from that file.
UNSOURCED = "__megalint_unsourced__"
# Unknown parts of a re-read command string become variables of this prefix (reparse.py).
UNKNOWN_PREFIX = "__megalint_unknown_"
# What `Evaluator.remembered` gives when nothing is remembered (None may be a result).
NOT_REMEMBERED = object()


@dataclass(slots=True, unsafe_hash=True)
class Var:
    """A variable's value: a scalar, an array or unknown. Never changed in place, so paths
    may share it."""

    scalar: Scalar | None = None  # a scalar's segments
    array: dict[str, Scalar] | None = None  # key -> Scalar, for arrays
    unknown: Unknown | None = None
    exported: bool = False
    site: Span | None = None  # the last assignment
    _mark: int = field(default=0, init=False, repr=False, compare=False, hash=False)

    def mark(self) -> int:
        """A hash of the value (arrays included), kept once computed: paths are compared by
        the marks of their variables (algebra.py), and most values are shared by many paths."""
        m = self._mark
        if not m:
            array = None if self.array is None else frozenset(self.array.items())
            m = self._mark = hash((self.scalar, array, self.unknown, self.exported, self.site)) or 1
        return m


@dataclass(slots=True)
class State:
    """The script as it runs along one combination of undecided branches."""

    vars: dict[str, Var]
    positional: Positional
    cond: tuple[str, ...] = ()
    funcs: dict[str, Function] = field(default_factory=dict)
    commands: list[CommandRecord] = field(default_factory=list)
    stopped: bool = False  # `exit`, `return` or `break` ran: later statements do not
    in_loop: bool = False
    # Undecided tests this path took one way: (test text, what it read) -> (outcome, what it read).
    # The same test on the same values later goes the same way on this path.
    taken: Taken = field(default_factory=dict)
    # What stopped the path, for the construct that resumes it: `return` ends a function or a
    # sourced file, `break` a loop. A fork starts with neither.
    returning: bool = False
    breaking: bool = False

    def fork(self, cond: str | None = None) -> State:
        # Var objects are never changed in place, so a shallow copy is a real fork.
        return State(
            dict(self.vars),
            self.positional,  # a tuple: shared, never changed in place
            self.cond + ((cond,) if cond else ()),
            dict(self.funcs),
            list(self.commands),
            self.stopped,
            self.in_loop,
            dict(self.taken) if self.taken else {},
        )


@dataclass(slots=True)
class Frame:
    """Where the interpreter reads: the script (a file, a sourced file, an `eval` or `bash -c`
    string), the commands that wrap it (`srun … bash -c "<this>"`), and how deep it is."""

    ps: ParsedScript
    wrappers: tuple[tuple[Word, ...], ...] = ()
    depth: int = 0


def scalar_text(segs: Sequence[Segment] | None) -> str | None:
    """The text of a value, or None when any part of it is unknown."""
    if segs is None:
        return None
    parts = []
    for s in segs:
        if s.text is None:
            return None
        parts.append(s.text)
    return "".join(parts)


def origins_of(segs: Sequence[Segment]) -> tuple[Span, ...]:
    """Where every part of a value was written, and where it came from before that."""
    out: list[Span] = []
    for s in segs:
        if s.site is not None:
            out.append(s.site)
        out.extend(s.origin)
    return tuple(out)


def array_values(arr: dict[str, Scalar], only_zero: bool = False) -> list[Scalar]:
    """An array's elements in index order (`${A[@]}`), or only element 0 (`$A`)."""
    if only_zero:
        return [arr["0"]] if "0" in arr else []
    try:
        keys = sorted(arr, key=lambda k: int(k))
    except ValueError:
        keys = list(arr)
    return [arr[k] for k in keys]


def next_index(arr: dict[str, Scalar]) -> int:
    ints = [int(k) for k in arr if k.lstrip("-").isdigit()]
    return max(ints) + 1 if ints else 0


def too_long(span: Span | None) -> Unknown:
    return Unknown(
        f"the value is too long to follow (over {MAX_VALUE_CHARS} characters or {MAX_VALUE_SEGMENTS} pieces)", span
    )


def oversized(segs: Sequence[Segment]) -> bool:
    if len(segs) > MAX_VALUE_SEGMENTS:
        return True
    total = 0
    for seg in segs:
        if seg.text is not None:
            total += len(seg.text)
    return total > MAX_VALUE_CHARS


def assign_scalar(st: State, name: str, segs: Sequence[Segment], span: Span | None) -> None:
    """Set a scalar, keeping whether the variable is exported."""
    old = st.vars.get(name)
    st.vars[name] = Var(scalar=tuple(segs), exported=bool(old and old.exported), site=span)


def resite(segs: Sequence[Segment], span: Span) -> Scalar:
    """A value shown where it is written (`X=$Y`: at `$Y`), each part remembering where it came from."""
    out = []
    for s in segs:
        origin = ((s.site,) if s.site is not None and s.site != span else ()) + s.origin
        out.append(Segment(s.text, span, origin, s.unknown, s.via, s.assumed))
    return tuple(out)
