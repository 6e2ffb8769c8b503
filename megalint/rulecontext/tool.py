"""The context of a program that reads its flags with a parser of its own (launch/tools.py): the
problems of binding its words against that parser, and nothing of Megatron. Only the rules that
read nothing but binding problems are decided on it (`TOOL_INPUTS`)."""

from __future__ import annotations

from typing import Any

from megalint.megatron.bound import BoundArgs
from megalint.rulecontext.problems import problem_entry

TOOL_INPUTS = frozenset({"problems"})
# Keys that carry Megatron-LM's own history of a flag, which a program's own flag does not have.
_MEGATRON_ONLY = (
    "renamed_to",
    "renamed_how",
    "renamed_in",
    "older_name",
    "history",
    "choice_added_in",
    "choice_last_in",
    "choice_removed_in",
)


def tool_context(bound: BoundArgs, parser_name: str) -> dict[str, Any]:
    problems = []
    for i, p in enumerate(bound.problems):
        entry = problem_entry(i, p, bound, "HEAD", parser_name)
        for key in _MEGATRON_ONLY:
            entry.pop(key, None)
        problems.append(entry)
    return {"problems": problems, "unknown": {}}
