from __future__ import annotations

from megalint.diagnostics import Diagnostic, Severity
from megalint.fix import apply_fixes, bash_parses
from megalint.source import SourceFile
from megalint.suppress import (
    INVALID,
    UNKNOWN,
    UNUSED,
    apply_suppressions,
    parse_directives,
    scan,
    suppression_rules,
)

KNOWN = {
    "ML012": "tp-divides-heads",
    "ML031": "fp16-and-bf16",
    "ML101": "nccl-ib",
    "ML102": "nccl-socket",
    "ML050": "data-path-not-ascii",
}


def at(sf: SourceFile, needle: str, code: str, nth: int = 1) -> Diagnostic:
    start = -1
    for _ in range(nth):
        start = sf.text.index(needle, start + 1)
    return Diagnostic(code, KNOWN.get(code, ""), Severity.ERROR, "m", sf.span(start, start + len(needle)))


def run(text, diags_spec, known=KNOWN, **kw):
    sf = SourceFile("t.sh", text)
    diags = [at(sf, needle, code, *rest) for needle, code, *rest in diags_spec]
    dirs = parse_directives(text, "t.sh")
    kept, findings = apply_suppressions(diags, dirs, known, **kw)
    return sf, diags, kept, findings


def codes(ds):
    return [d.code for d in ds]


def test_trailing_ignore_covers_its_line_only():
    text = "TP=7  # megalint: ignore[ML012]\nTP2=7\n"
    _, diags, kept, findings = run(text, [("7", "ML012"), ("TP2", "ML012")])
    assert kept == [diags[1]] and findings == []


def test_own_line_ignore_covers_the_whole_continued_command():
    text = (
        "#!/bin/bash\n"
        "# megalint: ignore[ML012] -- TP 7 is fine on this test model\n"
        "\n"
        "# another comment\n"
        "torchrun pretrain_gpt.py \\\n"
        "    --num-attention-heads 16 \\\n"
        "    --tensor-model-parallel-size 7\n"
        "torchrun again.py --tensor-model-parallel-size 7\n"
    )
    _, diags, kept, findings = run(text, [("7\n", "ML012"), ("7\n", "ML012", 2)])
    assert kept == [diags[1]] and findings == []
    d = [x for x in parse_directives(text, "t.sh") if x.kind == "ignore"][0]
    assert d.reason == "TP 7 is fine on this test model"
    assert (d.codes[0].first_line, d.codes[0].last_line) == (5, 7)


def test_own_line_ignore_covers_a_whole_if_block_and_uses_given_ranges():
    text = "# megalint: ignore[fp16-and-bf16]\nif true; then\n  A=--fp16\nfi\nB=--fp16\n"
    _, diags, kept, findings = run(text, [("--fp16", "ML031"), ("--fp16", "ML031", 2)])
    assert kept == [diags[1]] and findings == []
    # a caller-supplied lookup wins over tree-sitter
    dirs = parse_directives(text, "t.sh", command_ranges=lambda line: (line, line))
    assert (dirs[0].codes[0].first_line, dirs[0].codes[0].last_line) == (2, 2)
    dirs = parse_directives(text, "t.sh", command_ranges=[(2, 4), (3, 3), (2, 2)])
    assert (dirs[0].codes[0].first_line, dirs[0].codes[0].last_line) == (2, 4)


def test_own_line_ignore_inside_an_array_covers_the_next_line():
    text = "ARGS=(\n  # megalint: ignore[ML012]\n  --tp 7\n  --tp2 7\n)\n"
    _, diags, kept, _ = run(text, [("7\n", "ML012"), ("7\n", "ML012", 2)])
    assert kept == [diags[1]]


def test_disable_enable_range_and_open_disable_runs_to_the_end():
    text = "# megalint: disable[ML1]\nA=1\n# megalint: enable[ML1]\nB=1\n# megalint: disable[ML050]\nC=1\nD=1\n"
    _, diags, kept, findings = run(text, [("A", "ML101"), ("B", "ML102"), ("C", "ML050"), ("D", "ML050")])
    assert kept == [diags[1]] and findings == []


def test_file_ignore_anywhere_and_match_by_code_name_and_prefix():
    text = "A=1\nB=1\nC=1\n# megalint: file-ignore[ML10, tp-divides-heads]\n"
    _, diags, kept, findings = run(text, [("A", "ML101"), ("B", "ML012"), ("C", "ML031")])
    assert kept == [diags[2]] and findings == []


def test_unused_suppression_is_reported_with_a_fix_that_removes_it():
    text = "A=1  # megalint: ignore[ML012]\n# megalint: ignore[ML031]\nB=1\nC=1\n"
    sf, _, kept, findings = run(text, [])
    assert codes(findings) == [UNUSED, UNUSED]
    f0 = findings[0]
    assert (f0.span.start_line, f0.span.start_col, f0.span.end_col) == (1, 25, 30)
    assert "`ML012`" in f0.message
    r = apply_fixes(text, findings, False, bash_parses)
    assert r.text == "A=1\nB=1\nC=1\n"


def test_partly_unused_suppression_keeps_the_used_codes():
    text = "A=1  # megalint: ignore[ML012, ML031, ML050] -- why\n"
    sf, _, kept, findings = run(text, [("A", "ML031")])
    assert kept == [] and codes(findings) == [UNUSED]
    assert "`ML012`, `ML050`" in findings[0].message
    r = apply_fixes(text, findings, False, bash_parses)
    assert r.text == "A=1  # megalint: ignore[ML031] -- why\n"


def test_unused_disable_fix_removes_its_enable_too():
    text = "# megalint: disable[ML012]\nA=1\n# megalint: enable[ML012]\nB=1\n"
    _, _, _, findings = run(text, [])
    assert codes(findings) == [UNUSED]
    assert apply_fixes(text, findings, False, bash_parses).text == "A=1\nB=1\n"


def test_unknown_and_invalid_directives():
    text = (
        "A=1  # megalint: ignore[ML0012]\n"
        "B=1  # megalint: ignor[ML012]\n"
        "C=1  # megalint: ignore ML012\n"
        "D=1  # megalint: ignore[ML012] because\n"
        "E=1  # megalint: ignore[]\n"
        "# megalint: enable[ML031]\n"
        "F=1  # see the megalint: docs (not a directive)\n"
    )
    _, _, _, findings = run(text, [])
    got = [(f.code, f.span.start_line, f.message) for f in findings]
    assert got[0][:2] == (UNKNOWN, 1) and "did you mean `ML012`" in got[0][2]
    assert got[1][:2] == (INVALID, 2) and "did you mean `ignore`" in got[1][2]
    assert got[2][:2] == (INVALID, 3) and "needs the codes in brackets" in got[2][2]
    assert got[3][:2] == (INVALID, 4) and "-- reason" in got[3][2]
    assert got[4][:2] == (INVALID, 5)
    assert got[5][:2] == (INVALID, 6) and "no matching `disable[ML031]`" in got[5][2]
    assert len(findings) == 6


def test_rules_that_did_not_run_or_were_undecided_are_not_called_unused():
    text = "A=1  # megalint: ignore[ML012]\nB=1  # megalint: ignore[ML031]\n"
    _, _, _, findings = run(text, [], enabled={"ML031"}, undecided={"ML031"})
    assert findings == []
    _, _, _, findings = run(text, [], enabled={"ML031"})
    assert codes(findings) == [UNUSED] and findings[0].span.start_line == 2


def test_suppression_findings_can_be_suppressed():
    text = "A=1  # megalint: ignore[ML012, ML001]\n# megalint: file-ignore[ML002]\nB=1  # megalint: ignore[XX9]\n"
    _, _, _, findings = run(text, [])
    assert findings == []


def test_names_from_rule_meta_mapping_and_plain_code_list():
    text = "A=1  # megalint: ignore[unused-suppression, tp-divides-heads]\n"
    sf = SourceFile("t.sh", text)
    d = Diagnostic("ML012", "tp-divides-heads", Severity.ERROR, "m", sf.span(0, 1))
    kept, findings = apply_suppressions([d], parse_directives(text, "t.sh"), suppression_rules() | {})
    # ML012 is unknown to this catalogue but the finding itself carries the name
    assert kept == [] and codes(findings) == [UNKNOWN]
    kept, findings = apply_suppressions([d], parse_directives(text, "t.sh"), ["ML012", "tp-divides-heads"])
    assert kept == [] and findings == []


def test_scan_finds_comments_and_statement_ranges_with_multibyte_text():
    text = "# 中文注释\nA=1 # megalint: ignore[ML012]\ntorchrun x \\\n  --a 1\n"
    comments, ranges = scan(text)
    assert [(c.start_line, c.start_col) for c in comments] == [(1, 1), (2, 5)]
    assert text[comments[1].start : comments[1].end] == "# megalint: ignore[ML012]"
    assert (3, 4) in ranges and (2, 2) in ranges


def test_crlf_script():
    text = "A=1  # megalint: ignore[ML012]\r\n# megalint: ignore[ML031]\r\nB=1\r\n"
    sf, diags, kept, findings = run(text, [("A", "ML012")])
    assert kept == [] and codes(findings) == [UNUSED]
    fixed = apply_fixes(text, findings, False, bash_parses).text
    assert fixed == "A=1  # megalint: ignore[ML012]\r\nB=1\r\n"
