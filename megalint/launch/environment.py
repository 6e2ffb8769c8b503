"""Whether the environment a launch gets can be listed in full, from what the evaluator saw."""

from __future__ import annotations

from megalint.shell.facts import ScriptFacts, UnreadReason

# Commands that load an environment: (command, subcommand), None for any subcommand.
_ENV_LOADERS = {
    ("module", "load"),
    ("module", "add"),
    ("module", "restore"),
    ("module", "swap"),
    ("ml", None),
    ("spack", "load"),
    ("conda", "activate"),
}


def environment_opaque(facts: ScriptFacts) -> str | None:
    """Why the environment a launch gets cannot be listed in full, or None when it can.

    A sourced file that was not read, or an environment module, may export anything: a rule
    that asks whether a variable is *absent* cannot be decided then."""
    for unread in facts.unread_sources:
        # A file already being sourced is read where it is sourced; one nested past the limit
        # was read up to the limit.
        if unread.reason not in (UnreadReason.CYCLE, UnreadReason.TOO_DEEP):
            return unread.note
    for path in facts.paths:
        for rec in path.commands:
            t = [w.text for w in rec.words[:2]]
            if t and ((t[0], t[1] if len(t) > 1 else None) in _ENV_LOADERS or (t[0], None) in _ENV_LOADERS):
                return (
                    f"`{' '.join(x for x in t if x)}` at {rec.span.path}:{rec.span.start_line} may export "
                    "variables that are not known"
                )
    return None
