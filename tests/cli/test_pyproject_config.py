"""`[tool.megalint]` in a pyproject.toml: a file that does not parse is an error with
file:line:col and exit status 2, as a malformed megalint.toml is; one that parses and has no
megalint table is passed over for the next configuration above it."""

from __future__ import annotations

import pytest

from .conftest import CLEAN

FP8 = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The table header is cut short: the megalint table is there, unreadable.
        ("[tool.megalint\nx=1\n", "1:15: invalid TOML: Expected ']' at the end of a table declaration"),
        # No megalint table can be seen, and none can be ruled out either: reported, as ruff does.
        ('[project\nname = "x"\n', "1:9: invalid TOML: Expected ']' at the end of a table declaration"),
        ('[project]\nname = "x\n', "2:10: invalid TOML: Illegal character '\\n'"),
        ("[tool.megalint]\nselect = ML1\n", "2:10: invalid TOML: Invalid value"),
        # Parsed: the same checks as megalint.toml's.
        ('[tool.megalint]\nselectt = ["ML1"]\n', "2:1: unknown key `selectt` (did you mean `select`?)"),
        ('[project]\nname = "x"\n[tool.megalint]\nselect = "ML1"\n', "4:1: `select` must be an array, not a string"),
    ],
)
def test_malformed_pyproject_is_an_error(megalint, scripts, text, message):
    scripts("megalint.toml", 'gpu = "a100"\n')  # above it: never reached past the broken file
    cfg = scripts("sub/pyproject.toml", text)
    p = scripts("sub/job.sh", CLEAN)
    r = megalint(str(p))
    assert (r.rc, r.err) == (2, f"megalint: {cfg}:{message}\n")
    assert "All checks passed" not in r.out


def test_pyproject_that_is_not_utf8_is_an_error(megalint, scripts):
    cfg = scripts("pyproject.toml", b'[project]\nname = "\xff"\n')
    p = scripts("job.sh", CLEAN)
    r = megalint(str(p))
    assert (r.rc, r.err) == (2, f"megalint: {cfg}:2:1: invalid TOML: not UTF-8 text\n")


@pytest.mark.parametrize(
    "text",
    [
        '[project]\nname = "x"\n',
        # A `megalint` key that is not tool.megalint: no table for us, and no traceback.
        "tool = 1\n[x]\nmegalint = 2\n",
        "[tool.ruff]\nline-length = 100\n",
    ],
)
def test_pyproject_without_a_megalint_table_is_passed_over(megalint, scripts, text):
    scripts("megalint.toml", 'gpu = "a100"\n')
    scripts("sub/pyproject.toml", text)
    p = scripts("sub/job.sh", FP8)
    r = megalint("--output-format", "concise", str(p))
    assert r.rc == 1 and "ML201" in r.out, r.out + r.err  # the a100 of the megalint.toml above
