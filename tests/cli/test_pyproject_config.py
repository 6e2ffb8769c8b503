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


def test_a_valid_pyproject_is_read_once_and_an_edited_one_again(tmp_path, monkeypatch):
    from megalint import config

    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    data = b'[project]\nname = "x"\n'
    assert config._is_toml(data)
    read: list[bytes] = []
    monkeypatch.setattr(config, "_parses", lambda d: read.append(d) or True)
    assert config._is_toml(data) and read == []  # remembered by its bytes: not read again
    edited = data + b"[tool.ruff]\n"
    assert config._is_toml(edited) and read == [edited]


def test_an_invalid_pyproject_is_never_remembered(tmp_path, monkeypatch):
    from megalint import config

    monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    parses = config._parses
    read: list[bytes] = []
    monkeypatch.setattr(config, "_parses", lambda d: read.append(d) or parses(d))
    broken = b'[project\nname = "x"\n'
    assert not config._is_toml(broken) and not config._is_toml(broken)
    assert read == [broken, broken]


@pytest.mark.parametrize("setting", ["no-cache", "unwritable"])
def test_without_a_cache_folder_a_pyproject_is_read_each_time(tmp_path, monkeypatch, setting):
    from megalint import config

    if setting == "no-cache":
        monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("MEGALINT_NO_CACHE", "1")
    else:
        (tmp_path / "file").write_text("")
        monkeypatch.setenv("MEGALINT_CACHE_DIR", str(tmp_path / "file"))  # a file: no folder in it
        monkeypatch.delenv("MEGALINT_NO_CACHE", raising=False)
    parses = config._parses
    read: list[bytes] = []
    monkeypatch.setattr(config, "_parses", lambda d: read.append(d) or parses(d))
    data = b'[project]\nname = "x"\n'
    assert config._is_toml(data) and config._is_toml(data)
    assert read == [data, data]
