"""The binding problems as rules read them, in the `problems` list of a launch's context."""

from __future__ import annotations

from megalint.megatron.bound import BoundArgs, Problem, ProblemKind
from megalint.megatron.plain import plain
from megalint.megatron.releases import RENAMED, choice_history, release_history
from megalint.rulecontext.expansions import cause, cause_keys
from megalint.shell.facts import ScriptFacts
from megalint.shell.values import Unknown

SHOWN_PLACES = 8  # earlier places a message names; the rest are counted


def problem_entry(
    i: int, p: Problem, bound: BoundArgs, version: str, parser: str | None = None, facts: ScriptFacts | None = None
) -> dict[str, object]:
    """One binding problem as rules read it. Keys that only some problems have are left out
    when they do not apply, so that a rule (or a fix) reading them is undecided there:
    `best` (the suggestion to apply: the hyphenated spelling of the flag, or the only one), `choices` (of an invalid choice),
    `earlier` (line:column of the occurrences a repeated flag overrides), `added_in` /
    `removed_in` / `last_in` (the release that added or removed a flag of another version),
    `choice_added_in` / `choice_last_in` / `choice_removed_in` (the releases that accept an
    invalid choice),
    `same_value` (of a repeated flag: whether every occurrence stores the same value, a
    switch given twice included; absent when a value is not known), `expansions` / `expanded` / `split_element` / `split_fields` / `quoted_piece` / `variable` (the expansions on the launch line
    that made the problem, from `facts`: rulecontext/expansions.py)."""
    out: dict[str, object] = {
        "index": i,
        "kind": p.kind.value,
        "message": p.message,
        "flag": p.option,
        "dest": p.dest,
        "suggestions": list(p.suggestions),
        "value": p.value,
        "fatal": p.fatal,
        "history": p.history.describe(version) if p.history is not None else None,
        # the parser that reads the flags, as a message names it
        "parser": parser if parser is not None else f"Megatron-LM {version}",
    }
    if p.suggestions and p.option is not None:
        # The hyphenated spelling of an underscore or capitalised flag is the one meant; other
        # close spellings are guesses, offered as a fix only when there is a single one.
        norm = "--" + p.option.split("=", 1)[0].lstrip("-").replace("_", "-").lower()
        if p.suggestions[0] == norm or len(p.suggestions) == 1:
            out["best"] = p.suggestions[0]
    if p.kind is ProblemKind.INVALID_CHOICE and p.option is not None and bound.catalogue is not None:
        spec = bound.catalogue.lookup(p.option)
        if spec is not None and spec.choices is not None:
            out["choices"] = [str(plain(c)) for c in spec.choices]
        if p.value is not None:
            out.update(choice_history(p.option, p.value, version))
    if p.related:
        earlier = [f"{s.start_line}:{s.start_col}" for s in p.related]
        out["earlier"] = earlier
        # What a message names of them: a flag given ten thousand times is not a message of
        # ten thousand places.
        shown = earlier[:SHOWN_PLACES]
        rest = len(p.related) - len(shown)
        out["earlier_text"] = ", ".join(shown) + (f" and {rest:,} more" if rest else "")
    if p.kind is ProblemKind.REPEATED_FLAG and p.dest is not None:
        same = _same_value(bound, p.dest)
        if same is not None:
            out["same_value"] = same
    found = cause(p, facts) if facts is not None else None
    if found is not None:
        out.update(cause_keys(found))
    if p.kind is ProblemKind.OTHER_VERSION and p.option is not None:
        out.update(release_history(p.option, version))
    if p.option is not None and p.kind in (ProblemKind.OTHER_VERSION, ProblemKind.UNKNOWN_FLAG):
        renamed = RENAMED.get(p.option)
        if renamed is not None:
            out["renamed_to"], out["renamed_how"] = renamed[0], renamed[1]
            if renamed[2] is not None:
                out["renamed_in"] = renamed[2]
        elif bound.catalogue is not None:
            # A newer spelling used on an older Megatron that still has the old one.
            for old, (new, _how, _when) in RENAMED.items():
                if new == p.option and bound.catalogue.lookup(old) is not None:
                    out["older_name"] = old
                    break
    return out


def _same_value(bound: BoundArgs, dest: str) -> bool | None:
    """Whether every occurrence of a repeated flag stores the same value (None: one is unknown)."""
    arg = bound.get(dest)
    if arg is None or not arg.occurrences:
        return None
    values = [plain(o.value) for o in arg.occurrences]
    if any(isinstance(v, Unknown) for v in values):
        return None
    return all(v == values[0] for v in values)
