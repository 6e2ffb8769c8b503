"""Which rules run on which target: the script as a whole, each launch of Megatron-LM, and
each launch of a Megatron fork.

Script-level rules are those of the `shell` category: they read the shell findings, which
belong to the script and not to one launch, and run once per file.
"""

from __future__ import annotations

from dataclasses import dataclass

from megalint.engine import Rule, RuleSet

SCRIPT_CATEGORY = "shell"

# Rules about the launch itself (its world size, GPU, network, memory), which hold for the
# Megatron forks too; every other rule encodes a check of Megatron-LM's own argument code.
FORK_NEUTRAL_RULES = frozenset(
    {
        "world-size-divisibility",
        "fp8-requires-hopper",
        "overlap-param-gather-on-volta",
        "missing-nccl-ib-timeout",
        "predicted-oom",
        "low-memory-headroom",
    }
)


def is_script_rule(rule: Rule) -> bool:
    """Whether the rule runs once per file, over the script's shell findings."""
    return rule.category == SCRIPT_CATEGORY


@dataclass(frozen=True)
class RuleScopes:
    script: RuleSet  # once per file, when the shell front end found something
    launch: RuleSet  # once per launch of Megatron-LM
    fork: RuleSet  # once per launch of a Megatron fork


def by_scope(rules: RuleSet) -> RuleScopes:
    launch = RuleSet([r for r in rules if not is_script_rule(r)])
    return RuleScopes(
        script=RuleSet([r for r in rules if is_script_rule(r)]),
        launch=launch,
        fork=RuleSet([r for r in launch if r.name in FORK_NEUTRAL_RULES]),
    )
