"""One script of a run: the pipeline's findings after per-file ignores, inline suppressions and
severity overrides, and the fixes applied to its text or shown as a diff."""

from __future__ import annotations

import re
from dataclasses import replace

from megalint import lazy_re, probes
from megalint.checking.outcome import FixMode, Outcome
from megalint.checking.setup import Setup
from megalint.diagnostics import Applicability, Diagnostic
from megalint.fix import applied_by_fix, apply_fixes, bash_parses, is_applicable, unified_diff
from megalint.pipeline import FileResult, lint_text
from megalint.selection import matches, severity_for
from megalint.source import Span
from megalint.suppress import Directive, apply_suppressions, parse_directives

_MENTIONS_MEGALINT = lazy_re.compile("megalint", re.IGNORECASE)


def check_text(text: str, shown: str, setup: Setup, fixes: FixMode) -> Outcome:
    """Check the script `text`, reported as `shown`, and apply or show its fixes; the outcome
    keeps what the check asked the file system (probes.py), for the caches to see unchanged."""
    with probes.recorded() as asked:
        outcome = _check_text(text, shown, setup, fixes)
    outcome.probes = asked
    return outcome


def _check_text(text: str, shown: str, setup: Setup, fixes: FixMode) -> Outcome:
    result = lint_text(shown, text, setup.settings)
    diags = finalise(result, text, setup, shown)
    # The GPU given to megalint lost to the script's own: said on the side, as it is about the run.
    # Asked only when one was given: the choice reads the GPU table, which a script without a
    # launch needs for nothing else.
    lost = result.gpu.option_note if setup.settings.gpu is not None else None
    gpu_notes = [f"{shown}: {lost}"] if lost else []
    rule_errors = rule_failures(result, shown)
    if not fixes.active:
        if any(is_applicable(d, True) for d in diags) and not bash_parses(text):
            diags = shown_only(diags)
        else:
            diags = applied_only(text, diags, setup, shown, fixes.unsafe)
        return Outcome(diags, dict(result.sources), notes=gpu_notes, code=result.code, rule_errors=rule_errors)
    last = [result]

    def relint(new_text: str) -> list[Diagnostic]:
        last[0] = lint_text(shown, new_text, setup.settings)
        return finalise(last[0], new_text, setup, shown)

    res = apply_fixes(text, diags, unsafe=fixes.unsafe, reparse_ok=bash_parses, relint=relint, path=shown)
    outcome = Outcome(
        shown_only(res.remaining) if res.refused else list(res.remaining),
        dict(last[0].sources),
        res.fixed_count,
        notes=gpu_notes,
        code=last[0].code,
        rule_errors=rule_errors,
    )
    if res.refused:
        outcome.notes.append(f"{shown}: no fix applied: {res.refused}")
    if res.rejected:
        codes = ", ".join(sorted({d.code for d in res.rejected}))
        outcome.notes.append(
            f"{shown}: {len(res.rejected)} fix(es) not applied ({codes}): the script would no longer parse"
        )
    if not res.converged:
        outcome.notes.append(f"{shown}: fixes did not converge; the file may still have fixable findings")
    if fixes.diff:
        outcome.diff = unified_diff(text, res.text, shown)
    else:
        outcome.fixed_text, outcome.changed = res.text, res.changed
    return outcome


def applied_only(text: str, diags: list[Diagnostic], setup: Setup, shown: str, unsafe: bool) -> list[Diagnostic]:
    """The findings with a fix that --fix would not apply (another fix it makes first leaves it
    nothing to do) turned into findings whose fix is only shown, so that `[*]` and "N fixable"
    count what --fix applies."""

    def relint(new_text: str) -> list[Diagnostic]:
        return finalise(lint_text(shown, new_text, setup.settings), new_text, setup, shown)

    applicable = [d for d in diags if is_applicable(d, unsafe, shown)]
    applied = {id(d) for d in applied_by_fix(text, diags, unsafe, bash_parses, relint, shown)}
    if len(applied) == len(applicable):
        return diags
    return [d if id(d) in applied or not is_applicable(d, unsafe, shown) else _shown_only(d) for d in diags]


def shown_only(diags: list[Diagnostic]) -> list[Diagnostic]:
    """The findings of a script that does not parse, whose fixes --fix refuses to apply: each fix
    still shown, as one not applied automatically, so that no `[*]` or "N fixable" promises it."""
    return [_shown_only(d) for d in diags]


def _shown_only(d: Diagnostic) -> Diagnostic:
    if d.fix is None or not is_applicable(d, True):
        return d
    return replace(d, fix=replace(d.fix, applicability=Applicability.DISPLAY_ONLY))


def rule_failures(result: FileResult, shown: str) -> list[str]:
    """One line per rule that failed on the script (once, however many launches it failed on)."""
    lines: dict[str, None] = {}
    for failure in result.evaluation.failures:
        rule = failure.rule
        lines[
            f"{rule.origin}: rule {rule.code} [{rule.name}] failed on {shown} and was not applied: {failure.message}"
        ] = None
    return list(lines)


def finalise(result: FileResult, text: str, setup: Setup, shown: str) -> list[Diagnostic]:
    """The pipeline's findings after per-file ignores, inline suppressions and severity overrides."""
    ignored = [c for spec, codes in setup.pfi if spec.match(shown) for c in codes]
    raw = [d for d in result.diagnostics if not _named(d, ignored)]
    enabled = [c for c in setup.codes_on if not any(matches(t, c, setup.known[c].name) for t in ignored)]
    undecided = {u.rule.code for u in result.evaluation.undecided}
    kept, own = apply_suppressions(
        raw, directives(result, text, shown), setup.known, enabled=enabled, undecided=undecided
    )
    own = [d for d in own if d.code in setup.codes_on and not _named(d, ignored)]
    out = []
    for d in kept + own:
        sev = severity_for(d.code, d.name, d.severity, setup.config.severity)
        out.append(replace(d, severity=sev) if sev != d.severity else d)
    return sorted(out, key=lambda d: d.sort_key())


def directives(result: FileResult, text: str, shown: str) -> list[Directive]:
    """The suppression comments of the script `text`, reported as `shown`, that the pipeline read."""
    # The pipeline's parse has the comments right where tree-sitter alone does not (after an
    # unfilled `<placeholder>`, which it rewrites before parsing).
    # A comment never owns the `\r` of a CRLF line end, which tree-sitter counts in it: a fix
    # that removes the comment must leave the line end alone.
    if not result.facts.comments or not _MENTIONS_MEGALINT.search(text):
        # Every directive is a comment naming megalint: none here, and parse_directives would
        # parse the whole script again (seconds for a file of megabytes) to find none.
        return []
    comments = []
    for _, span in result.facts.comments:
        if span.path != shown:
            continue
        if span.end > span.start and text[span.end - 1 : span.end] == "\r":
            span = Span(
                span.path, span.start_line, span.start_col, span.end_line, span.end_col - 1, span.start, span.end - 1
            )
        comments.append(span)
    return parse_directives(text, shown, comments=comments)


def _named(d: Diagnostic, selectors: list[str]) -> bool:
    return any(matches(s, d.code, d.name) for s in selectors)
