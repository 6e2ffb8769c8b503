"""A loaded rule and the set of rules: plain data, compiled once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from megalint.diagnostics import Applicability, Severity
from megalint.engine.expressions import Expr, Needs
from megalint.engine.forms import Call
from megalint.engine.templates import Template
from megalint.engine.versions import VersionRange

RULE_URL = "https://megalint.dev/rules/{name}"


def rule_url(name: str) -> str:
    return RULE_URL.format(name=name)


@dataclass(frozen=True)
class Expected:
    """One position a bad example must be reported at (1-based, end exclusive)."""

    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        end = ""
        if self.end_line is not None or self.end_column is not None:
            end = (
                f"-{self.end_line if self.end_line is not None else '?'}:"
                f"{self.end_column if self.end_column is not None else '?'}"
            )
        return f"{self.line}:{self.column}{end}"


@dataclass(frozen=True)
class Example:
    kind: str  # "bad" or "good"
    script: str
    expect: tuple[Expected, ...]
    index: int  # position in the rule's examples list
    origin: str  # file:line:col of the example in its rule file
    fixed: str | None = None
    megatron: str | None = None
    gpu: str | None = None
    assume: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    @property
    def bad(self) -> bool:
        return self.kind == "bad"


@dataclass(frozen=True)
class ForEach:
    var: str
    source: Expr


@dataclass(frozen=True)
class LabelSpec:
    at: Call
    text: Template


@dataclass(frozen=True)
class FixSpec:
    message: Template
    applicability: Applicability
    edits: tuple[Call, ...]


@dataclass(frozen=True)
class Docs:
    what: str
    why: str
    example: str | None = None
    use_instead: str | None = None
    fix_safety: str | None = None
    sources: tuple[str, ...] = ()
    references: tuple[str, ...] = ()


@dataclass(eq=False)
class Rule:
    code: str
    name: str
    severity: Severity
    category: str
    status: str
    megatron: VersionRange
    requires: tuple[str, ...]
    when: Expr
    for_each: ForEach | None
    message: Template
    at: tuple[Call, ...]
    labels: tuple[LabelSpec, ...]
    help: Template | None
    fix: FixSpec | None
    docs: Docs
    examples: tuple[Example, ...]
    origin: str  # file:line:col where the rule starts

    @property
    def url(self) -> str:
        return rule_url(self.name)

    def applies_to(self, version: str | None) -> bool | None:
        """Whether the rule applies to a Megatron version; None when the version is unknown."""
        if self.megatron.any:
            return True
        if version is None:
            return None
        return self.megatron.contains(version)

    def exprs(self) -> Iterator[tuple[Expr, tuple[str, ...]]]:
        """Every expression of the rule, with the names bound around it."""
        bound = (self.for_each.var,) if self.for_each else ()
        if self.for_each:
            yield self.for_each.source, ()
        yield self.when, bound
        templates = [self.message, self.help, *(lab.text for lab in self.labels)]
        if self.fix:
            templates.append(self.fix.message)
            for call in self.fix.edits:
                templates.extend(a for a in call.args if isinstance(a, Template))
        for t in templates:
            if t is not None:
                for e in t.exprs:
                    yield e, bound

    def to_json(self) -> dict:
        """Metadata for `megalint rule`, SARIF rule descriptors and generated docs."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "category": self.category,
            "status": self.status,
            "megatron": str(self.megatron),
            "requires": list(self.requires),
            "when": self.when.source,
            "message": self.message.source,
            "fix": None
            if self.fix is None
            else {
                "message": self.fix.message.source,
                "applicability": self.fix.applicability.value,
            },
            "docs": {
                "what": self.docs.what,
                "why": self.docs.why,
                "example": self.docs.example,
                "use_instead": self.docs.use_instead,
                "fix_safety": self.docs.fix_safety,
                "sources": list(self.docs.sources),
                "references": list(self.docs.references),
            },
            "url": self.url,
            "origin": self.origin,
        }

    def __repr__(self) -> str:
        return f"Rule({self.code} {self.name})"


class RuleSet:
    """Rules in load order, with lookup by code or name and the context parts they read."""

    def __init__(self, rules: list[Rule]):
        self.rules = list(rules)
        self._by_key: dict[str, Rule] = {}
        for r in self.rules:
            self._by_key[r.code] = r
            self._by_key[r.name] = r
        self.needs = Needs()
        for r in self.rules:
            for expr, bound in r.exprs():
                self.needs.add(expr, bound)
            for path in r.requires:
                self.needs.add_path(path)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, key: str) -> bool:
        return key in self._by_key

    def get(self, key: str) -> Rule | None:
        """A rule by code (ML101) or name (tp-divides-heads)."""
        return self._by_key.get(key)

    def subset(self, keys) -> RuleSet:
        wanted = set(keys)
        return RuleSet([r for r in self.rules if r.code in wanted or r.name in wanted])
