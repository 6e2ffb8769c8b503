"""Each launch is bound against the parser that reads its flags: the fork's, from the fork's own
source, with flag checks undecided where a part of that parser is not at hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from linting import packaged_rules

from megalint import probes
from megalint.megatron import extraction_cache, fork_catalogue
from megalint.megatron.forks import detect_fork
from megalint.pipeline import FileResult, Settings, lint_text

FORKS = Path(__file__).resolve().parents[2] / "fixtures" / "forks"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(extraction_cache.CACHE_ENV, str(tmp_path / "cache"))
    new_run()
    return tmp_path / "cache"


def new_run() -> None:
    """Forget what this process built: a fork's parser is built once per run."""
    fork_catalogue._fork_catalogue.cache_clear()


def lint_fixture(script: str, roots: tuple[str, ...] = ()) -> FileResult:
    path = FORKS / script
    settings = Settings(rules=packaged_rules(), with_memory=False, source_roots=roots)
    return lint_text(str(path), path.read_text(), settings)


def found(result: FileResult) -> list[tuple[str, int, int]]:
    return [
        (d.code, d.span.start_col, d.span.end_col)
        for d in result.diagnostics
        if d.code in {"ML501", "ML504", "ML505", "ML509"}
    ]


def undecided(result: FileResult, code: str) -> list[str]:
    return [m.reason or "" for u in result.evaluation.undecided if u.rule.code == code for m in u.missing]


def test_mindspeed_llm_flags_are_its_own_and_mindspeed_missing_leaves_flags_undecided() -> None:
    result = lint_fixture("mindspeed-llm/examples/train.sh")
    assert (
        result.launches[0].context["unknown"]["megatron"].startswith("the script lives in a MindSpeed-LLM repository")
    )
    assert found(result) == []  # --stage, the added choice, and --use-mc3 (MindSpeed's, not at hand)
    assert any("MindSpeed (the `mindspeed` package" in r for r in undecided(result, "ML501"))


def test_mindspeed_llm_with_mindspeed_at_hand_defines_its_flags() -> None:
    result = lint_fixture("mindspeed-llm/examples/train.sh", (str(FORKS / "mindspeed"),))
    assert found(result) == [] and undecided(result, "ML501") == []


def test_mindspeed_llm_typo_is_reported_when_its_parser_is_at_hand(tmp_path: Path) -> None:
    script = FORKS / "mindspeed-llm" / "examples" / "typo.sh"
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --stage sft --stgae dpo\n"
    settings = Settings(rules=packaged_rules(), with_memory=False, source_roots=(str(FORKS / "mindspeed"),))
    script.write_text(text)
    try:
        result = lint_text(str(script), text, settings)
    finally:
        script.unlink()
    assert found(result) == [("ML501", 72, 79)]


def test_pai_patch_args_and_if_absent_flags_are_known_and_a_typo_is_not() -> None:
    result = lint_fixture("pai/examples/demo/run.sh")
    assert result.launches[0].context["unknown"]["megatron"].startswith("the launch runs Pai-Megatron-Patch")
    # The base release Pai pins is not at hand: an unknown flag is undecided, never an error.
    assert found(result) == []
    assert any("release pai-megatron-patch runs on is not at hand" in r for r in undecided(result, "ML501"))


def test_pai_with_the_pinned_megatron_at_hand_reports_the_typo() -> None:
    result = lint_fixture("pai/examples/demo/run.sh", (str(FORKS / "tree"),))
    assert found(result) == [("ML501", 109, 130)]


def test_megatron_deepspeed_binds_its_own_parser_with_deepspeed_flags_and_nargs() -> None:
    result = lint_fixture("deepspeed/examples_deepspeed/run.sh")
    assert found(result) == [("ML501", 114, 125)]  # --zero-stag; --num-experts 4 4 and --deepspeed* are fine


def test_underscore_fork_reports_the_hyphenated_spelling() -> None:
    result = lint_fixture("underscores/examples/run.sh")
    assert result.launches[0].context["unknown"]["megatron"].endswith("epfLLM's Megatron-LLM")
    assert found(result) == [("ML501", 87, 115)]
    # The message names the parser that rejects the flag: the fork's, not Megatron-LM's.
    (message,) = [d.message for d in result.diagnostics if d.code == "ML501"]
    assert "is not a Megatron-LLM (epfLLM) flag" in message


def test_a_tree_of_its_own_is_a_fork_named_by_its_extra_flags() -> None:
    result = lint_fixture("tree/examples/run.sh")
    assert "which adds --demo-fused-rope" in result.launches[0].context["unknown"]["megatron"]
    assert found(result) == [("ML501", 78, 90)]


def test_deepspeed_outside_a_repository_leaves_other_flags_undecided(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("deepspeed pretrain_gpt.py --num-layers 2 --zero-stage 1 --deepspeed\n")
    result = lint_text(str(script), script.read_text(), Settings(rules=packaged_rules(), with_memory=False))
    assert found(result) == []
    assert any("megatron-deepspeed source is not at hand" in r for r in undecided(result, "ML501"))


def test_upstream_launch_outside_a_repository_is_megatron_lm(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("torchrun pretrain_gpt.py --num-layers 2\n")
    assert detect_fork(str(script), "pretrain_gpt.py", ()) is None


def test_second_run_reads_the_cache_and_a_broken_entry_is_rewritten(
    _own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lint_fixture("deepspeed/examples_deepspeed/run.sh")
    (entry,) = (_own_cache / "catalogues").iterdir()
    assert "--zero-stage" in entry.read_text()

    def no_extraction(*_args: object) -> None:
        raise AssertionError("extracted again")

    monkeypatch.setattr("megalint.megatron.fork_catalogue._extract", no_extraction)
    new_run()
    assert found(lint_fixture("deepspeed/examples_deepspeed/run.sh")) == [("ML501", 114, 125)]
    monkeypatch.undo()
    monkeypatch.setenv(extraction_cache.CACHE_ENV, str(_own_cache))
    entry.write_text("{not json")
    new_run()
    assert found(lint_fixture("deepspeed/examples_deepspeed/run.sh")) == [("ML501", 114, 125)]
    assert "--zero-stage" in json.dumps(json.loads(entry.read_text()))


def test_a_fragment_in_a_fork_is_read_by_the_forks_parser() -> None:
    # Arguments without a launch, in Pai's repository: Pai's own flag is known to its parser.
    result = lint_fixture("pai/examples/demo/model_args.sh")
    (fragment,) = result.fragments
    assert fragment.launch.launcher == "fragment"
    assert fragment.context["unknown"]["megatron"].startswith("the launch runs Pai-Megatron-Patch")
    assert found(result) == []


def test_layerwise_disaggregated_training_sets_its_own_world_size() -> None:
    # 2 nodes × 3 processes is not a multiple of PP 4, but MindSpeed-LLM's layerwise
    # disaggregated training sets the world size itself: ML101 is undecided, with the reason.
    result = lint_fixture("mindspeed-llm/examples/cloud_edge.sh")
    assert "ML101" not in [d.code for d in result.diagnostics]
    assert any("--layerwise-disaggregated-training" in r for r in undecided(result, "ML101"))
    # Without the flag the same layout is reported.
    path = FORKS / "mindspeed-llm" / "examples" / "cloud_edge.sh"
    text = path.read_text().replace(" --layerwise-disaggregated-training", "")
    settings = Settings(rules=packaged_rules(), with_memory=False)
    assert "ML101" in [d.code for d in lint_text(str(path), text, settings).diagnostics]


def test_a_choice_mindspeed_adds_survives_mindspeed_llm_defining_the_flag_again() -> None:
    result = lint_fixture("mindspeed-llm/examples/ring.sh", (str(FORKS / "mindspeed"),))
    assert found(result) == []
    typo = FORKS / "mindspeed-llm" / "examples" / "ring.sh"
    text = typo.read_text().replace("ring_algo", "ring_alog")
    settings = Settings(rules=packaged_rules(), with_memory=False, source_roots=(str(FORKS / "mindspeed"),))
    assert [d.code for d in lint_text(str(typo), text, settings).diagnostics if d.code == "ML504"] == ["ML504"]


def test_pai_launch_runs_the_megatron_release_its_pythonpath_pins() -> None:
    # Megatron-LM-250624 pins 6a6cd478, on the 0.13 line: the te cross-entropy check of 0.19
    # (ML760) does not hold there, as it would at HEAD.
    (launch,) = lint_fixture("pai/examples/demo/run_pinned.sh").launches
    assert launch.context["megatron"] == "0.13"
    assert any("PYTHONPATH names Pai-Megatron-Patch's Megatron-LM-250624" in n for n in launch.launch.notes)
    settings = Settings(rules=packaged_rules(), with_memory=False, megatron_version="0.19")
    path = FORKS / "pai/examples/demo/run_pinned.sh"
    given = lint_text(str(path), path.read_text(), settings)
    # A version the user names wins over the pin.
    assert given.launches[0].context["megatron"] == "0.19"
    assert "ML760" in [d.code for d in given.diagnostics]
    assert "ML760" not in [d.code for d in lint_fixture("pai/examples/demo/run_pinned.sh").diagnostics]


def test_an_extraction_kept_on_disk_rests_on_the_files_it_did_not_find(tmp_path: Path, monkeypatch) -> None:
    """A module the extractor looked for and did not find that appears later (a provider's import
    now resolves) makes the kept extraction stale; a kept one tells its answers to the check."""
    monkeypatch.setenv(extraction_cache.CACHE_ENV, str(tmp_path / "cache"))
    module = tmp_path / "tree" / "ext.py"
    made = []

    def make():
        made.append(1)
        return {"found": probes.is_file(module)}, []

    assert extraction_cache.cached("probe-test", make)[0] == {"found": False}
    with probes.recorded() as answers:
        assert extraction_cache.cached("probe-test", make)[0] == {"found": False}
    assert len(made) == 1 and answers == {str(module): 0}
    module.parent.mkdir()
    module.write_text("", encoding="utf-8")
    assert extraction_cache.cached("probe-test", make)[0] == {"found": True}
    assert len(made) == 2


def test_megatron_lms_own_tree_adding_no_flag_builds_no_catalogue_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tree's flags are all Megatron-LM's: the launch is bound against the curated catalogue,
    # and the one read from the tree is never built (it took 6 ms of a first check).
    tree = tmp_path / "tree"
    shutil.copytree(FORKS / "tree", tree)
    arguments = tree / "megatron" / "training" / "arguments.py"
    arguments.write_text(
        arguments.read_text().replace('    parser.add_argument("--demo-fused-rope", action="store_true")\n', "")
    )
    script = tree / "examples" / "run.sh"
    script.write_text("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --hiden-size 8\n")
    built: list[str] = []
    real = fork_catalogue.Catalogue.from_dict
    monkeypatch.setattr(
        fork_catalogue.Catalogue, "from_dict", lambda data, origin="": built.append(origin) or real(data, origin=origin)
    )
    result = lint_text(str(script), script.read_text(), Settings(rules=packaged_rules(), with_memory=False))
    assert built == []
    assert [c for c, _, _ in found(result)] == ["ML501"]  # --hiden-size, against the curated catalogue
    new_run()
    # A tree that adds a flag is bound against its own catalogue, built then.
    assert [c for c, _, _ in found(lint_fixture("tree/examples/run.sh"))] == ["ML501"]
    assert built == ["megatron-tree"]
