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
# A word that belongs to no flag may be the value of a flag the launch writes just before it.
_NEEDS_THE_LAUNCH = frozenset({"positional"})


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
    ctx["problems"] = [p for p in ctx["problems"] if p.get("kind") not in _NEEDS_THE_LAUNCH]
    return ctx
