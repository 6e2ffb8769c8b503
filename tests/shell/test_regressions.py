"""Inputs that once raised or ran away, each with what it must give now."""

from __future__ import annotations

import pytest

from megalint.errors import InputError
from megalint.shell import arith
from megalint.shell.analyze import analyze_text as _analyze_text
from tests.shell.robust import run_bytes as _run_bytes
from tests.shell.robust import run_text as _run_text

# These inputs test the evaluator's own limits on the statements themselves, so every statement
# is evaluated, including those no launch reads (tests/shell/test_relevance.py covers skipping).


def analyze_text(*a, **kw):
    return _analyze_text(*a, skip_unread=False, **kw)


def run_text(*a, **kw):
    return _run_text(*a, skip_unread=False, **kw)


def run_bytes(*a, **kw):
    return _run_bytes(*a, skip_unread=False, **kw)


def _var(facts, name):
    """The texts a variable ends with on the paths, and the reasons where it is unknown."""
    vals, reasons = set(), set()
    for p in facts.paths:
        v = p.variables.get(name)
        if v is None:
            continue
        why = v.unknown or (v.value.unknown if v.value is not None else None)
        if why is not None:
            reasons.add(why.reason)
        else:
            vals.add(v.value.text)
    return vals, reasons


def test_lone_surrogate_in_text_is_an_input_error():
    with pytest.raises(InputError, match="not valid Unicode"):
        analyze_text("s.sh", "X=\ud800\n")


def test_binary_and_non_utf8_bytes_are_input_errors():
    assert run_bytes(b"\x7fELF\0\0\0binary") == (None, None)
    assert run_bytes(b"X=\xff\xfe\n") == (None, None)


def test_missing_token_at_eof_is_reported_inside_the_file():
    facts, _ = run_text("(0")
    errs = [f for f in facts.findings if f.kind == "parse-error"]
    assert errs and all(f.span.end <= 2 for f in errs)


@pytest.mark.parametrize(
    "opening,closing",
    [
        ("if true; then\n", "fi\n"),
        ("( ", " )\n"),
        ("{ ", "; }\n"),
        ("while true; do\n", "break; done\n"),
    ],
)
def test_deep_statement_nesting_is_cut_with_a_note(opening, closing):
    facts, _ = run_text(opening * 400 + "X=1\n" + closing * 400 + "echo $X\n")
    assert any("nested more than" in n for n in facts.notes)


def test_shallow_nesting_is_still_read():
    facts, launches = run_text(
        "if true; then\n" * 10
        + "TP=2\n"
        + "fi\n" * 10
        + "torchrun pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers 2\n"
    )
    assert launches[0].argv[1].text == "2"
    assert not facts.notes


def test_deep_default_expansions_become_unknown():
    facts, _ = run_text("X=" + "${A:-" * 400 + "1" + "}" * 400 + "\n")
    _, reasons = _var(facts, "X")
    assert any("nested more than" in r for r in reasons)


@pytest.mark.parametrize(
    "expr", ["(" * 600 + "1" + ")" * 600, "- " * 2000 + "1", "2**" * 500 + "2"], ids=["parens", "unary", "power"]
)
def test_deep_arithmetic_is_unknown(expr):
    facts, _ = run_text(f"X=$(( {expr} ))\n")
    _, reasons = _var(facts, "X")
    assert any("nested more than" in r for r in reasons)
    with pytest.raises(arith.ArithUnknown):
        arith.evaluate(expr, lambda n: 0)


def test_long_and_or_chains():
    run_text("true" + " && true" * 3000 + "\n")
    run_text("[ a ]" + " && [ b ]" * 3000 + "\n")
    run_text("X=1" + " || X=2" * 3000 + "\n")


def test_self_doubling_string_becomes_too_long():
    loop = " ".join(["1"] * 64)
    facts, _ = run_text(f"X=ab\nfor i in {loop}; do X=$X$X; done\necho $X\n")
    _, reasons = _var(facts, "X")
    assert reasons and all("too long" in r for r in reasons)


def test_arithmetic_values_that_refer_to_each_other():
    facts, _ = run_text("X='Y+1'\nY='X+1'\nZ=$((X))\nW=$((Y+0))\nV='2*3'\nU=$((V+1))\n")
    _, reasons = _var(facts, "Z")
    assert any("refers to itself" in r for r in reasons)
    assert _var(facts, "U")[0] == {"7"}


def test_long_decimal_literal_wraps_like_bash():
    assert arith.parse_int("9" * 5000) == -1
    facts, _ = run_text("X=$((" + "9" * 5000 + "))\n")
    assert _var(facts, "X")[0] == {"-1"}


def test_unknown_array_expands_to_any_number_of_words():
    _, launches = run_text('A=("$@")\ntorchrun pretrain_gpt.py --num-layers 2 "${A[@]}" --hidden-size 8\n')
    argv = launches[0].argv
    assert any(w.splat is not None for w in argv)
    assert argv[-1].text == "8"


def test_pattern_operators_on_long_values_are_bounded():
    facts, _ = run_text("X=" + "a" * 60000 + "\nY=${X//a*/b}\nZ=${X%%a*}\nW=${X//a/}\nV=${X#aaa}\n", limit=2.0)
    assert _var(facts, "W")[0] == {""}
    assert _var(facts, "V")[0] == {"a" * 59997}
    assert any("too long" in r for r in _var(facts, "Y")[1])


def test_catastrophic_regex_is_not_decided():
    facts, _ = run_text("X=" + "a" * 40 + "b\nif [[ $X =~ (a+)+$ ]]; then Y=1; else Y=2; fi\n", limit=2.0)
    assert len(facts.paths) == 2


def test_flag_as_command_check_is_linear():
    run_text("torchrun pretrain_gpt.py \\\n" + "--num-layers 2\n" * 2000)


def test_exponential_function_recursion_stops_at_the_budget():
    facts, _ = run_text("f() { f; f; }\nf\nX=1\n", limit=10.0)
    assert any("stopped after" in n or "nested more than" in n for n in facts.notes)


def test_source_cycles(tmp_path):
    (tmp_path / "a.sh").write_text(
        "A=1\nsource ./b.sh\nsource ./a.sh\ntorchrun pretrain_gpt.py --tensor-model-parallel-size $B --num-layers $A\n"
    )
    (tmp_path / "b.sh").write_text("B=2\nsource ./a.sh\n. ./b.sh\n")
    path = str(tmp_path / "a.sh")
    facts, launches = run_bytes(open(path, "rb").read(), path=path)
    assert launches[0].argv[1].text == "2"
    assert any("cycle" in n for n in facts.notes)


def test_a_large_sourced_file_is_refused(tmp_path):
    (tmp_path / "big.sh").write_bytes(b"X=1\n" * 300_000)
    (tmp_path / "a.sh").write_text("source ./big.sh\necho $X\n")
    path = str(tmp_path / "a.sh")
    facts, _ = run_bytes(open(path, "rb").read(), path=path)
    assert any("larger than" in n for n in facts.notes)
