"""The branch condition a finding is shown with ("note: only when …").

A finding decided on several paths through undecided branches holds when any of their conditions
does: a disjunction of conjunctions of branch outcomes (`` `[ $ENV = dsw ]` true ``). It is
reduced by boolean algebra before it is shown: two paths that differ only in the outcome of one
test merge into one without that test (the finding holds either way, so the test does not decide
it), a path that contains another is dropped, `A or (not A and B)` is `A or B`, and a finding that
holds on every outcome of the tests it was decided over holds unconditionally. Of a long path the
innermost tests are shown and the others counted ("and 3 other conditions"); `megalint explain`
prints each launch's whole condition.
"""

from __future__ import annotations

from collections.abc import Iterable

Term = tuple[str, ...]  # the branch outcomes of one path, outermost first

# Past this many paths the reduction (quadratic in the paths) is not tried: they are only listed.
MAX_TERMS = 256
# The innermost tests a path is shown with; the others are counted.
SHOWN = 2

_OUTCOMES = {" true": " false", " false": " true"}


def _negation(literal: str) -> str | None:
    """The opposite outcome of a test (`` `t` true `` and `` `t` false ``); None for a `case` arm,
    whose other arms are not one outcome."""
    for end, other in _OUTCOMES.items():
        if literal.endswith(end) and literal.startswith("`"):
            return literal[: -len(end)] + other
    return None


def _absorbed(out: list[Term]) -> list[Term]:
    """Without the paths that contain another (or repeat one): they add nothing."""
    sets = [frozenset(t) for t in out]
    return [
        t
        for i, t in enumerate(out)
        if not any(j != i and (sets[j] < sets[i] or (sets[j] == sets[i] and j < i)) for j in range(len(out)))
    ]


def _drop_one_test(out: list[Term]) -> bool:
    """(X and L) or (Y and not L), with X part of Y: Y is covered either way, so the second path
    holds without the test (Y alone). Applies one such step in place; False when none applies."""
    sets = [frozenset(t) for t in out]
    for i, t in enumerate(out):
        for lit in t:
            neg = _negation(lit)
            if neg is None:
                continue
            rest = sets[i] - {lit}
            for j in range(len(out)):
                if neg in sets[j] and rest <= sets[j] - {neg}:
                    out[j] = tuple(x for x in out[j] if x != neg)
                    return True
    return False


def reduce(terms: Iterable[Term]) -> list[Term]:
    """The paths with every test that does not decide the finding left out; [()] when it holds
    whatever the tests give."""
    out = list(dict.fromkeys(terms))
    if () in out:
        return [()]
    if len(out) > MAX_TERMS:
        return out
    while True:
        out = _absorbed(out)
        if () in out:
            return [()]
        if not _drop_one_test(out):
            return out


def shown(terms: list[Term]) -> str | None:
    """The condition as a note shows it; None when it holds on every path."""
    if not terms or () in terms:
        return None
    texts = [_term(t) for t in terms]
    return texts[0] if len(texts) == 1 else " or ".join(f"({t})" for t in texts)


def _term(t: Term) -> str:
    if len(t) <= SHOWN + 1:
        return " and ".join(t)
    return " and ".join(t[-SHOWN:]) + f" (and {len(t) - SHOWN} other conditions)"
