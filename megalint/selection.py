"""Which rules run, at which severity, on which file.

A selector is a rule code (`ML101`, any case), a rule name (`world-size-divisibility`), a code
prefix (`ML1`, `ML`) or `ALL`. Selection is made in layers, the configuration file first and
the command line over it, as Ruff does: a layer with `select` starts afresh from it, then
`extend-select` adds and `ignore` removes. Inside one layer the more specific selector wins
(`select = ["ML1"]`, `ignore = ["ML101"]` keeps ML1xx but ML101), and `ignore` wins a tie.
A selector that matches no rule is an error, never silently nothing. As in Ruff, each option
and each string of a configuration list may hold several selectors separated by commas
(`--select ML101,ML102`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from megalint import lazy_re
from megalint.diagnostics import Severity
from megalint.errors import UsageError

if TYPE_CHECKING:
    from megalint.engine.rule import RuleInfo

ALL = "ALL"
EXACT = 100
_PREFIX = lazy_re.compile(r"^[A-Za-z]{1,8}[0-9]*$")


def specificity(selector: str, code: str, name: str) -> int:
    """How closely `selector` names the rule: 0 when it does not, higher when more precise."""
    s = selector.strip()
    if s.upper() == ALL:
        return 1
    if s.upper() == code.upper() or s == name:
        return EXACT
    if _PREFIX.match(s) and code.upper().startswith(s.upper()):
        return 1 + len(s)
    return 0


def split_selectors(items: Iterable[str]) -> list[str]:
    """The selectors of `items`, each of which may list several separated by commas.

    An empty one (`ML101,`) is kept as "" so that it is reported as unknown, not dropped.
    """
    return [part.strip() for item in items for part in item.split(",")]


def matches(selector: str, code: str, name: str) -> bool:
    return specificity(selector, code, name) > 0


@dataclass
class Layer:
    """One source of selectors: the configuration file or the command line."""

    select: Sequence[str] | None = None
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()

    def selectors(self) -> Iterable[str]:
        yield from self.select or ()
        yield from self.extend_select
        yield from self.ignore


@dataclass
class Catalog:
    """Every rule megalint knows for a file: codes and names, for checking selectors."""

    rules: Mapping[str, RuleInfo]  # by code
    names: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.names = {r.name: c for c, r in self.rules.items()}

    def known(self, selector: str) -> bool:
        return any(matches(selector, c, r.name) for c, r in self.rules.items())

    def suggestion(self, selector: str) -> str | None:
        pool = list(self.rules) + list(self.names)
        import difflib  # only for a selector that names no rule

        near = difflib.get_close_matches(selector.strip(), pool, n=1, cutoff=0.6)
        if not near:
            near = difflib.get_close_matches(selector.strip().upper(), list(self.rules), n=1, cutoff=0.6)
        return near[0] if near else None

    def unknown_message(self, selector: str, where: str) -> str:
        hint = self.suggestion(selector)
        more = f"; did you mean `{hint}`?" if hint else "; see `megalint rules`"
        return f"unknown rule `{selector}` in {where}{more}"


def check_selectors(catalog: Catalog, selectors: Iterable[str], where: str) -> None:
    for s in selectors:
        if not catalog.known(s):
            raise UsageError(catalog.unknown_message(s, where))


def selected_codes(codes: dict[str, str], layers: Sequence[Layer], preview: Iterable[str] = ()) -> set[str]:
    """The codes (from {code: name}) that the layers turn on.

    Every code is on by default but those in `preview`, which only a selector naming the
    rule exactly (its code or name, not a prefix or ALL) turns on.
    """
    preview = set(preview)
    on = set(codes) - preview
    for layer in layers:
        if layer.select is not None:
            base = set()
        else:
            base = set(on)
        for code, name in codes.items():
            best_on = max(
                (specificity(s, code, name) for s in list(layer.select or ()) + list(layer.extend_select)), default=0
            )
            best_off = max((specificity(s, code, name) for s in layer.ignore), default=0)
            if best_off and best_off >= best_on:
                base.discard(code)
            elif best_on and (code not in preview or best_on == EXACT):
                base.add(code)
        on = base
    return on


def severity_for(code: str, name: str, default: Severity, overrides: dict[str, str]) -> Severity:
    """The configured severity of a rule: the most specific matching selector wins."""
    best, level = 0, None
    for selector, value in overrides.items():
        s = specificity(selector, code, name)
        if s > best:
            best, level = s, value
    return Severity(level) if level else default
