"""`megalint catalogue --from` on a tree built to break it: each ends in one message and exit
status 2, under a memory limit and a timeout (libcst's native parser, given these, crashes the
process or takes gigabytes)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from megalint.megatron.extract.bounds import MAX_DEPTH, SourceTooComplex, check_source
from tests.hostile.limited import megalint

HEAD = (
    "import argparse\n\n\ndef parse_args():\n"
    "    parser = argparse.ArgumentParser(allow_abbrev=False)\n"
    "    parser.add_argument('--num-layers', type=int)\n"
)


def _tree(root: Path, default: str) -> Path:
    args = root / "megatron" / "training" / "arguments.py"
    args.parent.mkdir(parents=True)
    args.write_text(
        HEAD + f"    parser.add_argument('--x', type=int, default={default})\n    return parser.parse_args()\n"
    )
    return root


@pytest.mark.parametrize(
    ("default", "said"),
    [
        ("(" * 10_000 + "1" + ")" * 10_000, "7:249: cannot be parsed: too many nested parentheses"),
        ("9" * 5_000, "7:1: cannot be parsed: Exceeds the limit (4300 digits)"),
        ("-" * 2_000 + "1", f"nested more than {MAX_DEPTH} levels deep"),
        ("not " * 20_000 + "1", "nested too deeply for Python's own parser"),
        ("lambda a=" * 2_000 + "1", "nested too deeply for Python's own parser"),
        ("1 + " * 100_000 + "1", "nested too deeply for Python's own parser"),
        ("1 + " * 300 + "1", f"nested more than {MAX_DEPTH} levels deep"),
    ],
    ids=["parentheses", "long-int", "unary", "not", "nested-defaults", "long-sum", "sum"],
)
def test_hostile_source_is_refused_before_libcst(tmp_path: Path, default: str, said: str) -> None:
    root = _tree(tmp_path / "mlm", default)
    ran = megalint("catalogue", "--from", root, "-o", tmp_path / "c.json", cwd=tmp_path, timeout=60)
    assert ran.rc == 2, ran.err
    assert ran.err.startswith("megalint catalogue: error: ") and "megatron/training/arguments.py: not read: " in ran.err
    assert said in ran.err


def test_a_zip_bomb_wheel_is_read_up_to_the_cap(tmp_path: Path) -> None:
    wheel = tmp_path / "megatron_core-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("megatron/training/arguments.py", "w", force_zip64=True) as member:
            member.write(HEAD.encode())
            block = b"#" * (1 << 20)
            for _ in range(1_500):  # 1.5 GB of comment in a wheel of 1.5 MB
                member.write(block)
    assert wheel.stat().st_size < 3 << 20
    ran = megalint("catalogue", "--from", wheel, "-o", tmp_path / "c.json", cwd=tmp_path, timeout=60)
    assert ran.rc == 2
    assert "megatron/training/arguments.py: larger than 4,194,304 bytes: not a source file of Megatron-LM" in ran.err


def test_a_fifo_in_the_tree_is_not_read(tmp_path: Path) -> None:
    import os

    root = _tree(tmp_path / "mlm", "1")
    args = root / "megatron" / "training" / "arguments.py"
    args.write_text(HEAD + "    from megatron.training import extra\n    return parser.parse_args()\n")
    os.mkfifo(root / "megatron" / "training" / "extra.py")
    ran = megalint("catalogue", "--from", root, "-o", tmp_path / "c.json", cwd=tmp_path, timeout=60)
    assert ran.rc in (0, 2) and "Traceback" not in ran.err and "internal error" not in ran.err


def test_ordinary_source_passes_the_bounds() -> None:
    check_source(HEAD + "    x = [[(1, 2)], {'a': (3,)}]\n    return parser.parse_args()\n")
    with pytest.raises(SourceTooComplex, match="longer than"):
        check_source("#" * (2 << 20))
