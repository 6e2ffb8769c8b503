"""Path handling: what a path decided once stays decided, and the budgets keep what was read."""

from __future__ import annotations

from tests.shell.robust import run_text as _run_text


def run_text(text, **kw):
    # These tests read the variables of each path: evaluate every statement, read or not.
    return _run_text(text, skip_unread=False, **kw)


def _values(facts, name):
    return sorted(
        (p.variables[name].value.text if p.variables.get(name) and p.variables[name].value else None)
        for p in facts.paths
    )


def test_the_same_test_on_the_same_values_goes_the_same_way_on_a_path():
    facts, launches = run_text(
        'if [ "$PR" = fp16 ]; then A="--fp16"; else A="--bf16"; fi\n'
        'if [ "$PR" = fp16 ]; then B=fp16; else B=bf16; fi\n'
        '[ "$PR" = fp16 ] && C=yes\n'
        "torchrun pretrain_gpt.py --num-layers 2 $A --hidden-size 8\n"
    )
    assert len(facts.paths) == 2
    pairs = sorted(
        (
            p.variables["A"].value.text,
            p.variables["B"].value.text,
            p.variables["C"].value.text if "C" in p.variables else None,
        )
        for p in facts.paths
    )
    assert pairs == [("--bf16", "bf16", None), ("--fp16", "fp16", "yes")]
    assert sorted(la.argv[2].text for la in launches) == ["--bf16", "--fp16"]


def test_a_changed_value_is_tested_again():
    facts, _ = run_text('if [ -n "$W" ]; then A=1; else A=2; fi\nW=\nif [ -n "$W" ]; then B=1; else B=2; fi\n')
    assert _values(facts, "B") == ["2", "2"]


def test_file_tests_are_not_assumed_to_repeat():
    facts, _ = run_text('if [ -d "$D" ]; then A=1; fi\nmkdir -p "$D"\nif [ -d "$D" ]; then B=1; fi\n')
    assert len(facts.paths) == 4


def test_paths_are_capped_and_merged_values_say_why():
    text = "".join(f'if [ "${i}" = x ]; then V{i}=a; else V{i}=b; fi\n' for i in range(1, 9))
    facts, _ = run_text(text + "torchrun pretrain_gpt.py --num-layers 2 --hidden-size $V1\n")
    assert len(facts.paths) <= 16
