"""The compiled dataclass methods the command line keeps between runs (megalint/classcode.py):
the same code as `dataclasses` compiles, read back by the next run, ignored when corrupt, and
never installed by megalint used as a library. Each case runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.startup.child import child_env

# The code of some of megalint's methods, and what classcode did in this process.
_PROBE = """
import dataclasses, json, sys
from megalint import classcode
if {install!r}:
    classcode.enable()
    classcode.install()
from megalint.diagnostics import Diagnostic
from megalint.shell.values import Segment
from megalint.source import Span
codes = {{
    name: getattr(cls, method).__code__.co_code.hex()
    for name, cls in (("Diagnostic", Diagnostic), ("Segment", Segment), ("Span", Span))
    for method in ("__init__", "__eq__", "__repr__")
}}
s = Segment("8", None)
out = {{
    "codes": codes,
    "compiled": classcode._added,
    "kept": len(classcode._codes),
    "made": sum(not isinstance(v, bytes) for v in classcode._codes.values()),
    "patched": "exec" in vars(dataclasses),
    "works": [s == Segment("8", None), repr(s)],
}}
classcode.save()
print(json.dumps(out))
"""


def _probe(cache: Path, *, install: bool = True, **env_extra: str) -> dict:
    env = child_env(cache, caching=True, **env_extra)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(install=install)], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout)


def _kept(cache: Path) -> list[Path]:
    return sorted(cache.glob("dataclass-codes-*.marshal"))


def test_kept_code_is_what_dataclasses_compiles_and_the_next_run_reads_it(tmp_path):
    cache = tmp_path / "cache"
    plain = _probe(cache, install=False)
    assert not plain["patched"] and _kept(cache) == []
    first = _probe(cache)
    assert first["patched"] and first["compiled"] and len(_kept(cache)) == 1
    second = _probe(cache)
    assert not second["compiled"], "the second run compiles nothing: every method comes from the file"
    assert second["kept"] == first["kept"]
    assert plain["codes"] == first["codes"] == second["codes"]
    assert plain["works"] == first["works"] == second["works"] == [True, plain["works"][1]]


def test_a_corrupt_file_is_ignored_and_written_again(tmp_path):
    cache = tmp_path / "cache"
    _probe(cache)
    (kept,) = _kept(cache)
    good = kept.read_bytes()
    for bad in (b"", b"\x00garbage", good[: len(good) // 2]):
        kept.write_bytes(bad)
        again = _probe(cache)
        assert again["compiled"] and again["works"][0]
        assert kept.read_bytes() == good


def test_no_cache_variable_leaves_dataclasses_alone(tmp_path):
    cache = tmp_path / "cache"
    got = _probe(cache, MEGALINT_NO_CACHE="1")
    assert not got["patched"] and _kept(cache) == []


def test_an_unwritable_folder_costs_nothing_but_the_compiling(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    got = _probe(blocker / "cache")
    assert got["patched"] and got["compiled"] and got["works"][0]


def test_the_library_does_not_install_it(tmp_path):
    (tmp_path / "clean.sh").write_text("#!/bin/bash\necho hello\n")
    probe = (
        "import dataclasses, sys\n"
        "from megalint.cli import main\n"
        "main(['--isolated', '--no-cache', 'clean.sh'])\n"
        "print('exec' in vars(dataclasses))\n"
    )
    env = child_env(tmp_path / "cache")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.stdout.strip().splitlines()[-1] == "False"
    assert _kept(tmp_path / "cache") == []


def test_the_command_keeps_it(tmp_path):
    (tmp_path / "clean.sh").write_text("#!/bin/bash\necho hello\n")
    env = child_env(tmp_path / "cache", caching=True)
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "megalint", "--isolated", "--no-cache", "clean.sh"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert (done.returncode, done.stdout) == (0, "All checks passed.\n")
        assert len(_kept(tmp_path / "cache")) == 1


def test_each_code_is_made_when_first_used_and_a_damaged_one_is_compiled_again(tmp_path):
    import marshal

    cache = tmp_path / "cache"
    first = _probe(cache)
    (kept,) = _kept(cache)
    # Another class's method, never used by the probe: kept as bytes, never made into code.
    held = marshal.loads(kept.read_bytes())
    held[b"\0" * 20] = marshal.dumps(compile("x = 1", "<string>", "exec"))
    damaged = next(iter(sorted(k for k in held if k != b"\0" * 20)))
    held[damaged] = b"\x00not code"
    kept.write_bytes(marshal.dumps(held))
    again = _probe(cache)
    assert again["works"] == first["works"] and again["codes"] == first["codes"]
    assert again["compiled"], "the damaged one is compiled again, and the file written again"
    assert again["made"] == first["made"] and again["kept"] == first["kept"] + 1
    assert marshal.loads(kept.read_bytes())[damaged] != b"\x00not code"


def test_a_file_of_the_earlier_shape_is_ignored(tmp_path):
    """Codes kept as code objects, not bytes: nothing of it is trusted, and the file is written again."""
    import marshal

    cache = tmp_path / "cache"
    _probe(cache)
    (kept,) = _kept(cache)
    kept.write_bytes(marshal.dumps({b"\1" * 20: compile("x = 1", "<string>", "exec")}))
    again = _probe(cache)
    assert again["compiled"] and again["works"][0]
    assert all(isinstance(v, bytes) for v in marshal.loads(kept.read_bytes()).values())


def test_each_build_reads_its_own_file_and_old_builds_files_are_removed(tmp_path):
    import marshal
    import os
    import time

    cache = tmp_path / "cache"
    first = _probe(cache)
    (mine,) = _kept(cache)
    prefix = mine.name[: mine.name.rindex("-") + 1]
    # Two other builds' files: one not written for eight days, one from yesterday (in use elsewhere).
    other = {b"\2" * 20: marshal.dumps(compile("x = 1", "<string>", "exec"))}
    old, recent = cache / f"{prefix}0000000000000000.marshal", cache / f"{prefix}1111111111111111.marshal"
    shared = cache / f"{prefix[:-1]}.marshal"  # the earlier shape: one file for every build
    for path, days in ((old, 8), (recent, 1), (shared, 30)):
        path.write_bytes(marshal.dumps(other))
        then = time.time() - days * 86_400
        os.utime(path, (then, then))
    again = _probe(cache)
    assert again["kept"] == first["kept"]  # its own methods only: the other builds' are not read
    assert not again["compiled"] and old.exists() and shared.exists()  # nothing written: nothing removed
    mine.unlink()
    third = _probe(cache)  # compiles its methods again, writes its file, removes the old build's
    assert third["compiled"] and third["codes"] == first["codes"]
    assert _kept(cache) == sorted([mine, recent])
