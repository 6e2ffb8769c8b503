"""The engine's Locator for one launch: every place and edit a rule asks for, from the launch
model, its binding and the script's sources."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from megalint.diagnostics import Edit
from megalint.hardware.profiles import Detection
from megalint.launch.model import Launch
from megalint.megatron.bound import BoundArgs, Occurrence
from megalint.rulecontext.expansions import cause
from megalint.shell.facts import ScriptFacts, ShellFinding
from megalint.shell.values import Word
from megalint.source import SourceFile, Span


def _encloses(outer: Span, inner: Span) -> bool:
    return (
        outer.path == inner.path
        and outer.start <= inner.start
        and inner.end <= outer.end
        and (outer.start, outer.end) != (inner.start, inner.end)
    )


def _exact(word: Word, sources: dict[str, SourceFile]) -> bool:
    """Whether the word is written literally where its span says (so it can be edited there)."""
    sp = word.span
    if sp is None or word.text is None or sp.path not in sources:
        return False
    return sources[sp.path].text[sp.start : sp.end] == word.text


@dataclass
class LaunchLocator:
    """The engine's Locator for one launch: every place and edit, from the launch model."""

    launch_: Launch
    bound: BoundArgs
    facts: ScriptFacts
    detection: Detection | None
    findings: list[ShellFinding]

    # -- places
    def launch(self) -> Span:
        return self.launch_.span

    def entry(self) -> Span | None:
        return self.launch_.entry.span if self.launch_.entry is not None else None

    def flag(self, dest: str) -> Span | None:
        arg = self.bound.get(dest)
        return arg.flag_span if arg is not None else None

    def value(self, dest: str) -> Span | None:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None:
            return None
        return arg.value_span or arg.flag_span

    def origins(self, dest: str) -> list[Span]:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None:
            return []
        out: list[Span] = []
        for w in arg.value_words:
            for s in w.origins:
                if s not in out:
                    out.append(s)
        # `TP=${TP:-4}` gives the expansion and its default literal inside it: one place.
        return [s for s in out if not any(o is not s and _encloses(o, s) for o in out)]

    def launcher(self, key: str) -> Span | None:
        q = {
            "nproc_per_node": self.launch_.nproc_per_node,
            "nnodes": self.launch_.nnodes,
            "world_size": self.launch_.world_size,
        }.get(key)
        if q is not None:
            return q.span
        for w in self.launch_.launcher_words:
            if w.text is not None and (w.text == key or w.text.startswith(key + "=")):
                return w.span
        return None

    def env(self, name: str) -> Span | None:
        w = self.launch_.env.get(name)
        return w.span if w is not None else None

    def gpu(self) -> Span | None:
        return self.detection.span if self.detection is not None else None

    def last_export(self) -> Span | None:
        anchor = self.launch_.span
        src = self.facts.sources.get(anchor.path)
        if src is None:
            return None
        best = None
        for m in re.finditer(r"(?m)^[ \t]*export[ \t]+[^\n]*$", src.text):
            if m.start() >= anchor.start:
                break
            if src.text[m.start() : m.end()].rstrip().endswith("\\"):
                continue
            best = src.span(m.start(), m.end())
        return best

    def item(self, obj: dict[str, Any]) -> Span | None:
        idx = obj.get("index")
        if not isinstance(idx, int):
            return None
        if "fatal" in obj:  # a binding problem
            if 0 <= idx < len(self.bound.problems):
                return self.bound.problems[idx].span
            return None
        if 0 <= idx < len(self.findings):
            return self.findings[idx].span
        return None

    def expansion(self, obj: dict[str, Any], nth: int) -> Span | None:
        idx = obj.get("index")
        if "fatal" not in obj or not isinstance(idx, int) or not 0 <= idx < len(self.bound.problems):
            return None
        found = cause(self.bound.problems[idx], self.facts)
        if found is None or not 0 < nth <= len(found.expansions):
            return None
        return found.expansions[nth - 1]

    # -- edits
    def _occurrence_span(self, occ: Occurrence) -> Span | None:
        words = [occ.flag, *occ.values]
        sources = self.facts.sources
        first = occ.flag.span
        if not all(_exact(w, sources) for w in words if w is not occ.flag) or first is None:
            return None
        if not _exact(occ.flag, sources):
            return None
        last = words[-1].span or first
        if first.path != last.path or last.end < first.start:
            return None
        src = sources[first.path]
        end = last.end
        # A quoted value word's span is its content; the quotes around it belong to the edit,
        # or removing the flag would leave a lone closing quote behind.
        if len(words) > 1 and 0 < last.start and end < len(src.text):
            q = src.text[last.start - 1]
            if q in "\"'" and src.text[end] == q:
                end += 1
        between = src.text[first.start : end]
        if "\n" in between and not re.search(r"\\\n", between):
            return None
        return src.span(first.start, end)

    def replace_flag(self, dest: str, text: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or not arg.occurrences:
            return None
        edits: list[Edit] = []
        for occ in arg.occurrences[:-1]:
            e = self._removal(occ)
            if e is None:
                return None
            edits.append(e)
        span = self._occurrence_span(arg.occurrences[-1])
        if span is None:
            return None
        edits.append(Edit(span, text))
        return edits

    def _removal(self, occ: Occurrence) -> Edit | None:
        span = self._occurrence_span(occ)
        if span is None:
            return None
        src = self.facts.sources[span.path]
        start = span.start
        while start > 0 and src.text[start - 1] in " \t":
            start -= 1
        return Edit(src.span(start, span.end), "")

    def remove_flag(self, dest: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or not arg.occurrences:
            return None
        edits: list[Edit] = []
        for occ in arg.occurrences:
            e = self._removal(occ)
            if e is None:
                return None
            edits.append(e)
        return edits

    def replace_value(self, dest: str, text: str) -> list[Edit] | None:
        arg = self.bound.get(dest)
        if arg is None or arg.last is None or len(arg.value_words) != 1:
            return None
        word = arg.value_words[0]
        if word.span is not None and _exact(word, self.facts.sources):
            return [Edit(word.span, text)]
        origins = word.origins
        if origins:
            lit = origins[-1]
            src = self.facts.sources.get(lit.path)
            if src is not None and src.text[lit.start : lit.end] == word.text:
                return [Edit(lit, text)]
        return None

    def add_flag(self, text: str) -> list[Edit] | None:
        words = [w for w in self.launch_.argv if w.splat is None]
        target = words[-1] if words else self.launch_.entry
        if target is None or target.span is None or not _exact(target, self.facts.sources):
            return None
        sp = target.span
        src = self.facts.sources[sp.path]
        end = sp.end
        if end < len(src.text) and src.text[end] in "\"'":
            # A quoted word's span is its content: the flag goes after the closing quote, never
            # inside it (`--data-path "/data/my corpus"`). A word that came through an expansion
            # is written elsewhere; inside a quoted element of it the flag would join that value.
            if target.via:
                return None
            end += 1
        return [Edit(src.span(end, end), " " + text)]

    def insert_export(self, name: str, value: str) -> list[Edit] | None:
        anchor = self.last_export()
        src = self.facts.sources.get(self.launch_.span.path)
        if src is None:
            return None
        if anchor is not None:
            line = src.line_text(anchor.start_line)
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            return [Edit(src.span(anchor.end, anchor.end), f"\n{indent}export {name}={value}")]
        # Before the first line of the launch command.
        line_start = self.launch_.span.start - (self.launch_.span.start_col - 1)
        if src.text[line_start : self.launch_.span.start].strip():
            return None
        return [Edit(src.span(line_start, line_start), f"export {name}={value}\n")]

    def replace_item(self, obj: dict[str, Any], text: str) -> list[Edit] | None:
        span = self.item(obj)
        if span is None:
            return None
        src = self.facts.sources.get(span.path)
        if src is None:
            return None
        return [Edit(span, text)]
