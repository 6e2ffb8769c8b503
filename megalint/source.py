"""Source text and spans.

A span is 1-based line and column in Unicode code points, end exclusive, plus the matching
character offsets into the decoded text so that fixes can edit it without recomputing lines.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


# Spans, segments and words are never changed once made; they are not `frozen` only because a
# frozen dataclass costs about a microsecond more per object and the evaluator makes many.
@dataclass(slots=True, unsafe_hash=True, order=True)
class Span:
    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    start: int = field(default=0, compare=False)  # character offset, inclusive
    end: int = field(default=0, compare=False)  # character offset, exclusive

    def __str__(self) -> str:
        return f"{self.path}:{self.start_line}:{self.start_col}"

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "start": {"row": self.start_line, "column": self.start_col},
            "end": {"row": self.end_line, "column": self.end_col},
        }


class SourceFile:
    """The decoded text of one file, with offset <-> line/column mapping.

    tree-sitter reports byte offsets; every span megalint shows is in characters, because
    launch scripts carry non-ASCII comments (Chinese in 179 of 1,322 public scripts).
    """

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.data = text.encode("utf-8")
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts
        self._ascii = len(self.data) == len(text)
        self._byte_line_starts: list[int] | None = None
        self._line_ascii: list = []

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
            return self._line_starts[line] + byte_offset - begin
        return self._line_starts[line] + len(data[begin:byte_offset].decode("utf-8", "ignore"))

    def position(self, char_offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, char_offset) - 1
        return line + 1, char_offset - self._line_starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        """A span from character offsets."""
        starts = self._line_starts
        sl = bisect.bisect_right(starts, start) - 1
        el = bisect.bisect_right(starts, end, sl) - 1 if end >= start else bisect.bisect_right(starts, end) - 1
        return Span(self.path, sl + 1, start - starts[sl] + 1, el + 1, end - starts[el] + 1, start, end)

    def span_bytes(self, start_byte: int, end_byte: int) -> Span:
        if self._ascii:
            return self.span(start_byte, end_byte)
        return self.span(self.char_offset(start_byte), self.char_offset(end_byte))

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end]
