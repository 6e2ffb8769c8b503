"""What an undecided string comparison tells the rest of its path.

A script that picks a model with `if [ $MODEL_SIZE = 70B ]` and later runs
`if [ $MODEL_SIZE != 70B ]` asks one question twice. When the first test went one way on a path,
the second is decided there too; otherwise the path would combine the 70B settings with the
launch that only runs for the other sizes, a combination no run of the script reaches.

Only `[ A = B ]`, `[ A != B ]` and their `[[ … ]]` / `==` forms over single words are read.
Bash's own rules fix what follows from an outcome: an unquoted empty operand inside `[ … ]`
makes both `=` and `!=` fail with a syntax error, so a false outcome says nothing about the
value unless the operand is quoted or the test is `[[ … ]]` (which does not split words).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import cast

from megalint import lazy_re

__all__ = ["Comparison", "Taken", "comparison", "recall", "learn"]

# Undecided tests a path took one way, and what they tell of the values they read: the
# evaluator's own entries (conditions.py) and those of learn() below, each keyed so that the
# kinds cannot meet.
Taken = dict[tuple[object, ...], tuple[object, object]]

_TEST = lazy_re.compile(r"^(\[\[?)\s+(\S+)\s+(==?|!=)\s+(\S+)\s+(\]\]?)$")
_GLOB = lazy_re.compile(r"[*?\[\]]")
_QUOTED = lazy_re.compile(r"^(?:\"([^\"$`\\]*|\$\{?\w+\}?)\"|'([^']*)')$")
_VAR = lazy_re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")


class Comparison(tuple[str, str, bool, bool]):
    """(variable, literal, equal, exact): `equal` for = / ==, `exact` when a false outcome
    also tells the value (quoted operand or `[[ … ]]`)."""

    __slots__ = ()

    @property
    def var(self) -> str:
        return self[0]

    @property
    def literal(self) -> str:
        return self[1]

    @property
    def equal(self) -> bool:
        return self[2]

    @property
    def exact(self) -> bool:
        return self[3]


def _operand(word: str) -> tuple[str, bool]:
    m = _QUOTED.match(word)
    if m:
        return (m.group(1) if m.group(1) is not None else m.group(2)), True
    return word, False


def comparison(text: str) -> Comparison | None:
    """The comparison a test's text makes of one variable with a literal word, or None."""
    m = _TEST.match(text.strip())
    if m is None or (m.group(1) == "[[") != (m.group(5) == "]]"):
        return None
    left, left_quoted = _operand(m.group(2))
    right, _ = _operand(m.group(4))
    var = _VAR.match(left)
    if var is None or "$" in right or "`" in right or "\\" in right or _GLOB.search(right) or not right:
        return None
    double = m.group(1) == "[["
    if m.group(3) == "==" and not double:
        return None  # `[ a == b ]` is a bash extension; leave it to the plain evaluation
    return Comparison((var.group(1), right, m.group(3) != "!=", left_quoted or double))


def recall(taken: Taken, cmp: Comparison, read: Hashable) -> bool | None:
    """The outcome this path already fixed for `cmp`, or None. `read` identifies the value the
    variable holds (a test of a reassigned variable learns nothing from an older one)."""
    known = taken.get(("=value", cmp.var, read))
    if known is not None:
        same = known[0] == cmp.literal
        return same if cmp.equal else not same
    fact = taken.get(("=", cmp.var, read, cmp.literal))
    if fact is None:
        return None
    equal = cast(bool, fact[0])  # learn() records whether the value equals the literal
    if cmp.equal:
        return equal
    # `!=` is true for a value known to differ only when the operand cannot be empty.
    return (not equal) if (equal or cmp.exact) else None


def learn(taken: Taken, cmp: Comparison, read: Hashable, outcome: bool, hold: object) -> None:
    """Record what `outcome` of `cmp` says about the variable; `hold` keeps the value read
    alive while the record is (its identity is part of the key)."""
    if not outcome and not cmp.exact:
        return  # a false unquoted `[ … ]` may be an empty operand's syntax error
    equal = outcome if cmp.equal else not outcome
    taken[("=", cmp.var, read, cmp.literal)] = (equal, hold)
    if equal and not any(c.isspace() for c in cmp.literal):
        taken[("=value", cmp.var, read)] = (cmp.literal, hold)
