"""A Locator over a script's text for the engine's tests.

It finds places by reading whitespace-separated words, which is enough for the one-command
scripts the tests write; the real Locator sits on the evaluated script.
"""

from __future__ import annotations

import re
from typing import Any

from megalint.diagnostics import Edit, Fix
from megalint.source import SourceFile, Span

_WORD = re.compile(r"\S+")
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")


class TextLocator:
    def __init__(self, text: str, path: str = "t.sh"):
        self.src = SourceFile(path, text)
        self.words: list[tuple[str, int, int]] = []  # (text, start, end) of every word
        self.assignments: dict[str, list[tuple[int, int, int, int]]] = {}  # name -> (stmt, value)
        self.exports: list[tuple[int, int]] = []
        self.calls: list[tuple[str, tuple]] = []
        offset = 0
        for line in text.split("\n"):
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            if not stripped.startswith("#"):
                m = _ASSIGN.match(stripped)
                if m:
                    start = offset + indent
                    self.assignments.setdefault(m.group(1), []).append(
                        (start, start + m.end(), start + m.start(2), start + m.end(2))
                    )
                    if stripped.startswith("export"):
                        self.exports.append((start, offset + len(line)))
                else:
                    for w in _WORD.finditer(line):
                        if w.group() != "\\":
                            self.words.append((w.group(), offset + w.start(), offset + w.end()))
            offset += len(line) + 1
        entries = [i for i, w in enumerate(self.words) if w[0].endswith(".py")]
        self.entry_index = entries[0] if entries else None

    def span(self, start: int, end: int) -> Span:
        return self.src.span(start, end)

    # -- places ---------------------------------------------------------------------------

    def _argv(self) -> list[tuple[str, int, int]]:
        return [] if self.entry_index is None else self.words[self.entry_index + 1 :]

    def _occurrences(self, dest: str) -> list[int]:
        option = "--" + dest.replace("_", "-")
        argv = self._argv()
        return [i for i, w in enumerate(argv) if w[0] == option]

    def launch(self) -> Span:
        first = self.words[0]
        last = self.words[-1]
        return self.span(first[1], last[2])

    def entry(self) -> Span | None:
        if self.entry_index is None:
            return None
        _, s, e = self.words[self.entry_index]
        return self.span(s, e)

    def flag(self, dest: str) -> Span | None:
        occ = self._occurrences(dest)
        if not occ:
            return None
        _, s, e = self._argv()[occ[-1]]
        return self.span(s, e)

    def _value_index(self, dest: str) -> int | None:
        occ = self._occurrences(dest)
        argv = self._argv()
        if not occ or occ[-1] + 1 >= len(argv) or argv[occ[-1] + 1][0].startswith("--"):
            return None
        return occ[-1] + 1

    def value(self, dest: str) -> Span | None:
        i = self._value_index(dest)
        if i is None:
            return self.flag(dest)
        _, s, e = self._argv()[i]
        return self.span(s, e)

    def _variable(self, dest: str) -> str | None:
        i = self._value_index(dest)
        if i is None:
            return None
        m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", self._argv()[i][0])
        return m.group(1) if m else None

    def origins(self, dest: str) -> list[Span]:
        name = self._variable(dest)
        if name is None:
            return []
        return [self.span(a[0], a[1]) for a in reversed(self.assignments.get(name, []))]

    def launcher(self, key: str) -> Span | None:
        option = key if key.startswith("-") else "--" + key.replace("_", "-")
        end = self.entry_index if self.entry_index is not None else len(self.words)
        for text, s, e in self.words[:end]:
            if text == option:
                return self.span(s, e)
        return None

    def env(self, name: str) -> Span | None:
        found = self.assignments.get(name)
        return self.span(found[-1][0], found[-1][1]) if found else None

    def gpu(self) -> Span | None:
        m = re.search(r"^#SBATCH\s+--(?:gpus|gres|constraint)\S*", self.src.text, re.M)
        return self.span(m.start(), m.end()) if m else None

    def last_export(self) -> Span | None:
        return self.span(*self.exports[-1]) if self.exports else None

    def item(self, obj: dict[str, Any]) -> Span | None:
        index = obj.get("index")
        argv = self._argv()
        if not isinstance(index, int) or not 0 <= index < len(argv):
            return None
        _, s, e = argv[index]
        return self.span(s, e)

    def expansion(self, obj: dict[str, Any], nth: int) -> Span | None:
        return None

    # -- edits ----------------------------------------------------------------------------

    def _option_range(self, dest: str, k: int) -> tuple[int, int]:
        argv = self._argv()
        i = self._occurrences(dest)[k]
        end = argv[i][2]
        if i + 1 < len(argv) and not argv[i + 1][0].startswith("--"):
            end = argv[i + 1][2]
        return argv[i][1], end

    def replace_flag(self, dest: str, text: str) -> list[Edit] | None:
        self.calls.append(("replace_flag", (dest, text)))
        occ = self._occurrences(dest)
        if not occ:
            return None
        edits = [Edit(self.span(*self._removal(*self._option_range(dest, k))), "") for k in range(len(occ) - 1)]
        edits.append(Edit(self.span(*self._option_range(dest, len(occ) - 1)), text))
        return edits

    def _removal(self, start: int, end: int) -> tuple[int, int]:
        text = self.src.text
        while start > 0 and text[start - 1] == " ":
            start -= 1
        return start, end

    def remove_flag(self, dest: str) -> list[Edit] | None:
        self.calls.append(("remove_flag", (dest,)))
        occ = self._occurrences(dest)
        if not occ:
            return None
        return [Edit(self.span(*self._removal(*self._option_range(dest, k))), "") for k in range(len(occ))]

    def replace_value(self, dest: str, text: str) -> list[Edit] | None:
        self.calls.append(("replace_value", (dest, text)))
        i = self._value_index(dest)
        if i is None:
            return None
        name = self._variable(dest)
        if name is not None:
            found = self.assignments.get(name, [])
            uses = sum(1 for w in self.words if re.search(rf"\$\{{?{name}\b", w[0]))
            if len(found) != 1 or uses != 1:
                return None
            return [Edit(self.span(found[0][2], found[0][3]), text)]
        _, s, e = self._argv()[i]
        return [Edit(self.span(s, e), text)]

    def add_flag(self, text: str) -> list[Edit] | None:
        self.calls.append(("add_flag", (text,)))
        last = self.words[-1]
        return [Edit(self.span(last[2], last[2]), " " + text)]

    def insert_export(self, name: str, value: str) -> list[Edit] | None:
        self.calls.append(("insert_export", (name, value)))
        if self.exports:
            end = self.exports[-1][1]
            return [Edit(self.span(end, end), f"\nexport {name}={value}")]
        start = self.words[0][1]
        return [Edit(self.span(start, start), f"export {name}={value}\n")]

    def replace_item(self, obj: dict[str, Any], text: str) -> list[Edit] | None:
        self.calls.append(("replace_item", (obj.get("index"), text)))
        span = self.item(obj)
        return None if span is None else [Edit(span, text)]


def apply_fix(text: str, fix: Fix) -> str:
    for edit in sorted(fix.edits, key=lambda e: e.span.start, reverse=True):
        text = text[: edit.span.start] + edit.content + text[edit.span.end :]
    return text
