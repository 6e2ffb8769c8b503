"""Megatron flag values that read a variable nothing sets: bash makes the value empty, so the flag
takes the next option as its value or is refused. Reported as shell findings at the read, with
the assignment the author most likely meant (`$TOKENIZER_PATH` read, `TOKENIZER_MODEL` set).

Only where the whole script was read (no `source` left unread) and only for a launch: a file of
arguments without one is sourced by a launcher whose variables are not at hand.
"""

from __future__ import annotations

from collections.abc import Iterable

from megalint import lazy_re
from megalint.megatron.bound import BoundArgs
from megalint.shell.facts import ScriptFacts, ShellFinding, ShellFindingKind
from megalint.shell.names import NameFacts, script_names
from megalint.source import Span

_PLAIN_READ = lazy_re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
_CLOSE = 0.6  # difflib's ratio from which a name assigned in the script is offered instead


def unset_variable_findings(facts: ScriptFacts, bound: Iterable[BoundArgs]) -> list[ShellFinding]:
    if facts.unread_sources:
        return []
    reads = list(_unknown_reads(facts, bound))
    if not reads:
        return []
    names = script_names(facts.sources.values())
    if names.dynamic:
        return []  # `export "$KEY"="$VALUE"`: any name may be set
    out: list[ShellFinding] = []
    # The facts may be linted again (after a fix): a read reported already is not reported twice.
    seen = {f.span for f in facts.findings if f.kind == ShellFindingKind.UNSET_VARIABLE}
    for option, span, name in reads:
        if span in seen or names.is_meant(name):
            continue
        seen.add(span)
        out.append(_finding(option, span, name, names))
    return out


def _unknown_reads(facts: ScriptFacts, bound: Iterable[BoundArgs]) -> Iterable[tuple[str, Span, str]]:
    """(option, place, name) of each value part of a Megatron flag that is a plain `$NAME` read
    whose value is not known."""
    for args in bound:
        for _dest, arg in args.own_args():
            for occ in arg.occurrences:
                # The one value of a flag that takes one: after `--x a b`'s list (`nargs='+'`) a
                # variable may stand for more options, which an unset one leaves out harmlessly.
                if not occ.spec.takes_value or occ.spec.nargs not in (None, 1) or len(occ.values) != 1:
                    continue
                for word in occ.values:
                    for seg in word.segments:
                        if seg.text is not None or seg.site is None:
                            continue
                        src = facts.sources.get(seg.site.path)
                        if src is None:
                            continue
                        m = _PLAIN_READ.fullmatch(src.text[seg.site.start : seg.site.end])
                        if m is not None:
                            yield occ.option, seg.site, m.group(1) or m.group(2)


def _finding(option: str, span: Span, name: str, names: NameFacts) -> ShellFinding:
    meant = _likely_meant(name, option, names)
    hint = ""
    data: dict[str, object] = {"name": name, "option": option}
    if meant is not None:
        at = names.assigned[meant]
        hint = f"; did you mean `{meant}`, assigned at {at.path}:{at.line}?"
        data["suggestion"] = meant
    return ShellFinding(
        ShellFindingKind.UNSET_VARIABLE,
        span,
        f"`${name}` is never set: not in the script, not in a file it sources, and not by the shell, "
        f"the scheduler or the launcher, so `{option}` is given an empty value (unquoted, the word "
        f"disappears and the flag takes the next option as its value){hint}",
        data,
    )


def _likely_meant(name: str, option: str, names: NameFacts) -> str | None:
    """The assigned name the read most likely meant: one spelt alike (`TOKENIZER_MODEL` for
    `TOKENIZER_PATH`), or one the script sets and never reads whose words hold the flag's
    (`CKPT_LOAD_DIR` for `--load $CHECKPOINT`). Of several, the one never read (set for this
    use and then misspelt here), then the closest."""
    flag_words = set(option.lstrip("-").lower().replace("_", "-").split("-"))
    best: tuple[float, str] | None = None
    for other in names.assigned:
        if other == name:
            continue
        import difflib  # only for a variable nothing sets

        ratio = difflib.SequenceMatcher(None, name.lower(), other.lower()).ratio()
        unread = other not in names.read
        holds_flag = flag_words <= set(other.lower().split("_"))
        if ratio < _CLOSE and not (unread and holds_flag):
            continue
        score = ratio + 0.3 * unread + 0.3 * holds_flag
        if best is None or score > best[0]:
            best = (score, other)
    return best[1] if best is not None else None
