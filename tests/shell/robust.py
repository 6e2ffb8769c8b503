"""Running the shell front end on hostile input: a result or a clean InputError, in bounded time."""

from __future__ import annotations

import time

from megalint.errors import InputError
from megalint.launch.extract import extract_launches
from megalint.shell.analyze import analyze_file, analyze_text

# Per input, on the slow end of a laptop core. The evaluator's budgets are what bound it;
# this only catches a budget that stopped working.
TIME_LIMIT_S = 5.0


def run_text(text: str, path: str = "gen.sh", limit: float = TIME_LIMIT_S, **kw):
    return _run(analyze_text, text, f"{len(text)} characters", path, limit, kw)


def run_bytes(data: bytes, path: str = "gen.sh", limit: float = TIME_LIMIT_S, **kw):
    return _run(analyze_file, data, f"{len(data)} bytes", path, limit, kw)


def _run(analyze, content, size: str, path: str, limit: float, kw: dict):
    t0 = time.perf_counter()
    try:
        facts = analyze(path, content, **kw)
        launches = extract_launches(facts)
    except InputError as exc:
        assert str(exc)
        return None, None
    took = time.perf_counter() - t0
    assert took < limit, f"{took:.2f} s for {size}"
    _consistent(facts, launches)
    return facts, launches


def _consistent(facts, launches):
    """What the rest of megalint relies on: spans inside their file, words that render."""
    assert facts.paths, "every script has at least one path"
    for launch in launches:
        for w in launch.command:
            w.partial_text  # noqa: B018 - must not raise
            if w.span is not None and w.span.path in facts.sources:
                src = facts.sources[w.span.path]
                assert 0 <= w.span.start <= w.span.end <= len(src.text)
    for f in facts.findings:
        src = facts.sources.get(f.span.path)
        if src is not None:
            assert 0 <= f.span.start <= f.span.end <= len(src.text)
