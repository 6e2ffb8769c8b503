"""--select / --extend-select / --ignore by code, name, prefix; severity overrides; per-file ignores."""

from __future__ import annotations

import pytest

from megalint.diagnostics import Severity
from megalint.selection import Layer, selected_codes, severity_for, specificity

# Three findings: ML014 (unfilled placeholder), ML101 (world size), ML301 (info, two nodes).
THREE = (
    "CKPT=<Specify path>\n"
    "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py --num-layers 2 "
    "--tensor-model-parallel-size 3 --save $CKPT\n"
)

CODES = {
    "ML001": "unused-suppression",
    "ML011": "flag-run-as-command",
    "ML014": "unfilled-placeholder",
    "ML101": "world-size-divisibility",
    "ML201": "fp8-requires-hopper",
    "ML301": "missing-nccl-ib-timeout",
}


def lint(megalint, scripts, *opts):
    p = scripts("job.sh", THREE)
    return megalint("--isolated", "--output-format", "concise", *opts, str(p))


def test_all_by_default(megalint, scripts):
    assert lint(megalint, scripts).codes == ["ML014", "ML101", "ML301"]


@pytest.mark.parametrize(
    "opts, codes",
    [
        (("--select", "ML101"), ["ML101"]),
        (("--select", "ml101"), ["ML101"]),
        (("--select", "world-size-divisibility"), ["ML101"]),
        (("--select", "ML1", "--select", "ML3"), ["ML101", "ML301"]),
        (("--select", "ML0"), ["ML014"]),
        (("--select", "ALL", "--ignore", "ML0"), ["ML101", "ML301"]),
        (("--ignore", "ML301"), ["ML014", "ML101"]),
        (("--ignore", "missing-nccl-ib-timeout", "--ignore", "ML01"), ["ML101"]),
        (("--select", "ML101", "--extend-select", "unfilled-placeholder"), ["ML014", "ML101"]),
        (("--select", "ML1", "--ignore", "ML101"), []),
        (("--select", "ML101", "--ignore", "ML1"), ["ML101"]),  # the more specific selector wins
        (("--select", "ML101", "--ignore", "ML101"), []),  # a tie goes to ignore
    ],
)
def test_cli_selection(megalint, scripts, opts, codes):
    assert lint(megalint, scripts, *opts).codes == codes


@pytest.mark.parametrize(
    "opt, token, message",
    [
        ("--select", "ML999", "megalint: unknown rule `ML999` in --select; did you mean `ML099`?"),
        (
            "--ignore",
            "world-size-divisibilty",
            "megalint: unknown rule `world-size-divisibilty` in --ignore; did you mean `world-size-divisibility`?",
        ),
        ("--extend-select", "XY", "megalint: unknown rule `XY` in --extend-select; see `megalint rules`"),
    ],
)
def test_unknown_selector_is_an_error(megalint, scripts, opt, token, message):
    r = lint(megalint, scripts, opt, token)
    assert r.rc == 2
    # The suggestion is whatever code is nearest; the message's form is what matters.
    first, _, _ = message.partition(";")
    assert r.err.startswith(first + ";")
    if "did you mean" in message and "ML999" not in token:
        assert r.err.strip() == message


def test_config_selection_and_command_line_layer(megalint, scripts):
    p = scripts("job.sh", THREE)
    scripts("megalint.toml", 'select = ["ML1", "ML3"]\nignore = ["ML301"]\n')
    assert megalint("--output-format", "concise", str(p)).codes == ["ML101"]
    # A --select on the command line starts afresh: the configuration's ignore no longer holds.
    assert megalint("--output-format", "concise", "--select", "ML3", str(p)).codes == ["ML301"]
    # Without one, the command line adds to the configuration.
    assert megalint("--output-format", "concise", "--extend-select", "ML0", str(p)).codes == ["ML014", "ML101"]


def test_unknown_code_in_config_points_at_it(megalint, scripts, tmp_path):
    p = scripts("job.sh", THREE)
    cfg = scripts("megalint.toml", 'gpu = "h100"\nignore = [\n  "ML301",\n  "ML3O1",\n]\n')
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err.startswith(f"megalint: {cfg}:4:3: unknown rule `ML3O1` in `ignore`; did you mean")


def test_severity_overrides(megalint, scripts):
    p = scripts("job.sh", THREE)
    scripts("megalint.toml", '[severity]\nML3 = "error"\nworld-size-divisibility = "info"\nML301 = "warning"\n')
    r = megalint("--output-format", "json", str(p))
    import json

    found = {d["code"]: d["severity"] for d in json.loads(r.out)}
    # The code is more specific than the prefix; a name counts as exact.
    assert found == {"ML014": "error", "ML101": "info", "ML301": "warning"}
    assert r.rc == 1


def test_severity_override_decides_exit_status(megalint, scripts):
    p = scripts("job.sh", THREE)
    scripts("pyproject.toml", '[tool.megalint]\nignore = ["ML0"]\n[tool.megalint.severity]\nML101 = "info"\n')
    assert megalint("--output-format", "concise", str(p)).rc == 0


def test_unknown_code_in_severity_table(megalint, scripts):
    p = scripts("job.sh", THREE)
    cfg = scripts(
        "pyproject.toml", '[tool.megalint]\ngpu = "h100"\n\n[tool.megalint.severity]\nML101 = "info"\nML9Z = "error"\n'
    )
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err.startswith(f"megalint: {cfg}:6:1: unknown rule `ML9Z` in `severity`")


def test_per_file_ignores(megalint, scripts):
    a = scripts("examples/a.sh", THREE)
    b = scripts("train/b.sh", THREE)
    scripts(
        "megalint.toml",
        '[per-file-ignores]\n"examples/*.sh" = ["ML1", "missing-nccl-ib-timeout"]\n"b.sh" = ["ML014"]\n',
    )
    r = megalint("--output-format", "concise", str(a), str(b))
    assert r.codes == ["ML014", "ML101", "ML301"]
    assert [line.split(":")[0] for line in r.out.splitlines() if "ML" in line] == [str(a), str(b), str(b)]


def test_per_file_ignored_code_is_not_an_unused_suppression(megalint, scripts):
    text = "TP=2  # megalint: ignore[ML101]\n" + THREE
    p = scripts("x/job.sh", text)
    scripts("megalint.toml", '[per-file-ignores]\n"x/*" = ["ML101"]\n')
    assert "ML001" not in megalint("--output-format", "concise", str(p)).codes


def test_unknown_code_in_per_file_ignores(megalint, scripts):
    p = scripts("job.sh", THREE)
    cfg = scripts("megalint.toml", '[per-file-ignores]\n"*.sh" = ["ML101", "ML777"]\n')
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err.startswith(f"megalint: {cfg}:2:20: unknown rule `ML777` in `per-file-ignores`")


def test_suppression_rules_are_selectable(megalint, scripts):
    p = scripts("job.sh", "TP=2  # megalint: ignore[ML101]\n" + THREE.replace("3 --save", "2 --save"))
    assert "ML001" in megalint("--isolated", "--output-format", "concise", str(p)).codes
    assert "ML001" not in megalint("--isolated", "--output-format", "concise", "--ignore", "ML001", str(p)).codes
    assert megalint("--isolated", "--output-format", "concise", "--select", "ML1", str(p)).codes == []


def test_selection_layers_unit():
    assert selected_codes(CODES, []) == set(CODES)
    assert selected_codes(CODES, [Layer(select=["ML2"])]) == {"ML201"}
    assert selected_codes(CODES, [Layer(select=["ML2"]), Layer(extend_select=["ML3"])]) == {"ML201", "ML301"}
    assert selected_codes(CODES, [Layer(ignore=["ML"])]) == set()
    # A preview rule is off unless named exactly.
    assert "ML201" not in selected_codes(CODES, [Layer(select=["ALL"])], preview={"ML201"})
    assert "ML201" in selected_codes(CODES, [Layer(extend_select=["fp8-requires-hopper"])], preview={"ML201"})


def test_specificity_and_severity_unit():
    assert specificity("ML101", "ML101", "x") > specificity("ML10", "ML101", "x") > specificity("ML", "ML101", "x")
    assert specificity("ALL", "ML101", "x") == 1
    assert specificity("ML2", "ML101", "x") == 0
    assert specificity("world", "ML101", "world-size") == 0  # names match whole, never by prefix
    assert severity_for("ML101", "w", Severity.ERROR, {"ML1": "info", "ML101": "warning"}) == Severity.WARNING
    assert severity_for("ML101", "w", Severity.ERROR, {"ML2": "info"}) == Severity.ERROR


@pytest.mark.parametrize(
    "opts, codes",
    [
        (("--select", "ML101,ML301"), ["ML101", "ML301"]),
        (("--select", "ML101, missing-nccl-ib-timeout"), ["ML101", "ML301"]),
        (("--select", "ML1,ML0", "--select", "ML3"), ["ML014", "ML101", "ML301"]),
        (("--ignore", "ML014,ML301"), ["ML101"]),
        (("--select", "ML101", "--extend-select", "ML014,ML301"), ["ML014", "ML101", "ML301"]),
    ],
)
def test_comma_separated_selectors(megalint, scripts, opts, codes):
    # As in Ruff: `--select A,B` is `--select A --select B`.
    assert lint(megalint, scripts, *opts).codes == codes


@pytest.mark.parametrize(
    "token, bad", [("ML101,ML999", "ML999"), ("ML999,ML101", "ML999"), ("ML101,", ""), ("ML101,,ML301", "")]
)
def test_unknown_selector_in_a_comma_list_is_named(megalint, scripts, token, bad):
    r = lint(megalint, scripts, "--ignore", token)
    assert r.rc == 2
    assert r.err.startswith(f"megalint: unknown rule `{bad}` in --ignore;")


def test_comma_separated_selectors_in_config(megalint, scripts):
    p = scripts("job.sh", THREE)
    scripts(
        "megalint.toml",
        'select = ["ML0,ML1,ML3"]\nignore = ["ML301, ML2"]\n[per-file-ignores]\n"*.sh" = ["ML2,ML014"]\n',
    )
    assert megalint("--output-format", "concise", str(p)).codes == ["ML101"]
    assert megalint("--output-format", "concise", "--isolated", str(p)).codes == ["ML014", "ML101", "ML301"]


def test_unknown_code_in_a_config_comma_list_points_at_the_string(megalint, scripts):
    p = scripts("job.sh", THREE)
    cfg = scripts("megalint.toml", 'gpu = "h100"\nselect = ["ML1", "ML3,ML3O1"]\n')
    r = megalint(str(p))
    assert r.rc == 2
    assert r.err.startswith(f"megalint: {cfg}:2:18: unknown rule `ML3O1` in `select`; did you mean")
