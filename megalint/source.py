"""Source text and spans.

A span is 1-based line and column in Unicode code points, end exclusive, plus the matching
character offsets into the decoded text so that fixes can edit it without recomputing lines.
"""

from __future__ import annotations

import bisect
from itertools import accumulate


class Span:
    """Where a piece of text is: a path, 1-based line and column (in code points, end
    exclusive), and the matching character offsets.

    Never changed once made. Spans that a SourceFile makes know only their offsets and the
    file's line table; their lines and columns are worked out on first use (most spans the
    evaluator makes are never shown). Equality, hashing and order are on path, lines and
    columns; two spans of the same file table compare by offsets, which is the same thing.
    """

    __slots__ = ("path", "start", "end", "_pos", "_file")

    def __init__(self, path: str, start_line: int, start_col: int, end_line: int, end_col: int,
                 start: int = 0, end: int = 0):
        self.path = path
        self.start = start  # character offset, inclusive
        self.end = end  # character offset, exclusive
        self._pos = (start_line, start_col, end_line, end_col)
        self._file = None  # the SourceFile whose line table gives _pos, when not given

    def _resolve(self) -> tuple:
        starts = self._file.line_starts
        start, end = self.start, self.end
        sl = bisect.bisect_right(starts, start) - 1
        el = bisect.bisect_right(starts, end, sl) - 1 if end >= start else bisect.bisect_right(starts, end) - 1
        pos = self._pos = (sl + 1, start - starts[sl] + 1, el + 1, end - starts[el] + 1)
        return pos

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

    def _key(self) -> tuple:
        return (self.path,) + (self._pos or self._resolve())

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not Span:
            return NotImplemented
        if self._file is not None and self._file is other._file:
            return self.start == other.start and self.end == other.end and self.path == other.path
        return self._key() == other._key()

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other):
        return self._key() < other._key() if other.__class__ is Span else NotImplemented

    def __le__(self, other):
        return self._key() <= other._key() if other.__class__ is Span else NotImplemented

    def __gt__(self, other):
        return self._key() > other._key() if other.__class__ is Span else NotImplemented

    def __ge__(self, other):
        return self._key() >= other._key() if other.__class__ is Span else NotImplemented

    def __reduce__(self):
        # Sent to another process with its lines and columns, not the file's line table.
        return (Span, (self.path, *(self._pos or self._resolve()), self.start, self.end))

    def __repr__(self) -> str:
        sl, sc, el, ec = self._pos or self._resolve()
        return (f"Span(path={self.path!r}, start_line={sl}, start_col={sc}, end_line={el}, "
                f"end_col={ec}, start={self.start}, end={self.end})")

    def __str__(self) -> str:
        return f"{self.path}:{self.start_line}:{self.start_col}"

    def to_json(self) -> dict:
        sl, sc, el, ec = self._pos or self._resolve()
        return {
            "path": self.path,
            "start": {"row": sl, "column": sc},
            "end": {"row": el, "column": ec},
        }


_new_span = object.__new__


class SourceFile:
    """The decoded text of one file, with offset <-> line/column mapping.

    tree-sitter reports byte offsets; every span megalint shows is in characters, because
    launch scripts carry non-ASCII comments (Chinese in 179 of 1,322 public scripts).
    """

    def __init__(self, path: str, text: str, data: bytes | None = None):
        self.path = path
        self.text = text
        self.data = text.encode("utf-8") if data is None else data  # data: text's UTF-8, when at hand
        self._starts: list[int] | None = None
        self._ascii = len(self.data) == len(text)
        self._byte_line_starts: list[int] | None = None
        self._line_ascii: list = []

    @property
    def line_starts(self) -> list[int]:
        """The character offset of each line's start; found on first use (most files are
        linted without a position being shown)."""
        starts = self._starts
        if starts is None:
            starts = self._starts = list(accumulate(map((1).__add__, map(len, self.text.split("\n")[:-1])),
                                                    initial=0))
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
        starts = self._byte_line_starts
        if starts is None:
            starts = [0]
            find = data.find
            i = find(b"\n")
            while i >= 0:
                starts.append(i + 1)
                i = find(b"\n", i + 1)
            self._byte_line_starts = starts
            # per line: True when it is ASCII (bytes are characters), found on first use
            self._line_ascii = [None] * len(starts)
        # Lines are found by bytes; within an ASCII line a byte is a character, in any other
        # only the part of the line before the offset is decoded.
        line = bisect.bisect_right(starts, byte_offset) - 1
        begin = starts[line]
        ascii_line = self._line_ascii[line]
        if ascii_line is None:
            end = starts[line + 1] if line + 1 < len(starts) else len(data)
            ascii_line = self._line_ascii[line] = data[begin:end].isascii()
        if ascii_line:
            return self.line_starts[line] + byte_offset - begin
        return self.line_starts[line] + len(data[begin:byte_offset].decode("utf-8", "ignore"))

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
        return span

    def span_bytes(self, start_byte: int, end_byte: int) -> Span:
        if self._ascii:
            return self.span(start_byte, end_byte)
        return self.span(self.char_offset(start_byte), self.char_offset(end_byte))

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end]
