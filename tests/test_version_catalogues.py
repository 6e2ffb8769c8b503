"""A release between the curated catalogues is bound with its own extracted flags and decided as itself."""

from linting import lint

from megalint.megatron.catalogue_choice import catalogue_for

SCRIPT = (
    "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 8 "
    "--num-experts 8 --expert-model-parallel-size 2 --tensor-model-parallel-size 2 --disable-bias-linear "
    "--bf16 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 1\n"
)


def codes(version):
    res = lint(SCRIPT, version, memory=False)
    return {d.code for d in res.diagnostics}, res


def test_exact_release_catalogue_is_used():
    cat, version, note = catalogue_for("0.17.1")
    assert (cat.version, version, note) == ("0.17.1", "0.17", None)
    cat, version, note = catalogue_for("0.25")
    assert version == "0.19" and "no catalogue" in note


def test_rules_see_the_release_the_user_named():
    # EP>1 with TP>1 and no --sequence-parallel: the 0.15 releases crash (NameError), 0.16+ only warn.
    on_015, _ = codes("0.15")
    on_017, res = codes("0.17")
    assert "ML692" in on_015 and "ML692" not in on_017
    assert "ML693" in on_017
    assert res.version == "0.17"
