"""The context of a fragment (launch/fragments.py): what a rule reads of arguments that no launch
in the file runs. The flags it gives, their values and the problems of binding them are known;
a flag it does not give may be given by the launch, and everything of the launch itself (its
processes, environment, GPU, memory, the sizes derived from them) is not known. Rules reading
those are undecided, never fired."""

from __future__ import annotations

from typing import Any

from megalint.launch.fragments import NO_LAUNCH

NOT_GIVEN = "not given in the fragment: the launch that runs it may give it"
_OF_THE_LAUNCH = ("derived", "env", "env_set", "launch", "gpu", "memory", "given")
# A word that belongs to no flag may be the value of a flag the launch writes just before it; a
# flag of another release is only wrong for the release the launch runs, which may be older.
_NEEDS_THE_LAUNCH = frozenset({"positional", "flag-in-other-version"})
# Whoever runs a fragment may add flags of its own (`extra_args_provider`) or be a fork: a flag
# Megatron-LM does not know is reported only as a misspelling, this close to one it knows, in a
# fragment written mostly in Megatron-LM's own flags.
MAX_TYPO = 2


def fragment_context(ctx: dict[str, Any]) -> dict[str, Any]:
    """`ctx` (built as for a launch) with what only a launch can tell turned unknown."""
    unknown: dict[str, str] = ctx["unknown"]
    given = ctx["given"]
    for dest in [d for d in ctx["args"] if d not in given]:
        del ctx["args"][dest]
        unknown[f"args.{dest}"] = NOT_GIVEN
    for dest in [k for k in unknown if k.startswith("args.") and k[5:] not in given]:
        unknown[dest] = NOT_GIVEN
    for root in _OF_THE_LAUNCH:
        ctx.pop(root, None)
        for key in [k for k in unknown if k.startswith(root + ".")]:
            del unknown[key]
        unknown[root] = NO_LAUNCH
    unknown_flags = [p for p in ctx["problems"] if p.get("kind") == "unknown-flag"]
    megatron_style = len(given) > len(unknown_flags)
    ctx["problems"] = [
        p
        for p in ctx["problems"]
        if p.get("kind") not in _NEEDS_THE_LAUNCH
        and (p.get("kind") != "unknown-flag" or (megatron_style and _misspelt(p)))
    ]
    return ctx


def _misspelt(problem: dict[str, Any]) -> bool:
    flag, suggestions = problem.get("flag"), problem.get("suggestions")
    if not isinstance(flag, str) or not suggestions:
        return False
    flag = flag.split("=", 1)[0]
    return any(_distance(flag, s) <= MAX_TYPO for s in suggestions)


def _distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap of neighbours) between two flags."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur.append(d)
        prev2, prev = prev, cur
    return prev[-1]
