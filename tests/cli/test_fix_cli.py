"""--fix, --diff and --unsafe-fixes end to end."""

from __future__ import annotations

import subprocess

from .conftest import FIXTURES

# ML012: a continuation backslash followed by blanks (safe fix); ML201: fp8 on an A100 (unsafe fix).
TRAILING = "torchrun --nproc_per_node 8 pretrain_gpt.py \\  \n    --num-layers 2\n"
FIXED = "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n    --num-layers 2\n"
FP8 = "#SBATCH --constraint=a100\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n"


def test_fix_rewrites_the_file(megalint, scripts):
    p = scripts("job.sh", TRAILING)
    r = megalint("--isolated", "--fix", "--output-format", "concise", str(p))
    assert p.read_text() == FIXED
    assert r.rc == 0 and "All checks passed." in r.out
    assert r.err == "megalint: fixed 1 finding(s)\n"


def test_fix_preserves_crlf_and_bom(megalint, scripts):
    # The unused suppression's fix removes the comment; every other byte stays.
    text = "TP=2  # megalint: ignore[ML014]\r\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2\r\n"
    p = scripts("job.sh", ("\ufeff" + text).encode("utf-8"))
    r = megalint("--isolated", "--fix", str(p))
    assert p.read_bytes() == ("\ufeff" + text.replace("  # megalint: ignore[ML014]", "")).encode("utf-8")
    assert r.rc == 0


def test_unsafe_fixes_need_the_option(megalint, scripts):
    p = scripts("job.sh", FP8)
    r = megalint("--isolated", "--fix", "--output-format", "concise", str(p))
    assert p.read_text() == FP8 and r.rc == 1 and "ML201" in r.out
    r = megalint("--isolated", "--fix", "--unsafe-fixes", "--output-format", "concise", str(p))
    assert p.read_text() == FP8.replace("--fp8-format hybrid", "--bf16")
    assert r.rc == 0


def test_diff_writes_nothing(megalint, scripts):
    p = scripts("job.sh", TRAILING)
    r = megalint("--isolated", "--diff", str(p))
    assert p.read_text() == TRAILING
    assert r.rc == 1
    assert r.out == (
        f"--- a/{p}\n+++ b/{p}\n@@ -1,2 +1,2 @@\n"
        "-torchrun --nproc_per_node 8 pretrain_gpt.py \\  \n"
        "+torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
        "     --num-layers 2\n"
    )
    assert r.err == "megalint: would fix 1 finding(s)\n"


def test_diff_applies_with_patch(megalint, scripts, tmp_path):
    p = scripts("job.sh", TRAILING)
    r = megalint("--isolated", "--diff", "job.sh", cwd=tmp_path)
    (tmp_path / "fix.patch").write_text(r.out)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert p.read_text() == FIXED


def test_diff_without_fixes_exits_0(megalint, scripts):
    p = scripts("job.sh", "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2\n")
    r = megalint("--isolated", "--diff", str(p))
    assert (r.rc, r.out) == (0, "")


def test_stdin_fix_prints_the_fixed_text(megalint):
    r = megalint("--isolated", "--fix", "--stdin-filename", "job.sh", "-", stdin=TRAILING)
    assert r.out == FIXED
    assert r.rc == 0
    assert "All checks passed." in r.err  # the report goes to stderr, out of the way of the text


def test_stdin_fix_without_fixes_echoes_the_input(megalint):
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 3\n"
    r = megalint("--isolated", "--fix", "--output-format", "concise", "-", stdin=text)
    assert r.out == text
    assert r.rc == 1 and "-:1:89: ML101" in r.err


def test_fix_that_breaks_parsing_is_not_applied(megalint, scripts):
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 3 \\  \n    --hidden-size 8\n"
    p = scripts("job.sh", text)
    r = megalint("--isolated", "--rule-dir", str(FIXTURES / "rules"), "--fix", "--output-format", "concise", str(p))
    # The backslash fix is applied; the rule's fix would leave `$(` open and is refused.
    assert p.read_text() == text.replace("\\  \n", "\\\n")
    assert f"megalint: {p}: 1 fix(es) not applied (ML991): the script would no longer parse" in r.err
    assert r.codes == ["ML991"] and r.rc == 1


def test_no_fix_on_a_script_that_does_not_parse(megalint, scripts):
    text = "if true; then\ntorchrun pretrain_gpt.py --num-layers 2 \\  \n  --hidden-size 8\n"
    p = scripts("job.sh", text)
    r = megalint("--isolated", "--fix", str(p))
    assert p.read_text() == text
    assert "no fix applied: the file does not parse" in r.err
