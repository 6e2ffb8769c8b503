from __future__ import annotations

import shutil
import subprocess

import pytest

from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from megalint.fix import (
    OverlappingEdits,
    apply_edits,
    apply_fixes,
    bash_parses,
    line_starts,
    offset_of,
    unified_diff,
)
from megalint.source import SourceFile


def sub(sf: SourceFile, needle: str, nth: int = 1):
    start = -1
    for _ in range(nth):
        start = sf.text.index(needle, start + 1)
    return sf.span(start, start + len(needle))


def fixdiag(sf, needle, content, app=Applicability.SAFE, code="ML100", nth=1, extra_edits=()):
    span = sub(sf, needle, nth)
    return Diagnostic(
        code,
        "r",
        Severity.ERROR,
        f"replace {needle}",
        span,
        fix=Fix(f"use {content}", app, (Edit(span, content),) + tuple(extra_edits)),
    )


SCRIPT = (
    "#!/bin/bash\n"
    "TP=7  # tensor parallel\n"
    "torchrun pretrain_gpt.py \\\n"
    "    --tensor-model-parallel-size $TP \\\n"
    "    --fp16 --bf16 \\\n"
    "    --lr '3e-4'\n"
)


def test_offsets_from_line_and_column():
    text = "ab\ncd\r\nef"
    starts = line_starts(text)
    assert starts == [0, 3, 7]
    assert offset_of(starts, len(text), 1, 1) == 0
    assert offset_of(starts, len(text), 2, 3) == 5  # the \r
    assert offset_of(starts, len(text), 2, 5) == 7  # past the \n: start of line 3
    assert offset_of(starts, len(text), 2, 99) == 7
    assert offset_of(starts, len(text), 3, 3) == 9
    assert offset_of(starts, len(text), 9, 1) == len(text)


def test_apply_safe_fixes_only_by_default():
    sf = SourceFile("t.sh", SCRIPT)
    safe = fixdiag(sf, "--fp16 ", "")
    unsafe = fixdiag(sf, "7", "8", Applicability.UNSAFE)
    shown = fixdiag(sf, "'3e-4'", "3e-4", Applicability.DISPLAY_ONLY)
    plain = Diagnostic("ML200", "r", Severity.INFO, "no fix", sub(sf, "torchrun"))
    r = apply_fixes(sf.text, [safe, unsafe, shown, plain], False, bash_parses)
    assert r.text == SCRIPT.replace("--fp16 ", "")
    assert r.applied == [safe] and r.fixed_count == 1
    assert r.remaining == [unsafe, shown, plain] and r.remaining_count == 3
    r2 = apply_fixes(sf.text, [safe, unsafe, shown, plain], True, bash_parses)
    assert r2.text == SCRIPT.replace("--fp16 ", "").replace("TP=7", "TP=8")
    assert r2.fixed_by_code == {"ML100": 2}
    # comments, quoting and continuations outside the edits are untouched
    assert "  # tensor parallel\n" in r2.text and "'3e-4'" in r2.text and r2.text.count("\\\n") == 3


def test_overlapping_fix_waits_for_the_next_pass():
    sf = SourceFile("t.sh", SCRIPT)
    a = fixdiag(sf, "--fp16 --bf16", "--bf16", code="ML001")
    b = fixdiag(sf, "--bf16", "", code="ML002")  # inside a's range
    r = apply_fixes(sf.text, [b, a], False, None)
    assert r.applied == [a] and r.remaining == [b]
    assert "    --bf16 \\\n" in r.text


def test_two_insertions_at_one_point_conflict():
    sf = SourceFile("t.sh", "echo a\n")
    at = sf.span(5, 5)
    d1 = Diagnostic("ML1", "r", Severity.ERROR, "m", at, fix=Fix("x", Applicability.SAFE, (Edit(at, "X"),)))
    d2 = Diagnostic("ML2", "r", Severity.ERROR, "m", at, fix=Fix("y", Applicability.SAFE, (Edit(at, "Y"),)))
    r = apply_fixes(sf.text, [d1, d2], False, None)
    assert r.text == "echo Xa\n" and r.remaining == [d2]
    with pytest.raises(OverlappingEdits):
        apply_edits(sf.text, [Edit(at, "X"), Edit(at, "Y")])


def test_fix_that_breaks_the_syntax_is_dropped_and_others_kept():
    sf = SourceFile("t.sh", SCRIPT)
    good = fixdiag(sf, "--fp16 ", "")
    bad = fixdiag(sf, "'3e-4'", "'3e-4", code="ML300")  # unterminated quote
    r = apply_fixes(sf.text, [good, bad], False, bash_parses)
    assert r.applied == [good] and r.rejected == [bad]
    assert bash_parses(r.text) and r.text == SCRIPT.replace("--fp16 ", "")


def test_a_script_that_does_not_parse_is_left_alone():
    broken = "if true; then\n  echo 'x\n"
    sf = SourceFile("t.sh", broken)
    d = fixdiag(sf, "echo", "printf")
    r = apply_fixes(broken, [d], False, bash_parses)
    assert r.text == broken and r.refused and r.remaining == [d] and not r.changed


def test_crlf_file_stays_crlf():
    text = SCRIPT.replace("\n", "\r\n")
    sf = SourceFile("t.sh", text)
    # a fix that adds a line, written with a bare LF by its rule
    span = sub(sf, "    --lr")
    d = Diagnostic(
        "ML1",
        "r",
        Severity.ERROR,
        "m",
        span,
        fix=Fix("add", Applicability.SAFE, (Edit(sf.span(span.start, span.start), "    --train-iters 10 \\\n"),)),
    )
    r = apply_fixes(text, [d], False, bash_parses)
    assert "    --train-iters 10 \\\r\n    --lr" in r.text
    assert "\n" not in r.text.replace("\r\n", "")


def test_relint_reaches_a_fixpoint():
    # each pass turns one "aa" into "a"; the lint sees the next one only after the edit
    def lint(text):
        sf = SourceFile("t.sh", text)
        i = text.find("aa")
        if i < 0:
            return []
        sp = sf.span(i, i + 2)
        return [Diagnostic("ML1", "r", Severity.ERROR, "m", sp, fix=Fix("x", Applicability.SAFE, (Edit(sp, "a"),)))]

    text = "echo aaaa\n"
    r = apply_fixes(text, lint(text), False, bash_parses, relint=lint)
    assert r.text == "echo a\n" and r.passes == 3 and r.converged and r.remaining == []

    def flip(text):
        sf = SourceFile("t.sh", text)
        sp = sf.span(5, 6)
        new = "b" if text[5] == "a" else "a"
        return [Diagnostic("ML1", "r", Severity.ERROR, "m", sp, fix=Fix("x", Applicability.SAFE, (Edit(sp, new),)))]

    r = apply_fixes("echo a\n", flip("echo a\n"), False, None, relint=flip, max_passes=5)
    assert not r.converged and r.passes == 5


def test_fix_with_edits_in_another_file_is_not_applied_here():
    sf = SourceFile("t.sh", SCRIPT)
    other = SourceFile("common.sh", "X=1\n")
    span = sub(sf, "7")
    d = Diagnostic(
        "ML1",
        "r",
        Severity.ERROR,
        "m",
        span,
        fix=Fix("x", Applicability.SAFE, (Edit(span, "8"), Edit(sub(other, "1"), "2"))),
    )
    r = apply_fixes(sf.text, [d], False, None)
    assert r.text == SCRIPT and r.remaining == [d]


def test_unified_diff_applies_with_patch(tmp_path):
    old = SCRIPT
    new = SCRIPT.replace("TP=7", "TP=8")
    diff = unified_diff(old, new, "scripts/t.sh")
    assert diff.startswith("--- a/scripts/t.sh\n+++ b/scripts/t.sh\n@@")
    assert "-TP=7  # tensor parallel\n+TP=8  # tensor parallel\n" in diff
    assert unified_diff(old, old, "x") == ""
    no_eol = unified_diff("a\nb", "a\nc", "x")
    assert "\\ No newline at end of file" in no_eol
    if shutil.which("patch") is None:
        pytest.skip("patch not installed")
    for before, after in ((old, new), ("a\nb", "a\nc"), (old.replace("\n", "\r\n"), new.replace("\n", "\r\n"))):
        d = tmp_path / "scripts"
        d.mkdir(exist_ok=True)
        (d / "t.sh").write_bytes(before.encode())
        patch = unified_diff(before, after, "scripts/t.sh")
        subprocess.run(["patch", "-s", "-p1", "--binary"], input=patch.encode(), cwd=tmp_path, check=True)
        assert (d / "t.sh").read_bytes() == after.encode()


def test_an_insertion_at_a_crlf_line_end_goes_before_the_pair():
    # A column one past the line's last character falls between `\r` and `\n`.
    text = "export A=1\r\ntorchrun x.py\r\n"
    sf = SourceFile("t.sh", text)
    d = Diagnostic(
        "ML1",
        "r",
        Severity.ERROR,
        "m",
        sub(sf, "A=1"),
        fix=Fix("add", Applicability.SAFE, (Edit(sf.span(11, 11), "\nexport B=2"),)),
    )
    r = apply_fixes(text, [d], False, bash_parses)
    assert r.text == "export A=1\r\nexport B=2\r\ntorchrun x.py\r\n"


def test_a_script_ending_in_a_continuation_parses_as_bash_reads_it():
    assert bash_parses("torchrun x.py \\\n    --num-layers 2 \\\n")
    assert bash_parses("torchrun x.py \\\r\n")
    assert not bash_parses("if true; then\n  echo x \\\n")
