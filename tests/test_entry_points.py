"""Flag-validity findings depend on the entry point's own parser, which is Megatron-LM's only
for its stock scripts; and the script follows launcher options that are not known."""

from linting import lint


def codes(text: str) -> list[str]:
    res = lint(text, path="job.sh", memory=False)
    return [d.code for d in res.diagnostics]


def launches(text: str):
    return lint(text, path="job.sh", memory=False).launches


def test_own_entry_point_adds_its_flags():
    text = "torchrun --nproc_per_node 8 my_repo/examples/mymodel/pretrain_mymodel.py --num-layers 2 --my-extra-flag 3\n"
    assert "ML501" not in codes(text)


def test_examples_train_script_flags_and_choices_are_its_own():
    text = (
        "torchrun --nproc_per_node 8 examples/vision/train.py --num-layers 2 --hidden-size 64 "
        "--position-embedding-type rotary --vision-tower big extra_word\n"
    )
    found = codes(text)
    assert not {"ML501", "ML504", "ML509"} & set(found)


def test_stock_entry_point_still_reports_unknown_flags():
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --my-extra-flag 3\n"
    assert "ML501" in codes(text)


def test_modelopt_flags_are_not_unknown_on_pretrain_gpt():
    text = (
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --export-te-mcore-model --finetune-hf-dataset x\n"
    )
    assert "ML501" not in codes(text)
    assert "ML509" not in codes(text)


def test_entry_after_unknown_launcher_options():
    text = 'DIST="$1"\ntorchrun $DIST pretrain_gpt.py --num-layers 2 --hidden-size 64\n'
    (lr,) = launches(text)
    assert lr.launch.entry.text == "pretrain_gpt.py"
    assert lr.launch.argv[0].text == "--num-layers"
    assert lr.launch.nproc_per_node.value is None
    assert "ML509" not in codes(text)


def _lint_entry_fixture(name: str) -> list[tuple[str, int, int]]:
    from pathlib import Path

    from linting import packaged_rules

    from megalint.pipeline import Settings, lint_text

    path = Path(__file__).resolve().parents[1] / "fixtures" / "entry-provider" / "examples" / name
    result = lint_text(str(path), path.read_text(), Settings(rules=packaged_rules(), with_memory=False))
    return [(d.code, d.span.start_line, d.span.start_col) for d in result.diagnostics if d.code == "ML501"]


def test_an_entry_points_own_provider_is_read_when_the_tree_is_at_hand():
    # tools/serve.py adds --port through extra_args_provider: known; the misspelt --prot is not.
    assert _lint_entry_fixture("serve.sh") == [("ML501", 2, 67)]


def test_a_provider_that_calls_elsewhere_leaves_unknown_flags_unreported():
    # Its flags come from a module not read: only removed or renamed flags could be reported.
    assert _lint_entry_fixture("serve_with_helper.sh") == []
