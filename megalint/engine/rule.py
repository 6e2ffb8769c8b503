"""A loaded rule and the set of rules: plain data, compiled once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from megalint import REPOSITORY_URL, __version__
from megalint.diagnostics import Applicability, Severity
from megalint.engine.expressions import Expr, Needs
from megalint.engine.forms import Call
from megalint.engine.templates import Template
from megalint.engine.versions import VersionRange

# The project's repository ([project.urls] in pyproject.toml). A finding links to its rule's page
# in the repository at the installed version's tag, so the page always describes the rule as
# this version checks it.
RULES_DOCS = "docs/rules"
RULE_URL = REPOSITORY_URL + "/blob/v{version}/" + RULES_DOCS + "/{name}.md"
# Where a rule is decided: once per launch (and path), or once per file over the shell findings.
LAUNCH, SCRIPT = "launch", "script"
# `forks: all`: the rule holds for every Megatron fork (it checks the launch, not Megatron's code).
ALL_FORKS = "all"
# The values megalint reports a rule it emits itself with, as its message template reads them.
FINDING = "finding"


def rule_url(name: str) -> str:
    """The page of rule `name` (docs/rules/<name>.md) at this version's tag `v<version>`."""
    return RULE_URL.format(version=__version__, name=name)


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
    """One of a rule's examples: a script, and the findings it must (or must not) give."""

    kind: str  # "bad" or "good"
    script: str
    expect: tuple[Expected, ...]
    index: int  # position in the rule's examples list
    origin: str  # file:line:col of the example in its rule file
    fixed: str | None = None
    megatron: str | None = None
    gpu: str | None = None
    assume: dict[str, Any] = field(default_factory=dict)
    max_file_size: int | None = None  # the run's size limit (`max-file-size`), when not the default
    note: str | None = None

    @property
    def bad(self) -> bool:
        return self.kind == "bad"


@dataclass(frozen=True)
class ForEach:
    """A rule's `for_each`: the variable bound to each item of the list the expression gives."""

    var: str
    source: Expr


@dataclass(frozen=True)
class PlaceSpec:
    """One place of `at`, with the condition under which it is the place (`when`): a rule about
    several quantities points at the one that breaks the check, a choice the rule states."""

    at: Call
    when: Expr | None = None

    def __str__(self) -> str:
        return str(self.at)


@dataclass(frozen=True)
class LabelSpec:
    """A rule's secondary place, its text and the condition it is shown under."""

    at: Call
    text: Template
    when: Expr | None = None


@dataclass(frozen=True)
class FixSpec:
    """A rule's fix: its message, how safe it is and the edits that make it."""

    message: Template
    applicability: Applicability
    edits: tuple[Call, ...]


@dataclass(frozen=True)
class Docs:
    """A rule's documentation: `megalint rule`, the SARIF help, the generated pages.

    `summary` is the one line of rule lists when it is not the first line of `what`; a `what`
    that is the summary itself is not repeated under it.
    """

    what: str = ""
    why: str = ""
    summary: str | None = None
    example: str | None = None
    use_instead: str | None = None
    fix_safety: str | None = None
    sources: tuple[str, ...] = ()
    references: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        """What the rule does, past its summary line: empty when `what` only repeats the summary."""
        return "" if self.what == self.summary else self.what

    def sections(self) -> list[tuple[str, str, bool]]:
        """(heading, body, is_code) for each documentation field that is filled in."""
        out = []
        for heading, body, code in (
            ("What it does", self.description, False),
            ("Why is this bad?", self.why, False),
            ("Example", self.example, True),
            ("Use instead", self.use_instead, True),
            ("Fix safety", self.fix_safety, False),
        ):
            if body and body.strip():
                out.append((heading, body.strip("\n"), code))
        return out


@dataclass(frozen=True, eq=False)
class RuleInfo:
    """Who a rule is and its documentation: all that selection, suppression and the outputs read.

    `Rule` extends it with what the engine runs; a renderer can be handed a plain `RuleInfo`.
    """

    code: str
    name: str
    severity: Severity
    url: str | None = None
    docs: Docs = Docs()
    tags: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """One line for rule lists: the docs' summary, else the first line of `what`, else the name."""
        if self.docs.summary:
            return self.docs.summary
        return self.docs.what.strip().split("\n")[0] if self.docs.what else self.name

    def help_text(self) -> str:
        """The documentation as plain text, code indented (SARIF `help.text`)."""
        parts = [self.summary]
        for heading, body, code in self.docs.sections():
            if code:
                body = "\n".join("    " + line for line in body.splitlines())
            parts.append(f"{heading}\n{body}")
        if self.url:
            parts.append(f"Documentation: {self.url}")
        return "\n\n".join(parts)

    def help_markdown(self) -> str:
        """The documentation as Markdown, code fenced (SARIF `help.markdown`)."""
        parts = [self.summary]
        for heading, body, code in self.docs.sections():
            if code:
                fence = "```"
                while fence in body:
                    fence += "`"
                body = f"{fence}bash\n{body}\n{fence}"
            parts.append(f"## {heading}\n\n{body}")
        if self.url:
            parts.append(f"[Documentation]({self.url})")
        return "\n\n".join(parts)


@dataclass(frozen=True, eq=False, kw_only=True)
class Rule(RuleInfo):
    """A loaded rule: its identity and documentation, and the compiled parts the engine runs."""

    category: str
    status: str
    megatron: VersionRange
    requires: tuple[str, ...]
    when: Expr | None  # None: megalint emits the rule itself
    for_each: ForEach | None
    message: Template
    at: tuple[PlaceSpec, ...]
    labels: tuple[LabelSpec, ...]
    help: Template | None
    fix: FixSpec | None
    examples: tuple[Example, ...]
    origin: str  # file:line:col where the rule starts
    emitted_by: str | None = None  # "megalint": reported by megalint itself, not decided on a context
    scope: str = LAUNCH  # LAUNCH or SCRIPT
    forks: tuple[str, ...] = ()  # the Megatron forks it also holds for, or (ALL_FORKS,)
    info_when: Expr | None = None  # a finding for which it holds is info, whatever `severity` says

    def holds_on(self, fork: str | None) -> bool:
        """Whether the rule holds for a launch of this Megatron fork (None: Megatron-LM itself)."""
        return fork is None or ALL_FORKS in self.forks or fork in self.forks

    def applies_to(self, version: str | None) -> bool | None:
        """Whether the rule applies to a Megatron version; None when the version is unknown."""
        if self.megatron.any:
            return True
        if version is None:
            return None
        return self.megatron.contains(version)

    # Worked out when the packaged rules are read, and so kept with them in the rule cache: a
    # first check would otherwise scan every expression of every rule again (about 6 ms).
    @cached_property
    def needs(self) -> Needs:
        """The parts of a context the rule reads."""
        return _needs_of((self,))

    @cached_property
    def reads(self) -> frozenset[str]:
        """What the rule reads, named as `expressions.changes` names what changed; every rule
        reads the Megatron version (its range)."""
        return self.needs.tokens() | {"megatron"}

    def exprs(self) -> Iterator[tuple[Expr, tuple[str, ...]]]:
        """Every expression of the rule, with the names bound around it."""
        bound = (self.for_each.var,) if self.for_each else (FINDING,) if self.when is None else ()
        if self.for_each:
            yield self.for_each.source, ()
        if self.when is not None:
            yield self.when, bound
        for cond in [p.when for p in self.at] + [lab.when for lab in self.labels] + [self.info_when]:
            if cond is not None:
                yield cond, bound
        templates = [self.message, self.help, *(lab.text for lab in self.labels)]
        if self.fix:
            templates.append(self.fix.message)
            for call in self.fix.edits:
                templates.extend(a for a in call.args if isinstance(a, Template))
        for t in templates:
            if t is not None:
                for e in t.exprs:
                    yield e, bound

    def to_json(self) -> dict[str, Any]:
        """What `megalint rule --json` and `megalint rules --json` print for the rule."""
        fix = None
        if self.fix is not None:
            fix = {"message": self.fix.message.source, "applicability": self.fix.applicability.value}
        docs = {
            "what": self.docs.what,
            "why": self.docs.why,
            "example": self.docs.example,
            "use_instead": self.docs.use_instead,
            "fix_safety": self.docs.fix_safety,
            "sources": list(self.docs.sources),
            "references": list(self.docs.references),
        }
        head: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "category": self.category,
            "status": self.status,
        }
        if self.when is None:
            # A rule megalint emits itself has no condition, version range or place to show.
            return {**head, "summary": self.summary, "fix": fix, "docs": docs, "url": self.url}
        return {
            **head,
            "megatron": str(self.megatron),
            "requires": list(self.requires),
            "when": self.when.source,
            "message": self.message.source,
            "fix": fix,
            "docs": docs,
            "url": self.url,
            "origin": self.origin,
            "summary": self.summary,
        }

    def __repr__(self) -> str:
        return f"Rule({self.code} {self.name})"

    def __getstate__(self) -> dict[str, Any]:
        """The rule as the rule cache keeps it: what is read only to show a finding, and the
        documentation, each group pickled on its own (see `_Packed`)."""
        import pickle

        state = dict(self.__dict__)
        for key, names in _PACKED_GROUPS.items():
            if key not in state:  # a group still packed is kept as it was read
                state[key] = pickle.dumps({n: state.pop(n) for n in names}, protocol=pickle.HIGHEST_PROTOCOL)
        return state

    def _unpack(self, key: str) -> dict[str, Any]:
        import pickle

        packed = self.__dict__.get(key)
        if packed is None:  # unpacked since the descriptor was consulted (another thread)
            return {name: self.__dict__[name] for name in _PACKED_GROUPS[key]}
        parts: dict[str, Any] = pickle.loads(packed)
        for name, value in parts.items():
            self.__dict__.setdefault(name, value)
        self.__dict__.pop(key, None)
        return {name: self.__dict__[name] for name in parts}


class _Packed:
    """A field of a rule read from the rule cache, unpickled with its group when first read.

    Unpickling the packaged rules is a tenth of a first check; their messages, labels, help,
    fixes, documentation and examples, most of what is unpickled, are read only by a rule that
    fires, or by `megalint rule`. A non-data descriptor: once the field is in the rule's
    `__dict__` (always, for a rule not read from the cache) it is found there without a call."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, rule: Rule | None, owner: type | None = None) -> Any:
        if rule is None:
            return self
        return rule._unpack(self.key)[self.name]


# Each group's fields are read together: a finding is shown with its message, labels, help and
# fix; the documentation and examples by `megalint rule` and the docs.
_PACKED_GROUPS = {
    "_packed_finding": ("message", "labels", "help", "fix"),
    "_packed_docs": ("docs", "examples"),
}


def _install_packed() -> None:
    # After the dataclass is made, so that its fields and their defaults are as written.
    for key, names in _PACKED_GROUPS.items():
        for name in names:
            packed = _Packed(key)
            packed.__set_name__(Rule, name)
            setattr(Rule, name, packed)


_install_packed()


class RuleSet:
    """Rules in load order, with lookup by code or name and the context parts they read."""

    def __init__(self, rules: list[Rule]):
        self.rules = list(rules)
        self._by_key: dict[str, Rule] = {}
        for r in self.rules:
            self._by_key[r.code] = r
            self._by_key[r.name] = r

    @cached_property
    def needs(self) -> Needs:
        """The parts of a context the rules read; worked out when the rules are first decided."""
        return Needs.union(self.each_needs)

    @cached_property
    def each_needs(self) -> list[Needs]:
        """The parts of a context each rule reads, in load order."""
        return [r.needs for r in self.rules]

    @cached_property
    def reads(self) -> list[frozenset[str]]:
        """What each rule reads, in load order (Rule.reads)."""
        return [r.reads for r in self.rules]

    @cached_property
    def readers(self) -> dict[str, tuple[int, ...]]:
        """The rules with a condition that read each part of a context (a token of Rule.reads),
        by their index in load order: what a change of that part may change."""
        out: dict[str, list[int]] = {}
        for i, (rule, reads) in enumerate(zip(self.rules, self.reads, strict=True)):
            if rule.when is not None:
                for token in reads:
                    out.setdefault(token, []).append(i)
        return {token: tuple(held) for token, held in out.items()}

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, key: str) -> bool:
        return key in self._by_key

    def get(self, key: str) -> Rule | None:
        """A rule by code (ML101) or name (tp-divides-heads)."""
        return self._by_key.get(key)

    def select(self, *, scope: str | None = None, fork: str | None = None) -> RuleSet:
        """The rules decided in `scope` (LAUNCH or SCRIPT; None: both) that hold on `fork`."""
        return RuleSet([r for r in self.rules if (scope is None or r.scope == scope) and r.holds_on(fork)])

    def reading_only(self, roots: Set[str]) -> RuleSet:
        """The rules that read some of `roots` of a context and nothing else."""
        kept = []
        for r, needs in zip(self.rules, self.each_needs, strict=True):
            read = needs.whole | set(needs.keys)
            if read and read <= roots:
                kept.append(r)
        return RuleSet(kept)

    def by_code(self) -> dict[str, Rule]:
        """Every rule by its code, in load order."""
        return {r.code: r for r in self.rules}

    def subset(self, keys: Iterable[str]) -> RuleSet:
        wanted = set(keys)
        return RuleSet([r for r in self.rules if r.code in wanted or r.name in wanted])


def _needs_of(rules: Iterable[Rule]) -> Needs:
    needs = Needs()
    for r in rules:
        for expr, bound in r.exprs():
            needs.add(expr, bound)
        for path in r.requires:
            needs.add_path(path)
    return needs
