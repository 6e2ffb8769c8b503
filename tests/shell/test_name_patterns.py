"""The names a script's text gives values to, declares or computes (shell/names.py) are found by
patterns written for speed: each starts with text the engine finds quickly (a command, an `=`
read from the end). They find what one pattern written plainly finds, here compared on every
fixture and on generated text."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from megalint.shell import names
from megalint.source import SourceFile

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "fixtures").rglob("*.sh"))

# The plain patterns: what each name pattern means.
GIVES = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]\n]*\])?\+?=")
DECLARES = re.compile(
    r"(?:^|[\s;&|(`])(?:export|declare|local|readonly|typeset|read|getopts|mapfile|readarray|unset|printf\s+-v|for)"
    r"\s([^\n;|&#)]*)"
)
DYNAMIC = re.compile(
    r"(?:^|[\s;&|(`])(?:(?:export|declare|local|readonly|typeset)(?:\s+-\w+)*|printf\s+-v|read(?:\s+-\w+)*)"
    r"\s+\"?\$"
    r"|\beval\b[^\n]*\$\{?\w+\}?\\?\"?\+?=",
    re.M,
)


def _same(text: str) -> None:
    assert {n[::-1] for n in names._GIVES_REVERSED.findall(text[::-1])} == set(GIVES.findall(text)), text
    assert names._declared(text) == DECLARES.findall(text), text
    assert any(name in text and p.search(text) for name, p in names._DYNAMIC) == (DYNAMIC.search(text) is not None), (
        text
    )
    dynamic = names.script_names([SourceFile("t.sh", text)]).dynamic
    assert dynamic == (DYNAMIC.search(text) is not None), text


def test_the_fixtures_give_what_the_plain_patterns_find() -> None:
    assert FIXTURES
    for path in FIXTURES:
        _same(path.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.parametrize(
    "text",
    [
        "X=1",
        "a[b=c]=2 x=a[b]=3 9a=1 $X=1 é_=1 _=1 A+=1",
        "export A B; export C\nreadonly D|read -r E&local F # G",
        "readarray -t L\nreadonly R\nfor i in a b; do unset i; done",
        'printf -v "$out" x\nexport "$K"="$V"\neval "$k=$v"',
        "xexport A\n(export B)\n`read C`",
        "evaluate $x=1 eval_x $y=",
    ],
)
def test_shell_text_gives_what_the_plain_patterns_find(text: str) -> None:
    _same(text)


def test_generated_text_gives_what_the_plain_patterns_find() -> None:
    rng = random.Random(16)
    parts = "export ,declare ,read ,readonly ,readarray ,for ,printf -v ,unset ,eval ,-r ,local ,".split(",")
    parts += list(";&|(`)# \n\t\"'=+[]$") + ["a", "b9", "_x", "$x", "${y}", "é", "x="]
    for _ in range(20_000):
        _same("".join(rng.choice(parts) for _ in range(rng.randint(0, 12))))
