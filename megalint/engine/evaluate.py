"""Decide rules on contexts and turn the ones that fire into diagnostics.

A rule is decided on a context only when every input it needs is known. Otherwise it is
undecided: it neither fires nor passes, and the result says which inputs were missing and why,
for `megalint explain`. An expression that fails for another reason (a type mismatch in a rule)
is a rule failure, reported separately and never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from megalint.diagnostics import Diagnostic, Edit, Fix, Label, Severity
from megalint.engine.assumptions import Assumptions, Resting, Vary, lower, phrase
from megalint.engine.conditions import Term, reduce, shown
from megalint.engine.context import has_path, unknown_reason
from megalint.engine.expressions import Env, EvalFailure, Expr, NeedInputs, Needs, changes
from megalint.engine.forms import Call
from megalint.engine.locate import Locator
from megalint.engine.rule import FINDING, Rule, RuleSet
from megalint.engine.templates import Template
from megalint.source import Span

FIRED = "fired"
PASSED = "passed"
UNDECIDED = "undecided"
FAILED = "failed"
NOT_APPLICABLE = "not-applicable"  # the Megatron version is outside the rule's range

# Whether `evaluate` replays a rule on a target that gives it the inputs of the target before;
# tests/engine/test_shared_verdicts.py turns it off and compares everything evaluated.
SHARE = True


@dataclass(frozen=True)
class Missing:
    """An input a rule needed and the context did not have, with why."""

    path: str
    reason: str | None = None

    def __str__(self) -> str:
        return f"{self.path} ({self.reason})" if self.reason else self.path


@dataclass
class Undecided:
    """A rule that could not be decided on a target, and the inputs it lacked."""

    rule: Rule
    missing: tuple[Missing, ...]
    condition: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.rule.code,
            "name": self.rule.name,
            "missing": [{"path": m.path, "reason": m.reason} for m in self.missing],
            "condition": self.condition,
        }


@dataclass
class RuleFailure:
    """A rule whose condition failed to run (a type mismatch, a budget passed)."""

    rule: Rule
    message: str
    condition: str | None = None

    def __str__(self) -> str:
        return f"{self.rule.code} ({self.rule.origin}): {self.message}"


@dataclass
class Target:
    """One context to decide rules on: one launch on one path through the script."""

    context: Mapping[str, Any]
    locator: Locator
    condition: str | None = None  # the undecided branches taken to reach this launch
    # The context with a launch quantity taken from a default set to another value (assumptions.py)
    vary: Vary | None = None
    # The branch outcomes `condition` joins, outermost first (conditions.py reduces them); empty
    # when the condition is not made of them
    conjuncts: tuple[str, ...] = ()


@dataclass
class Evaluation:
    """What deciding rules on targets gave: findings, undecided rules, failures, outcomes."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    failures: list[RuleFailure] = field(default_factory=list)
    # code -> the outcomes it had over all targets (FIRED, PASSED, UNDECIDED, FAILED, NOT_APPLICABLE)
    outcomes: dict[str, set[str]] = field(default_factory=dict)


def _missing(ctx: Mapping[str, Any], paths: Iterable[str]) -> tuple[Missing, ...]:
    return tuple(Missing(p, unknown_reason(ctx, p)) for p in paths)


# What deciding a rule on a target added to the evaluation, when it did not fire: an outcome, an
# undecided rule (the paths it missed, or what it missed), a failure. Another target that gives
# the rule the same inputs gets the same (`_replay`), with its own condition.
_OUTCOME, _UNDECIDED_PATHS, _UNDECIDED, _FAILED = range(4)
Event = tuple[int, Any]


class _Run:
    """One rule decided on one target; `when` is the rule's condition. `events` keeps what it
    added, until it fires (None: a finding rests on the target's places, not on its inputs alone)."""

    def __init__(self, rule: Rule, when: Expr, env: Env, target: Target, out: Evaluation):
        self.rule, self.when, self.env, self.target, self.out = rule, when, env, target, out
        self.locator = target.locator
        self.events: list[Event] | None = []

    def outcome(self, what: str) -> None:
        self.out.outcomes.setdefault(self.rule.code, set()).add(what)
        if self.events is not None:
            self.events.append((_OUTCOME, what))

    def undecided(self, paths: Iterable[str]) -> None:
        self.outcome(UNDECIDED)
        paths = tuple(paths)
        self.out.undecided.append(Undecided(self.rule, _missing(self.target.context, paths), self.target.condition))
        if self.events is not None:
            self.events.append((_UNDECIDED_PATHS, paths))

    def undecided_by(self, missing: tuple[Missing, ...]) -> None:
        self.outcome(UNDECIDED)
        self.out.undecided.append(Undecided(self.rule, missing, self.target.condition))
        if self.events is not None:
            self.events.append((_UNDECIDED, missing))

    def failed(self, message: str) -> None:
        self.outcome(FAILED)
        self.out.failures.append(RuleFailure(self.rule, message, self.target.condition))
        if self.events is not None:
            self.events.append((_FAILED, message))

    def run(self) -> None:
        rule, ctx = self.rule, self.target.context
        version = ctx.get("megatron")
        try:
            applies = rule.applies_to(version if isinstance(version, str) else None)
        except ValueError as e:
            self.undecided_by((Missing("megatron", str(e)),))
            return
        if applies is None:
            self.undecided(["megatron"])
            return
        if not applies:
            self.outcome(NOT_APPLICABLE)
            return
        absent = [p for p in rule.requires if not has_path(ctx, p)]
        if absent:
            self.decide_without(absent)
            return
        if rule.for_each is None:
            self.decide(None)
            return
        try:
            items = rule.for_each.source.run(self.env)
        except NeedInputs as e:
            self.undecided(e.paths)
            return
        except EvalFailure as e:
            self.failed(f"for_each.in: {e}")
            return
        if not isinstance(items, list):
            self.failed(f"for_each.in gave {type(items).__name__}, not a list")
            return
        var = rule.for_each.var
        try:
            for item in items:
                self.env.bind(var, item)
                self.decide(item)
        finally:
            self.env.unbind(var)
        if not items:
            self.outcome(PASSED)

    def decide_without(self, absent: list[str]) -> None:
        """A rule missing an input it requires is undecided, unless its condition is false without
        it (`unknown && false`): the input could not make it fire, so the rule passes."""
        if self.rule.for_each is None:
            try:
                verdict = self.when.run(self.env)
            except (NeedInputs, EvalFailure):
                verdict = None
            if verdict is False:
                self.outcome(PASSED)
                return
        self.undecided(absent)

    def decide(self, item: Any) -> None:
        try:
            verdict = self.when.run(self.env)
        except NeedInputs as e:
            self.undecided(e.paths)
            return
        except EvalFailure as e:
            self.failed(f"when: {e}")
            return
        if not isinstance(verdict, bool):
            self.failed(f"when gave {verdict!r}, not true or false")
            return
        if not verdict:
            self.outcome(PASSED)
            return
        self.events = None
        bound = (self.rule.for_each.var, item) if self.rule.for_each is not None else None
        assumptions = Assumptions(self.target.context, self.env.needs, self.when, self.rule.requires, self.target.vary)
        resting = assumptions.resting(bound)
        if resting.fallback is not None:
            self.undecided_by((Missing("launch.nnodes", resting.fallback),))
            return
        self.outcome(FIRED)
        self.out.diagnostics.append(self.diagnostic(item, resting))

    # -- places and edits -----------------------------------------------------------------

    def places(self, call: Call, item: Any) -> list[Span]:
        loc, name, args = self.locator, call.name, call.args
        if name == "origin":
            return [s for s in loc.origins(args[0]) if s is not None]
        if name == "item":
            span = loc.item(item) if isinstance(item, dict) else None
        elif name == "expansion":
            span = loc.expansion(item, int(args[0])) if isinstance(item, dict) else None
        elif name in ("launch", "entry", "gpu", "last_export"):
            span = getattr(loc, name)()
        else:  # flag, value, launcher, env
            span = getattr(loc, name)(args[0])
        return [span] if span is not None else []

    def holds(self, condition: Expr | None) -> bool:
        """Whether a place's or label's `when` holds; one that cannot be decided does not."""
        if condition is None:
            return True
        try:
            return condition.run(self.env) is True
        except (NeedInputs, EvalFailure):
            return False

    def render(self, template: Template | None) -> str | None:
        return None if template is None else template.render(self.env)

    def fix(self, item: Any) -> Fix | None:
        spec = self.rule.fix
        if spec is None:
            return None
        edits: list[Edit] = []
        for call in spec.edits:
            try:
                args = [a.render(self.env, strict=True) if isinstance(a, Template) else a for a in call.args]
            except (NeedInputs, EvalFailure):
                return None
            if call.name == "replace_item":
                built = self.locator.replace_item(item, *args) if isinstance(item, dict) else None
            else:
                built = getattr(self.locator, call.name)(*args)
            if built is None:
                return None
            edits.extend(built)
        if not edits:
            return None
        return Fix(spec.message.render(self.env), spec.applicability, tuple(edits))

    def diagnostic(self, item: Any, resting: Resting) -> Diagnostic:
        rule = self.rule
        span = None
        for place in rule.at:
            found = self.places(place.at, item) if self.holds(place.when) else []
            if found:
                span = found[0]
                break
        if span is None:
            span = self.locator.launch()
        labels: list[Label] = []
        for spec in rule.labels:
            spans = self.places(spec.at, item) if self.holds(spec.when) else []
            if not spans:
                continue
            text = spec.text.render(self.env)
            for s in spans:
                if s != span and all(lab.span != s for lab in labels):
                    labels.append(Label(s, text))
        message = rule.message.render(self.env)
        if resting.texts:
            message = f"{message} ({phrase(resting)})"
        severity = Severity.INFO if rule.info_when is not None and self.holds(rule.info_when) else rule.severity
        return Diagnostic(
            code=rule.code,
            name=rule.name,
            severity=lower(severity) if resting.texts else severity,
            message=message,
            span=span,
            labels=tuple(labels),
            help=self.render(rule.help),
            fix=self.fix(item),
            url=rule.url,
            condition=self.target.condition,
            assumed=resting.texts,
            command=self.locator.launch(),
        )


def evaluate_one(
    rules: RuleSet | Iterable[Rule], target: Target, out: Evaluation | None = None, needs: Needs | None = None
) -> Evaluation:
    """Decide every rule on one target."""
    out = out if out is not None else Evaluation()
    if needs is None:
        needs = rules.needs if isinstance(rules, RuleSet) else None
    env = Env(target.context, needs)
    for rule in rules:
        if rule.when is not None:  # a rule megalint emits itself has nothing to decide
            _Run(rule, rule.when, env, target, out).run()
    return out


def emit(rule: Rule, span: Span, finding: Mapping[str, Any], fix: Fix | None = None) -> Diagnostic:
    """A finding of a rule megalint reports itself: its message is the rule's template over `finding`."""
    env = Env({})
    env.bind(FINDING, dict(finding))
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        message=rule.message.render(env),
        span=span,
        fix=fix,
        url=rule.url,
    )


def evaluate(rules: RuleSet | Iterable[Rule], targets: Iterable[Target]) -> Evaluation:
    """Decide every rule on every target; identical findings from several paths are merged,
    and hold unconditionally when any of those paths was unconditional.

    The launches of one script's paths mostly differ in a few flags: a rule that did not fire on
    the target before, and reads nothing that differs from it, adds what it added there
    (`_replay`) without being decided again."""
    if not isinstance(rules, RuleSet):
        rules = RuleSet(list(rules))
    raw = Evaluation()
    paths: dict[int, Term] = {}  # id(diagnostic) -> the branch outcomes of its path
    needs = rules.needs
    kept: list[list[Event] | None] = [None] * len(rules)  # per rule, what it added on the target before
    fired: set[int] = set()  # the rules with a condition that fired when last decided: kept is None
    previous: dict[str, Any] | None = None
    for target in targets:
        before = len(raw.diagnostics)
        selected = needs.select(target.context)
        changed = changes(previous, selected) if previous is not None and SHARE else None
        previous = selected
        env: Env | None
        if changed is None:
            deciding = [r.when is not None for r in rules.rules]
            env = Env(target.context, needs, selected)
        else:
            # Decided again: a rule that fired, and one reading a part that changed.
            deciding = [False] * len(rules)
            for i in fired:
                deciding[i] = True
            readers = rules.readers
            for token in changed:
                for i in readers.get(token, ()):
                    deciding[i] = True
            # CEL is handed only what the rules decided again read: making a context ready
            # costs by the value, and most rules are replayed.
            part = Needs.union(n for n, d in zip(rules.each_needs, deciding, strict=True) if d)
            env = Env(target.context, needs, part.select(target.context)) if any(deciding) else None
        for i, rule in enumerate(rules.rules):
            if deciding[i] and rule.when is not None and env is not None:
                run = _Run(rule, rule.when, env, target, raw)
                run.run()
                kept[i] = run.events
                if run.events is None:
                    fired.add(i)
                else:
                    fired.discard(i)
            elif (events := kept[i]) is not None:
                _replay(rule, events, target, raw)
        if target.condition is not None:
            term = target.conjuncts or (target.condition,)
            for d in raw.diagnostics[before:]:
                paths[id(d)] = term
    return Evaluation(
        diagnostics=sorted(_merge_diagnostics(raw.diagnostics, paths), key=lambda d: d.sort_key()),
        undecided=_merge(raw.undecided, lambda u: (u.rule.code, u.missing)),
        failures=_merge(raw.failures, lambda f: (f.rule.code, f.message)),
        outcomes=raw.outcomes,
    )


def _replay(rule: Rule, events: list[Event], target: Target, out: Evaluation) -> None:
    """What deciding `rule` on `target` adds, from what it added on a target with the same inputs."""
    for kind, what in events:
        if kind == _OUTCOME:
            out.outcomes.setdefault(rule.code, set()).add(what)
        elif kind == _UNDECIDED_PATHS:
            out.undecided.append(Undecided(rule, _missing(target.context, what), target.condition))
        elif kind == _UNDECIDED:
            out.undecided.append(Undecided(rule, what, target.condition))
        else:
            out.failures.append(RuleFailure(rule, what, target.condition))


class _Conditional(Protocol):
    condition: str | None


_C = TypeVar("_C", bound=_Conditional)


def _diag_key(d: Diagnostic) -> Hashable:
    return (d.code, d.span, d.message, d.labels, d.help, d.fix)


def _merge_diagnostics(diagnostics: list[Diagnostic], paths: Mapping[int, Term]) -> list[Diagnostic]:
    """Identical findings from several paths as one, shown with the condition that decides it:
    none when it holds on every outcome of the tests (or on an unconditional path)."""
    merged: dict[Hashable, tuple[Diagnostic, list[Term]]] = {}
    for d in diagnostics:
        term = paths.get(id(d), ())
        k = _diag_key(d)
        if k not in merged:
            merged[k] = (d, [term])
        else:
            merged[k][1].append(term)
    out = []
    for d, terms in merged.values():
        d.condition = shown(reduce(terms))
        out.append(d)
    return out


def _merge(items: list[_C], key: Callable[[_C], Hashable]) -> list[_C]:
    merged: dict[Hashable, tuple[_C, list[str | None]]] = {}
    for it in items:
        k = key(it)
        if k not in merged:
            merged[k] = (it, [it.condition])
        else:
            merged[k][1].append(it.condition)
    out = []
    for it, conditions in merged.values():
        if None in conditions:
            it.condition = None
        else:
            unique = list(dict.fromkeys(conditions))
            it.condition = unique[0] if len(unique) == 1 else " or ".join(f"({c})" for c in unique)
        out.append(it)
    return out
