"""Source text and spans.

A span is 1-based line and column in Unicode code points, end exclusive, plus the matching
character offsets into the decoded text so that fixes can edit it without recomputing lines.
"""

from __future__ import annotations

import bisect
from itertools import accumulate

from megalint.errors import InputError

# 1-based start line, start column, end line, end column
_Position = tuple[int, int, int, int]


class Span:
    """Where a piece of text is: a path, 1-based line and column (in code points, end
    exclusive), and the matching character offsets.

    Never changed once made. Spans that a SourceFile makes know only their offsets and the
    file's line table; their lines and columns are worked out on first use (most spans the
    evaluator makes are never shown). Equality, hashing and order are on path, lines and
    columns; two spans of the same file table compare by offsets, which is the same thing.
    """

    __slots__ = ("path", "start", "end", "_pos", "_file", "_hash")

    def __init__(
        self, path: str, start_line: int, start_col: int, end_line: int, end_col: int, start: int = 0, end: int = 0
    ) -> None:
        self.path = path
        self.start = start  # character offset, inclusive
        self.end = end  # character offset, exclusive
        self._pos: _Position | None = (start_line, start_col, end_line, end_col)
        self._file: SourceFile | None = None  # the SourceFile whose line table gives _pos, when not given
        self._hash: int | None = None  # worked out once: paths are compared by hashing many spans

    def _resolve(self) -> _Position:
        # Only spans made by a SourceFile lack a position, and they all carry their file.
        assert self._file is not None
        starts = self._file.line_starts
        start, end = self.start, self.end
        sl = bisect.bisect_right(starts, start) - 1
        el = bisect.bisect_right(starts, end, sl) - 1 if end >= start else bisect.bisect_right(starts, end) - 1
        pos = self._pos = (sl + 1, start - starts[sl] + 1, el + 1, end - starts[el] + 1)
        return pos

    # 1-based line and column of the start and of the (exclusive) end
    @property
    def start_line(self) -> int:
        return (self._pos or self._resolve())[0]

    @property
    def start_col(self) -> int:
        return (self._pos or self._resolve())[1]

    @property
    def end_line(self) -> int:
        return (self._pos or self._resolve())[2]

    @property
    def end_col(self) -> int:
        return (self._pos or self._resolve())[3]

    def _key(self) -> tuple[str, int, int, int, int]:
        return (self.path,) + (self._pos or self._resolve())

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not Span:
            return NotImplemented
        if self._file is not None and self._file is other._file:
            return self.start == other.start and self.end == other.end and self.path == other.path
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(self._key())
        return h

    def __lt__(self, other: object) -> bool:
        return self._key() < other._key() if other.__class__ is Span else NotImplemented

    def __le__(self, other: object) -> bool:
        return self._key() <= other._key() if other.__class__ is Span else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self._key() > other._key() if other.__class__ is Span else NotImplemented

    def __ge__(self, other: object) -> bool:
        return self._key() >= other._key() if other.__class__ is Span else NotImplemented

    def __reduce__(self) -> tuple[type[Span], tuple[str, int, int, int, int, int, int]]:
        # Sent to another process with its lines and columns, not the file's line table.
        return (Span, (self.path, *(self._pos or self._resolve()), self.start, self.end))

    def __repr__(self) -> str:
        sl, sc, el, ec = self._pos or self._resolve()
        return (
            f"Span(path={self.path!r}, start_line={sl}, start_col={sc}, end_line={el}, "
            f"end_col={ec}, start={self.start}, end={self.end})"
        )

    def __str__(self) -> str:
        return f"{self.path}:{self.start_line}:{self.start_col}"


_new_span = object.__new__


# The non-ASCII lines of a file: their starts, their ends, and the extra bytes up to each end
_WideLines = tuple[list[int], list[int], list[int]]


def _non_ascii_lines(data: bytes) -> _WideLines:
    """(starts, ends, extra bytes up to each end) of the lines of UTF-8 data that hold non-ASCII
    characters (the others have one byte per character). Found with C-level calls: a regex
    scan for non-ASCII bytes costs about 10 ns a byte."""
    lines = data.split(b"\n")
    ascii_ = list(map(bytes.isascii, lines))
    starts: list[int] = []
    ends: list[int] = []
    extras: list[int] = []
    extra = pos = 0
    i = prev = 0
    for _ in range(ascii_.count(False)):
        i = ascii_.index(False, i)
        pos += sum(map(len, lines[prev:i])) + (i - prev)  # the start of line i
        line = lines[i]
        extra += len(line) - len(line.decode("utf-8", "ignore"))
        starts.append(pos)
        ends.append(pos + len(line))
        extras.append(extra)
        prev = i
        i += 1
    return starts, ends, extras


class SourceFile:
    """The decoded text of one file, with offset <-> line/column mapping.

    tree-sitter reports byte offsets; every span megalint shows is in characters, because
    launch scripts carry non-ASCII comments (Chinese in 179 of 1,322 public scripts).
    """

    def __init__(self, path: str, text: str, data: bytes | None = None) -> None:
        self.path = path
        self.text = text
        self.data = text.encode("utf-8") if data is None else data  # data: text's UTF-8, when at hand
        self._starts: list[int] | None = None
        self._ascii = len(self.data) == len(text)
        self._wide: _WideLines | None = None  # the lines with non-ASCII characters, for char_offset

    def __reduce__(self) -> tuple[type[SourceFile], tuple[str, str] | tuple[str, str, bytes]]:
        # Sent to another process or kept in the cache of results as its text: the bytes are sent
        # only when they are not the text's UTF-8, and what is worked out on first use is not.
        if self.data == self.text.encode("utf-8"):
            return (SourceFile, (self.path, self.text))
        return (SourceFile, (self.path, self.text, self.data))

    @property
    def line_starts(self) -> list[int]:
        """The character offset of each line's start; found on first use (most files are
        linted without a position being shown)."""
        starts = self._starts
        if starts is None:
            starts = self._starts = list(accumulate(map((1).__add__, map(len, self.text.split("\n")[:-1])), initial=0))
        return starts

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def char_offset(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        data = self.data
        if byte_offset >= len(data):
            return len(self.text)
        wide = self._wide
        if wide is None:
            wide = self._wide = _non_ascii_lines(data)
        starts, ends, extras = wide
        # Bytes past the characters that take more than one: those of the non-ASCII lines that
        # end at or before the offset, and of the part of the line the offset falls in.
        i = bisect.bisect_right(ends, byte_offset)
        before = extras[i - 1] if i else 0
        if i < len(starts) and starts[i] < byte_offset:
            s = starts[i]
            before += (byte_offset - s) - len(data[s:byte_offset].decode("utf-8", "ignore"))
        return byte_offset - before

    def position(self, char_offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, char_offset) - 1
        return line + 1, char_offset - self.line_starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        """A span from character offsets."""
        span = _new_span(Span)
        span.path = self.path
        span.start = start
        span.end = end
        span._pos = None
        span._file = self
        span._hash = None
        return span

    def span_bytes(self, start_byte: int, end_byte: int) -> Span:
        if self._ascii:
            return self.span(start_byte, end_byte)
        return self.span(self.char_offset(start_byte), self.char_offset(end_byte))

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end]


def decode(path: str, data: bytes) -> str:
    """A script's bytes as text (a leading BOM dropped); a binary or non-UTF-8 file is an InputError."""
    if b"\0" in data[:8192]:
        raise InputError(f"{path}: binary file (contains NUL bytes), not a shell script")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the script as UTF-8"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text
