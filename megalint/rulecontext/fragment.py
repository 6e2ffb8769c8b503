"""The context of a fragment (launch/fragments.py): what a rule reads of arguments that no launch
in the file runs. The flags it gives, their values and the problems of binding them are known;
a flag it does not give may be given by the launch, and everything of the launch itself (its
processes, environment, GPU, memory, the sizes derived from them) is not known. Rules reading
those are undecided, never fired."""

from __future__ import annotations

from typing import Any

from megalint.launch.fragments import NO_LAUNCH
from megalint.megatron.bound import BoundArgs
from megalint.rulecontext.assumptions import ASSUMED

NOT_GIVEN = "not given in the fragment: the launch that runs it may give it"
_OF_THE_LAUNCH = ("derived", "env", "env_set", "launch", "gpu", "memory", "given")
# Binding problems only the launch can judge, and why: a word that belongs to no flag may be the
# value of a flag the launch writes just before it; a flag of another release is only wrong for
# the release the launch runs, which may be older; whoever runs a fragment may add flags of its
# own (`extra_args_provider`) or be a fork, so a flag Megatron-LM does not know is reported only
# as a misspelling, this close to one it knows, in a fragment written mostly in Megatron-LM's flags.
_LEFT_TO_THE_LAUNCH = {
    "positional": "a word that belongs to no flag here may be the value of a flag the launch writes before it",
    "flag-in-other-version": "a flag of another Megatron-LM release: right or wrong for the release the launch runs",
    "unknown-flag": "not a Megatron-LM flag, nor a misspelling of one: the script that runs the fragment may define it",
}
# The rule that reports each kind of problem left to the launch: undecided on the fragment.
LEFT_RULES = {
    "positional": "stray-argument",
    "flag-in-other-version": "flag-in-other-version",
    "unknown-flag": "unknown-flag",
}
MAX_TYPO = 2


def fragment_context(ctx: dict[str, Any], bound: BoundArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """`ctx` (built as for a launch) with what only a launch can tell turned unknown; and the
    binding problems left to the launch, each as (the rule that reports it, `flag at place: why`)."""
    left: list[tuple[str, str]] = []
    unknown: dict[str, str] = ctx["unknown"]
    given = ctx["given"]
    for dest in [d for d in ctx["args"] if d not in given]:
        del ctx["args"][dest]
        unknown[f"args.{dest}"] = NOT_GIVEN
    for dest in [k for k in unknown if k.startswith("args.") and k[5:] not in given]:
        unknown[dest] = NOT_GIVEN
    assumed = ctx.get(ASSUMED, {})
    for key in [k for k in assumed if k.split(".", 1)[0] in _OF_THE_LAUNCH or k == "memory"]:
        del assumed[key]
    for root in _OF_THE_LAUNCH:
        ctx.pop(root, None)
        for key in [k for k in unknown if k.startswith(root + ".")]:
            del unknown[key]
        unknown[root] = NO_LAUNCH
    if "problems" not in ctx:
        return ctx, left  # the fork's parser is not all at hand: its problems are unknown already
    unknown_flags = [p for p in ctx["problems"] if p.get("kind") == "unknown-flag"]
    megatron_style = len(given) > len(unknown_flags)
    kept: list[dict[str, Any]] = []
    for p in ctx["problems"]:
        kind = p.get("kind")
        if kind not in _LEFT_TO_THE_LAUNCH or (kind == "unknown-flag" and megatron_style and _misspelt(p)):
            kept.append(p)
            continue
        problem = bound.problems[p["index"]]
        at = f" at {problem.span}" if problem.span is not None else ""
        left.append((LEFT_RULES[kind], f"{problem.option or problem.value or kind}{at}: {_LEFT_TO_THE_LAUNCH[kind]}"))
    ctx["problems"] = kept
    return ctx, left


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
