"""Patterns compiled when first used (megalint/lazy_re.py) answer as `re.compile`'s do, and a
check compiles only the patterns it uses."""

from __future__ import annotations

import copy
import json
import pickle
import re
import subprocess
import sys

import pytest

from megalint import lazy_re
from tests.startup.child import child_env

CASES = [
    (r"(?P<name>[A-Za-z_]\w*)=(\S*)", 0, "A=1 b=2 --x=3"),
    (r"^\s*#.*$", re.M, "x=1\n  # note\ny=2\n# end"),
    (rb"\$\{?([A-Z]+)", 0, b"echo $HOME ${PATH} $x"),
    (r"[a-z]+", re.I, "Ab CD ef"),
]


@pytest.mark.parametrize(("pattern", "flags", "text"), CASES)
def test_a_lazy_pattern_answers_as_a_compiled_one(pattern, flags, text):
    lazy, real = lazy_re.compile(pattern, flags), re.compile(pattern, flags)
    assert lazy.pattern == real.pattern
    for name in ("match", "fullmatch", "search"):
        a, b = getattr(lazy, name)(text), getattr(real, name)(text)
        assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.split(text) == real.split(text)
    empty = text[:0]
    assert lazy.sub(empty, text) == real.sub(empty, text) and lazy.subn(empty, text) == real.subn(empty, text)
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (real.flags, real.groups, real.groupindex)


def test_compiled_on_first_use_only():
    lazy = lazy_re.compile(r"a+")
    assert lazy.pattern == "a+" and "match" not in vars(lazy)  # its text needs no compiling
    assert lazy.search("baa").span() == (1, 3)
    assert "match" in vars(lazy)  # compiled once, its methods kept


def test_copies_and_pickles_are_patterns_too():
    lazy = lazy_re.compile(r"x(\d)", re.I)
    lazy.match("x1")  # compiled: what it keeps must not travel
    for other in (pickle.loads(pickle.dumps(lazy)), copy.copy(lazy), copy.deepcopy(lazy)):
        assert other.match("X7").group(1) == "7"


_PROBE = """
import gc, json, sys
from megalint.cli import main
from megalint.lazy_re import _LazyPattern
sys.stdout = open({out!r}, "w")
main(sys.argv[1:])
sys.stdout = sys.__stdout__
made = [p for p in gc.get_objects() if isinstance(p, _LazyPattern)]
print(json.dumps([len(made), sum("match" in vars(p) for p in made)]))
"""


def test_a_check_of_a_small_script_compiles_few_patterns(tmp_path):
    (tmp_path / "clean.sh").write_text("#!/bin/bash\nset -euo pipefail\necho hello\n")
    probe = _PROBE.format(out=str(tmp_path / "out.txt"))
    run = lambda: subprocess.run(  # noqa: E731
        [sys.executable, "-c", probe, "--isolated", "--no-cache", "--jobs", "1", "clean.sh"],
        capture_output=True,
        text=True,
        env=child_env(tmp_path / "cache"),
        cwd=tmp_path,
        check=True,
    )
    run()  # the first run of a cache folder reads the packaged rules: the second is the usual run
    res = run()
    made, compiled = json.loads(res.stdout.splitlines()[-1])
    assert made > 50 and compiled < made // 4, (made, compiled)
