"""The script as a whole as rules read it: the context and the Locator of the rules that run
once per file over the shell findings, which belong to the script and not to one launch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from megalint.diagnostics import Edit
from megalint.rulecontext.findings import shell_entries
from megalint.shell.facts import ScriptFacts
from megalint.source import Span


def script_context(facts: ScriptFacts, version: str) -> dict[str, object]:
    return {"shell": shell_entries(facts.findings), "megatron": version, "unknown": {}}


@dataclass
class ScriptLocator:
    """The engine's Locator for the script as a whole. Its places are the shell findings and
    the script's first line; there is no launch, flag or environment to point at or edit."""

    facts: ScriptFacts

    # -- places
    def launch(self) -> Span:
        src = self.facts.sources[self.facts.path]
        return src.span(0, min(len(src.text), max(1, len(src.line_text(1)))))

    def entry(self) -> Span | None:
        return None

    def flag(self, dest: str) -> Span | None:
        return None

    def value(self, dest: str) -> Span | None:
        return None

    def origins(self, dest: str) -> list[Span]:
        return []

    def launcher(self, key: str) -> Span | None:
        return None

    def env(self, name: str) -> Span | None:
        return None

    def gpu(self) -> Span | None:
        return None

    def last_export(self) -> Span | None:
        return None

    def item(self, obj: dict[str, Any]) -> Span | None:
        idx = obj.get("index")
        if not isinstance(idx, int) or "fatal" in obj:  # `fatal`: a binding problem, which no script has
            return None
        if 0 <= idx < len(self.facts.findings):
            return self.facts.findings[idx].span
        return None

    def expansion(self, obj: dict[str, Any], nth: int) -> Span | None:
        return None

    # -- edits
    def replace_flag(self, dest: str, text: str) -> list[Edit] | None:
        return None

    def remove_flag(self, dest: str) -> list[Edit] | None:
        return None

    def replace_value(self, dest: str, text: str) -> list[Edit] | None:
        return None

    def add_flag(self, text: str) -> list[Edit] | None:
        return None

    def insert_export(self, name: str, value: str) -> list[Edit] | None:
        return None

    def replace_item(self, obj: dict[str, Any], text: str) -> list[Edit] | None:
        span = self.item(obj)
        if span is None or span.path not in self.facts.sources:
            return None
        return [Edit(span, text)]
