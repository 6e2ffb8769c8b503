from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from output_example import build_example, find

from megalint.diagnostics import Diagnostic, Label, Severity
from megalint.output import FORMATS, OutputFormatError, OutputTarget, RenderOptions, github, parse_output_formats, sarif
from megalint.output.common import fingerprints, relative_path
from megalint.output.full import DisplayLine
from megalint.source import SourceFile

SCHEMA_PATH = Path("/work/shared/schemas/sarif-2.1.0.json")


def diag(sf, needle, code="ML001", sev=Severity.ERROR, message="m", **kw):
    return Diagnostic(code=code, name="a-rule", severity=sev, message=message, span=find(sf, needle), **kw)


# --- parsing --output-format -------------------------------------------------------------


def test_parse_output_formats():
    assert parse_output_formats(["github", "sarif:megalint.sarif"]) == [
        OutputTarget("github", None),
        OutputTarget("sarif", "megalint.sarif"),
    ]
    assert parse_output_formats([]) == [OutputTarget("full", None)]
    assert parse_output_formats(["sarif:C:\\out\\m.sarif"]) == [OutputTarget("sarif", "C:\\out\\m.sarif")]
    with pytest.raises(OutputFormatError, match="unknown output format 'xml'"):
        parse_output_formats(["xml"])
    with pytest.raises(OutputFormatError, match="standard output"):
        parse_output_formats(["github", "full"])
    with pytest.raises(OutputFormatError, match="empty"):
        parse_output_formats(["sarif:"])
    with pytest.raises(OutputFormatError, match="same|two"):
        parse_output_formats(["sarif:a", "json:a"])


# --- SARIF --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator():
    if not SCHEMA_PATH.exists():
        pytest.skip("SARIF schema not available")
    return jsonschema.Draft4Validator(json.loads(SCHEMA_PATH.read_text()))


def test_sarif_validates_against_schema(sarif_validator):
    diags, sources, rules = build_example()
    doc = json.loads(FORMATS["sarif"](diags, sources, rules, RenderOptions(root="/work/repo")))
    errors = sorted(sarif_validator.iter_errors(doc), key=str)
    assert not errors, errors[0]
    empty = json.loads(FORMATS["sarif"]([], sources, {}, RenderOptions()))
    sarif_validator.validate(empty)


def test_sarif_schema_rejects_a_broken_document(sarif_validator):
    diags, sources, rules = build_example()
    doc = sarif.build(diags, sources, rules, RenderOptions())
    del doc["runs"][0]["tool"]["driver"]["name"]
    assert list(sarif_validator.iter_errors(doc))


def test_sarif_content(example):
    diags, sources, rules = example
    doc = sarif.build(diags, sources, rules, RenderOptions(root="/work/repo"))
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/repo/"
    rules_out = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules_out]
    assert ids == sorted(ids) and "ML071" in ids  # the code without metadata still has a rule
    for res in run["results"]:
        assert rules_out[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["partialFingerprints"]["megalint/v1"]
    tp = next(r for r in run["results"] if r["ruleId"] == "ML012")
    loc = tp["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "scripts/train.sh", "uriBaseId": "%SRCROOT%"}
    # `$TP` at 13:34: endColumn is the column after the last character.
    assert loc["region"] == {"startLine": 13, "startColumn": 34, "endLine": 13, "endColumn": 37}
    assert [r["message"]["text"] for r in tp["relatedLocations"]] == ["TP=7 set here", "16 heads"]
    rep = tp["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert rep == {
        "deletedRegion": {"startLine": 4, "startColumn": 4, "endLine": 4, "endColumn": 5},
        "insertedContent": {"text": "8"},
    }
    cjk = next(r for r in run["results"] if r["ruleId"] == "ML050")
    # 数据/文本_document is 14 code points: columns count code points, not bytes or cells.
    region = cjk["locations"][0]["physicalLocation"]["region"]
    assert region["endColumn"] - region["startColumn"] == 14
    ml012 = rules_out[ids.index("ML012")]
    assert ml012["defaultConfiguration"]["level"] == "error"
    assert ml012["properties"]["tags"] == ["parallelism", "correctness"]
    assert ml012["helpUri"] == "https://example.invalid/rules/ML012"
    assert "## Why is this bad?" in ml012["help"]["markdown"]
    # display-only fixes are not offered as SARIF fixes
    assert "fixes" not in next(r for r in run["results"] if r["ruleId"] == "ML071")


def test_sarif_uri_outside_root_and_escaping():
    sf = SourceFile("/elsewhere/my script.sh", "TP=7\n")
    d = diag(sf, "TP")
    doc = sarif.build([d], {sf.path: sf}, {}, RenderOptions(root="/work/repo"))
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///elsewhere/my%20script.sh"
    }
    sf2 = SourceFile("/work/repo/a b/x.sh", "TP=7\n")
    doc = sarif.build([diag(sf2, "TP")], {sf2.path: sf2}, {}, RenderOptions(root="/work/repo"))
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "a%20b/x.sh",
        "uriBaseId": "%SRCROOT%",
    }


# --- fingerprints -------------------------------------------------------------------------


def test_fingerprints_survive_lines_moving_and_separate_duplicates():
    before = SourceFile("t.sh", "TP=7\nfoo\nfoo\n")
    after = SourceFile("t.sh", "# new comment\n\nTP=7\nfoo\nfoo\n")
    db = [diag(before, "foo", message="x"), diag(before, "foo\n", message="x")]
    db[1] = Diagnostic("ML001", "a-rule", Severity.ERROR, "x", before.span(9, 12))
    da = [
        Diagnostic("ML001", "a-rule", Severity.ERROR, "x", after.span(20, 23)),
        Diagnostic("ML001", "a-rule", Severity.ERROR, "x", after.span(24, 27)),
    ]
    fb = fingerprints(db, {"t.sh": before})
    fa = fingerprints(da, {"t.sh": after})
    assert [fb[id(d)] for d in db] == [fa[id(d)] for d in da]
    assert fb[id(db[0])] != fb[id(db[1])]
    changed = SourceFile("t.sh", "TP=7\nfoo 2\nfoo\n")
    dc = Diagnostic("ML001", "a-rule", Severity.ERROR, "x", changed.span(5, 8))
    assert fingerprints([dc], {"t.sh": changed})[id(dc)] != fb[id(db[0])]


# --- GitHub -------------------------------------------------------------------------------


def test_github_escaping_exact():
    assert github.escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert github.escape_property("a%b:c,d\r\ne") == "a%25b%3Ac%2Cd%0D%0Ae"
    # % first: an existing escape sequence in the text must survive as text
    assert github.escape_data("%0A") == "%250A"


def test_github_annotation_with_hostile_path_and_message():
    path = "dir:1,x/50%\nodd.sh"
    sf = SourceFile(path, "TP=7\n")
    d = Diagnostic(
        "ML012",
        "tp,divides:heads",
        Severity.WARNING,
        "bad: 50% of heads,\r\nsecond line :: still data",
        find(sf, "TP=7"),
    )
    line = github.annotation(d, {})
    assert line == (
        "::warning file=dir%3A1%2Cx/50%25%0Aodd.sh,line=1,col=1,endLine=1,endColumn=5,"
        "title=megalint ML012 (tp%2Cdivides%3Aheads)::"
        "bad: 50%25 of heads,%0D%0Asecond line :: still data"
    )
    assert "\n" not in line and "\r" not in line
    # what the runner does: first '::' after the leading one ends the properties
    props, data = line[2:].split("::", 1)
    name, _, plist = props.partition(" ")
    parsed = dict(p.split("=", 1) for p in plist.split(",") if p)

    def unescape(s):
        return s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")

    assert name == "warning"
    assert unescape(parsed["file"]) == path
    assert unescape(parsed["title"]) == "megalint ML012 (tp,divides:heads)"
    assert unescape(data) == d.message


def test_github_multiline_span_has_no_columns():
    sf = SourceFile("t.sh", "torchrun \\\n  --a 1\n")
    d = Diagnostic("ML001", "r", Severity.INFO, "m", sf.span(0, len(sf.text) - 1))
    line = github.annotation(d, {})
    assert line.startswith("::notice file=t.sh,line=1,endLine=2,title=")
    assert "col=" not in line and "endColumn=" not in line


def test_github_limits_errors_first_and_summary():
    sf = SourceFile("t.sh", "".join(f"X{i}=1\n" for i in range(30)))
    diags = [
        Diagnostic(
            f"ML{i:03d}",
            "r",
            [Severity.INFO, Severity.WARNING, Severity.ERROR][i % 3],
            f"finding {i} | pipe",
            find(sf, f"X{i}="),
        )
        for i in range(30)
    ]
    got = []
    text = FORMATS["github"](diags, {"t.sh": sf}, {}, RenderOptions(step_summary=got.append))
    lines = text.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert [line.split(" ", 1)[0] for line in commands] == ["::error"] * 10 + ["::warning"] * 10 + ["::notice"] * 10
    assert len(got) == 0  # exactly 10 of each: nothing dropped, no summary

    more = diags + [Diagnostic("ML999", "r", Severity.ERROR, "late", find(sf, "X29="))]
    text = FORMATS["github"](more, {"t.sh": sf}, {}, RenderOptions(step_summary=got.append))
    commands = [line for line in text.splitlines() if line.startswith("::")]
    assert len(commands) == 30 and sum(c.startswith("::error") for c in commands) == 10
    assert "1 more finding not annotated" in text
    assert "  t.sh:30:1: error ML999 late" in text
    assert len(got) == 1
    summary = got[0]
    assert summary.count("\n| ") == 1 + 31  # the header row and one row per finding
    assert "finding 0 \\| pipe" in summary
    # no line that is not a workflow command starts with '::'
    assert all(line.startswith("::") == (line in commands) for line in text.splitlines())


def test_github_relative_to_root():
    sf = SourceFile("/work/repo/scripts/t.sh", "TP=7\n")
    line = github.annotation(diag(sf, "TP"), {}, root="/work/repo")
    assert line.startswith("::error file=scripts/t.sh,")


def test_relative_path():
    assert relative_path("/r/a/b.sh", "/r") == "a/b.sh"
    assert relative_path("/r2/b.sh", "/r") == "/r2/b.sh"
    assert relative_path("a/./b.sh", "/r") == "a/b.sh"


# --- full ---------------------------------------------------------------------------------


def test_full_carets_align_under_wide_characters():
    sf = SourceFile("t.sh", 'echo "数据集" --lr\t"学习率" 3e-4\n')
    d = diag(sf, "3e-4")
    out = FORMATS["full"]([d], {"t.sh": sf}, {}, RenderOptions(summary=False))
    src = next(line for line in out.splitlines() if line.startswith("1 | "))
    caret = next(line for line in out.splitlines() if "^" in line)
    dl = DisplayLine.of(sf.line_text(1))
    # the caret starts at the display cell of '3' and covers four cells
    start = caret.index("^")
    assert caret.count("^") == 4
    from rich.cells import cell_len

    prefix = src[: src.index("3e-4")]
    assert cell_len(prefix) == start
    assert dl.cell(d.span.start_col) == start - len("1 | ")


@pytest.mark.parametrize(
    "line",
    [
        "torchrun pretrain_gpt.py --lr 3e-4 \\",
        "",
        "  --seq-length 4096\r",
        "\t--lr 1e-4",
        "# 学习率 lr",
        "a\x01b\x7f",
        "~!@#$%^&*()",
    ],
)
def test_display_line_of_plain_ascii_is_one_cell_per_character(line):
    # A printable ASCII line takes a shortcut; it must place each character where the general
    # path (each character shown, then measured) does.
    from megalint.output import full

    got = DisplayLine.of(line)
    text = line[:-1] if line.endswith("\r") else line
    pieces = [full._show_char(ch) for ch in text]
    pos = [0]
    for p in pieces:
        pos.append(pos[-1] + full.cell_len(p))
    assert (got.pieces, got.pos) == (pieces, pos)


def test_full_multiline_primary_and_label_in_other_file(example):
    diags, sources, rules = example
    d = next(x for x in diags if x.code == "ML060")
    out = FORMATS["full"]([d], sources, rules, RenderOptions(summary=False))
    assert "  ::: scripts/common.sh:3:8" in out
    assert "----------------------------- exported here" in out
    lines = out.splitlines()
    assert "10 | torchrun --nproc_per_node $GPUS_PER_NODE \\" in lines
    assert "17 |     --save /ckpt" in lines
    assert "..." in lines  # long span: its middle lines are left out


def test_full_width_is_respected_and_deterministic(example):
    diags, sources, rules = example
    for width in (60, 80, 100):
        out = FORMATS["full"](diags, sources, rules, RenderOptions(width=width))
        from rich.cells import cell_len

        for line in out.splitlines():
            if re.match(r"^ *\d* [|+-] ", line) or re.match(r"^ *\| ", line):
                assert cell_len(line) <= width, (width, line)
        assert out == FORMATS["full"](diags, sources, rules, RenderOptions(width=width))


def test_full_never_prints_control_characters_or_bare_source():
    sf = SourceFile("t.sh", "::add-mask::x\nA=\x1b[31mred\x07 # tail\r\n")
    d = diag(sf, "red")
    out = FORMATS["full"]([d], {"t.sh": sf}, {}, RenderOptions())
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert not any(line.startswith("::") for line in out.splitlines())
    assert "A=␛[31mred␇ # tail" in out


def test_full_label_past_the_cropped_edge_is_still_marked():
    sf = SourceFile("t.sh", 'X="' + "a" * 200 + ' --b"\n')
    d = Diagnostic("ML001", "r", Severity.ERROR, "m", find(sf, "X"), labels=(Label(find(sf, "--b"), "far away"),))
    out = FORMATS["full"]([d], {"t.sh": sf}, {}, RenderOptions(width=60))
    assert "far away" in out and "^" in out


# --- gitlab / junit -----------------------------------------------------------------------


def test_gitlab_fields(example):
    diags, sources, rules = example
    issues = json.loads(FORMATS["gitlab"](diags, sources, rules, RenderOptions(root="/x")))
    assert {i["severity"] for i in issues} == {"major", "minor", "info"}
    for i in issues:
        assert set(i) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert isinstance(i["location"]["lines"]["begin"], int)
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_junit_is_valid_xml_even_with_hostile_text():
    sf = SourceFile("a&b<c>.sh", "TP=7\n")
    clean = SourceFile("clean.sh", "true\n")
    d = Diagnostic("ML001", "r", Severity.ERROR, 'quote " amp & lt < ctrl \x01 \x1b end', find(sf, "TP"))
    xml = FORMATS["junit"]([d], {sf.path: sf, clean.path: clean}, {}, RenderOptions())
    root = ET.fromstring(xml.encode("utf-8"))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["a&b<c>.sh", "clean.sh"]
    failure = suites[0].find("testcase/failure")
    assert 'quote " amp & lt <' in failure.get("message") and "\\u0001" in failure.get("message")
    assert suites[1].find("testcase/failure") is None
    assert root.get("failures") == "1" and root.get("tests") == "2"


def test_color_decision():
    from megalint.output.common import color_enabled

    assert color_enabled("always", False, {"NO_COLOR": "1"})
    assert not color_enabled("never", True, {"FORCE_COLOR": "1"})
    assert not color_enabled("auto", True, {"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert color_enabled("auto", True, {"NO_COLOR": "", "TERM": "xterm"})
    assert color_enabled("auto", False, {"FORCE_COLOR": "1"})
    assert not color_enabled("auto", False, {"FORCE_COLOR": "0"})
    assert not color_enabled("auto", True, {"TERM": "dumb"})
    assert not color_enabled("auto", True, {"CLICOLOR": "0", "TERM": "xterm"})
    with pytest.raises(ValueError):
        color_enabled("sometimes", True, {})


def test_summary_writer_appends(tmp_path, example):
    diags, sources, rules = example
    target = tmp_path / "summary.md"
    target.write_text("previous step\n")
    opts = RenderOptions(github_max_per_type=1, step_summary=github.summary_writer(str(target)))
    FORMATS["github"](diags, sources, rules, opts)
    text = target.read_text()
    assert text.startswith("previous step\n## megalint: 6 findings")
    assert "at most 1 annotation of each type" in text
