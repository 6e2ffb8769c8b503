"""Linting a script in-process, as the command does, for the tests of rules and of the pipeline.

The packaged rules load once per test process (about a quarter of a second each time), and every
test module lints through `lint` so that a change to the pipeline's settings is made in one place.
"""

from __future__ import annotations

from functools import cache

from megalint.engine import RuleSet, load_rules
from megalint.pipeline import FileResult, Settings, lint_text


@cache
def packaged_rules() -> RuleSet:
    """The rules megalint ships, loaded once."""
    return load_rules([])


def lint(
    text: str,
    version: str | None = None,
    gpu: str | None = None,
    *,
    path: str = "t.sh",
    memory: bool = True,
    assume: dict[str, str] | None = None,
    root_dir: str | None = None,
    rules: RuleSet | None = None,
) -> FileResult:
    settings = Settings(
        rules=packaged_rules() if rules is None else rules,
        megatron_version=version,
        gpu=gpu,
        assume=dict(assume or {}),
        root_dir=root_dir,
        with_memory=memory,
    )
    return lint_text(path, text, settings)


def codes(
    text: str, version: str | None = None, gpu: str | None = None, *, path: str = "t.sh", memory: bool = True
) -> list[str]:
    """The codes of the findings, in the order they are reported."""
    return [d.code for d in lint(text, version, gpu, path=path, memory=memory).diagnostics]
