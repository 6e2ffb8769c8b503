"""parse -> headers -> evaluate: a script file into `ScriptFacts`."""

from __future__ import annotations

import os

from megalint.shell.facts import ScriptFacts
from megalint.shell.hazards import find_hazards
from megalint.shell.headers import implied_environment, read_headers
from megalint.shell.interp import facts_from_states, interpret
from megalint.shell.parse import ParsedScript, parse_file, parse_text
from megalint.source import Span


def analyze_parsed(
    ps: ParsedScript,
    root_dir: str | None = None,
    assume: dict[str, str] | None = None,
    follow_outside_root: bool = False,
    skip_unread: bool = True,
) -> ScriptFacts:
    headers = read_headers(ps.source)
    ev, states = interpret(
        ps,
        root_dir=root_dir or os.path.dirname(os.path.abspath(ps.source.path)),
        assume=assume,
        follow_outside_root=follow_outside_root,
        skip_unread=skip_unread,
        header_env={k: v for k, v in implied_environment(headers).items() if k not in (assume or {})},
    )
    findings = find_hazards(ps) + ev.findings
    findings.sort(key=lambda f: (f.span.path, f.span.start))
    comments = _comments(ps)
    return facts_from_states(ev, ps, states, headers, findings, comments)


def analyze_text(
    path: str,
    text: str,
    *,
    root_dir: str | None = None,
    assume: dict[str, str] | None = None,
    follow_outside_root: bool = False,
    skip_unread: bool = True,
) -> ScriptFacts:
    return analyze_parsed(
        parse_text(path, text),
        root_dir=root_dir,
        assume=assume,
        follow_outside_root=follow_outside_root,
        skip_unread=skip_unread,
    )


def analyze_file(
    path: str,
    data: bytes | None = None,
    *,
    root_dir: str | None = None,
    assume: dict[str, str] | None = None,
    follow_outside_root: bool = False,
    skip_unread: bool = True,
) -> ScriptFacts:
    if data is None:
        with open(path, "rb") as fh:
            data = fh.read()
    return analyze_parsed(
        parse_file(path, data),
        root_dir=root_dir,
        assume=assume,
        follow_outside_root=follow_outside_root,
        skip_unread=skip_unread,
    )


def _comments(ps: ParsedScript) -> list[tuple[str, Span]]:
    out = [(ps.text(n), ps.span(n)) for n in ps.syntax("comment")]
    out.sort(key=lambda c: c[1].start)
    return out
