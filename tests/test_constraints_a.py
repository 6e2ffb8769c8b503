"""Flag-validity rules (ML501-ML549), constraint groups A-F (ML601-ML649), the binding-problem
data they read, the derived pipeline layout, and the coverage table."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from linting import lint, packaged_rules

from megalint.diagnostics import Severity
from megalint.megatron.argv_words import literal_argv
from megalint.megatron.bind import bind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.derived import derive
from megalint.megatron.derived.pipeline_parallel import parse_pipeline_layout
from megalint.megatron.releases import RENAMED, release_history

ROOT = Path(__file__).resolve().parent.parent
RULES = packaged_rules()
MINE = [r for r in RULES if re.fullmatch(r"ML5[0-4]\d|ML6[0-4]\d", r.code)]


def codes(text: str, version: str | None = None, gpu: str | None = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for d in lint(text, version, gpu).diagnostics:
        out.setdefault(d.code, []).append(d)
    return out


def problems(text: str, version: str | None = None) -> list[dict]:
    return lint(text, version).launches[0].context["problems"]


LAUNCH = "torchrun --nproc_per_node 8 pretrain_gpt.py "


# -- the rules themselves -------------------------------------------------------------------


def test_rule_codes_and_files():
    assert len(MINE) >= 55
    for r in MINE:
        origin = str(r.origin)
        if r.code.startswith("ML5"):
            assert "rules/flags/" in origin, r.code
        else:
            assert origin.startswith(f"rules/{r.category}/{r.name}.yaml:"), r.code


def test_constraint_rules_cite_sources_and_rows():
    cite = re.compile(r"^[\w/.-]+\.py:\d+(-\d+)?@(core_v0\.\d+\.\d+|d98e8a64)$")
    for r in MINE:
        refs = [x for x in r.docs.references or () if x.startswith("constraints:")]
        if r.code.startswith("ML6"):
            assert refs, f"{r.code} names no constraint row"
            assert r.docs.sources, r.code
        for s in r.docs.sources or ():
            assert cite.match(s), f"{r.code}: {s}"


def test_errors_name_the_stage():
    stages = (
        "argparse",
        "validate_args",
        "TransformerConfig",
        "model-parallel config",
        "distributed init",
        "initialize_model_parallel",
        "micro-batch calculator",
        "model is built",
        "optimizer",
        "first step",
        "transformer config",
        "data-parallel config",
        "exit()",
        "does not check",
        "checks only part",
    )
    for r in MINE:
        if r.severity is Severity.ERROR and r.code.startswith("ML6"):
            text = r.message.source if hasattr(r.message, "source") else str(r.message)
            assert any(s in text for s in stages), f"{r.code} does not say where Megatron stops"


# -- binding problems as rules read them ----------------------------------------------------


def test_problem_best_suggestion_only_when_unambiguous():
    ps = {p["flag"]: p for p in problems(LAUNCH + "--num_layers 2 --hidden 4")}
    assert ps["--num_layers"]["best"] == "--num-layers"
    assert "best" not in ps["--hidden"]  # --hidden-size or --hidden-dropout


def test_problem_choices_and_earlier():
    ps = problems(LAUNCH + "--lr 1e-4 --moe-token-dispatcher-type alltoall_seq --lr 2e-4")
    by_kind = {p["kind"]: p for p in ps}
    assert by_kind["invalid-choice"]["choices"] == ["allgather", "alltoall", "flex"]
    assert by_kind["repeated-flag"]["earlier"] == ["1:45"]


def test_release_history_is_finer_than_the_shipped_catalogues():
    assert release_history("--local_rank", "HEAD") == {"last_in": "0.8", "removed_in": "0.9"}
    assert release_history("--use-megatron-fsdp", "0.12") == {"added_in": "0.14"}
    assert release_history("--use-legacy-models", "HEAD")["removed_in"] == "0.18"
    assert release_history("--no-such-flag", "HEAD") == {}


def test_renames():
    p = problems(LAUNCH + "--local_rank 0")[0]
    assert (p["renamed_to"], p["renamed_in"]) == ("--local-rank", "0.9")
    p = problems(LAUNCH + "--use-megatron-fsdp", "0.12")[0]
    assert p["older_name"] == "--use-custom-fsdp"
    for old, (new, how, _when) in RENAMED.items():
        assert Catalogue.load("HEAD").lookup(new) is not None, new
        assert Catalogue.load("HEAD").lookup(old) is None, old
        assert how in ("renamed", "replaced")


def test_flag_rules_by_version():
    # --use-legacy-models: gone at HEAD (argparse), needs the torch format on 0.15.
    assert "ML502" in codes(LAUNCH + "--use-legacy-models")
    found = codes(LAUNCH + "--use-legacy-models", "0.15")
    assert "ML514" in found and "ML502" not in found
    # alltoall_seq is a valid dispatcher on 0.12 only.
    assert "ML504" in codes(LAUNCH + "--moe-token-dispatcher-type alltoall_seq", "0.15")
    assert "ML504" not in codes(LAUNCH + "--moe-token-dispatcher-type alltoall_seq", "0.12")


# -- constraint rules: versions and unknown inputs -------------------------------------------


def test_query_group_rule_changed_at_016():
    mqa = LAUNCH + "--num-attention-heads 8 --group-query-attention --num-query-groups 1 --tensor-model-parallel-size 2"
    assert "ML617" not in codes(mqa)
    assert "ML617" not in codes(mqa, "0.19")
    assert "ML617" in codes(mqa, "0.15")
    assert "ML617" in codes(mqa, "0.12")


def test_global_batch_stage_moved_at_018():
    text = LAUNCH + "--micro-batch-size 4 --global-batch-size 40"
    head = codes(text)["ML626"][0].message
    old = codes(text, "0.15")["ML626"][0].message
    assert "validate_args" in head and "eval_global_batch_size" in head
    assert "micro-batch calculator" in old


def test_interleaving_with_two_stages_depends_on_p2p_overlap():
    base = LAUNCH + "--num-layers 8 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2"
    for v in ("HEAD", "0.15", "0.12", "0.8"):
        assert "ML609" not in codes(base, v), v
        assert "ML609" in codes(base + " --no-overlap-p2p-communication", v), v


def test_layer_split_on_08_is_silent_in_megatron():
    # 0.8 accepts an uneven split (it builds fewer layers): no error is claimed where Megatron runs.
    text = LAUNCH + "--num-layers 6 --pipeline-model-parallel-size 4"
    assert "ML607" not in codes(text, "0.8")
    assert "validate_args" in codes(text, "0.15")["ML607"][0].message


def test_tp_clamp_only_before_010():
    text = "torchrun --nproc_per_node 4 pretrain_gpt.py --tensor-model-parallel-size 8"
    assert "ML601" in codes(text, "0.8")
    assert "ML601" not in codes(text, "0.12")


def test_unknown_inputs_leave_rules_undecided():
    # The world size is unknown: no DP, so neither the batch nor the optimizer-instance rule fires.
    text = (
        "torchrun --nproc_per_node 8 --nnodes $NNODES pretrain_gpt.py --micro-batch-size 4 "
        "--global-batch-size 10 --num-distributed-optimizer-instances 3"
    )
    res = lint(text)
    assert not {"ML626", "ML603"} & {d.code for d in res.diagnostics}
    assert {"ML626", "ML603"} <= {u.rule.code for u in res.evaluation.undecided}
    # A head count from the caller's environment.
    text = LAUNCH + "--num-attention-heads $HEADS --tensor-model-parallel-size 8"
    assert "ML616" not in codes(text)
    # A "$@" may bring the required flags.
    assert not {"ML615", "ML625"} & set(codes(LAUNCH + '--num-layers 2 "$@"'))
    assert {"ML615", "ML625"} <= set(codes(LAUNCH + "--num-layers 2"))


def test_sequence_parallel_at_tp1_is_information():
    d = codes(LAUNCH + "--sequence-parallel")["ML632"][0]
    assert d.severity is Severity.INFO


# -- derived values --------------------------------------------------------------------------


def test_pipeline_layout_parser():
    assert parse_pipeline_layout("Et*3|t*4L") == [["E", "t", "t", "t"], ["t"] * 4 + ["L"]]
    assert len(parse_pipeline_layout("Ettt|(tt|)*29,m|L")) == 32
    assert "invalid layer character" in parse_pipeline_layout("Et*2|x")
    bound = bind(
        literal_argv("--num-layers 8 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout E(t|)*7,tL"),
        Catalogue.load("HEAD"),
    )
    d = derive(bound, 8)
    assert d["pipeline_layout_stages"].value == 8
    assert d["virtual_pipeline_model_parallel_size"].value == 4
    assert d["pipeline_layout_problem"].value is None


def test_pipeline_split_layers():
    bound = bind(
        literal_argv("--num-layers 8 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split"),
        Catalogue.load("0.15"),
    )
    assert derive(bound, 8)["pipeline_split_layers"].value == 10


# -- the coverage table ----------------------------------------------------------------------


def _coverage():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import coverage_table
    finally:
        sys.path.pop(0)
    return coverage_table


def test_coverage_table_is_up_to_date():
    ct = _coverage()
    assert (ROOT / "docs" / "constraints-coverage.md").read_text(encoding="utf-8") == ct.build(), (
        "run python tools/coverage_table.py"
    )


def test_coverage_rows_match_the_notes():
    notes = Path("/work/shared/research/megatron-constraints.md")
    if not notes.exists():
        pytest.skip("the research notes are not on this machine")
    ct = _coverage()
    committed = json.loads((ROOT / "docs" / "constraint-rows.json").read_text(encoding="utf-8"))
    assert ct.extract(notes) == committed


def test_every_reference_names_a_row():
    ct = _coverage()
    rows = {r["id"] for r in json.loads((ROOT / "docs" / "constraint-rows.json").read_text())}
    assert len(rows) == 245
    assert {r for r in ct.rule_coverage() if not r.startswith("§")} <= rows
    assert set(ct.UNCOVERED) <= rows


def test_version_tests_in_rules_are_version_functions_and_thresholds():
    """Rules test the Megatron version with version_at_least / version_before / version_is, never by
    comparing or matching `megatron` themselves; each test in a rule holds, or fails, from some
    release on for every release (the rules also run as 0.13, 0.17 ... when a job names those)."""
    from megalint.engine.expressions import Env, compile_expr
    from megalint.megatron.versions import version_key

    strings = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")
    raw = re.compile(r"(?<![\w.])megatron\s*(==|!=|<=|>=|<|>|in\b|\.)|(==|!=|<=|>=|<|>|\bin)\s*megatron\b")
    releases = [f"0.{n}" for n in range(4, 20)] + ["HEAD"]
    found = set()
    for r in RULES:
        for expr, _ in r.exprs():
            code = strings.sub("''", expr.source)
            assert not raw.search(code), f"{r.code} tests the version by hand: {expr.source}"
            found |= set(re.findall(r"version_(?:at_least|before|is)\('[^']+'\)", expr.source))
    assert found
    for call in found:
        e = compile_expr(call)
        holds = [v for v in releases if e.run(Env({"megatron": v}, None))]
        assert holds, call
        if call.startswith("version_before"):
            holds = [v for v in releases if v not in holds]
        first = min(holds, key=version_key)
        if call.startswith("version_is"):
            assert holds == [first], call
        else:
            assert holds == [v for v in releases if version_key(v) >= version_key(first)], call
