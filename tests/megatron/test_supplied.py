"""Arguments the job takes from a checkpoint or sets itself are unknown to the rules."""

from __future__ import annotations

import pytest
from linting import lint

from megalint.megatron.argv_words import literal_argv
from megalint.megatron.bind import bind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.supplied import FROM_CHECKPOINT, supplied_args
from megalint.shell.values import Unknown


def codes(text: str, version: str | None = None) -> list[str]:
    result = lint(text, version, memory=False)
    return sorted(d.code for d in result.diagnostics)


def supplied(argv: str, version: str = "HEAD", stock: bool = True, entry: str | None = None):
    bound = bind(literal_argv(argv), Catalogue.load(version))
    return bound, supplied_args(bound, version, stock, entry)


EP = (
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 512 "
    "--num-attention-heads 8 --max-position-embeddings 512 --seq-length 512 "
    "--micro-batch-size 1 --expert-model-parallel-size 8 --load /ckpt"
)


def test_expert_parallelism_with_experts_from_the_checkpoint_is_not_reported():
    assert "ML604" in codes(EP + "\n")
    assert "ML604" not in codes(EP + " --use-checkpoint-args\n")


def test_without_a_checkpoint_to_read_nothing_changes():
    no_load = EP.replace(" --load /ckpt", "")
    assert "ML604" in codes(no_load + " --use-checkpoint-args\n")


def test_forced_arguments_are_unknown_and_others_only_when_left_none():
    before, after = supplied(
        "--use-checkpoint-args --load /c --num-layers 4 --num-query-groups 2 "
        "--group-query-attention --tensor-model-parallel-size 2"
    )
    assert after.value("num_layers") == 4  # kept: given on the command line
    assert isinstance(after.value("num_query_groups"), Unknown)  # force=True
    assert isinstance(after.value("hidden_size"), Unknown)  # None on the command line
    assert "checkpoint at --load" in after.value("hidden_size").reason
    assert after.value("tensor_model_parallel_size") == 2  # needs --use-mp-args-from-checkpoint-args
    assert before.value("num_query_groups") == 2  # the input is not changed


def test_parallel_layout_from_the_checkpoint_follows_the_release():
    _, new = supplied(
        "--use-checkpoint-args --load /c --tensor-model-parallel-size 2 --use-mp-args-from-checkpoint-args"
    )
    assert isinstance(new.value("tensor_model_parallel_size"), Unknown)
    _, old = supplied("--use-checkpoint-args --load /c --tensor-model-parallel-size 2", version="0.8")
    assert isinstance(old.value("tensor_model_parallel_size"), Unknown)  # unconditional before 0.10
    _, mid = supplied("--use-checkpoint-args --load /c --num-experts 4", version="0.8")
    assert mid.value("num_experts") == 4  # 0.8 did not read the MoE arguments


def test_pretrained_checkpoint_counts_from_0_16():
    _, head = supplied("--use-checkpoint-args --pretrained-checkpoint /c --num-experts 4")
    assert isinstance(head.value("num_experts"), Unknown)


def test_unknown_switch_or_directory_still_may_load():
    from megalint.shell.values import Segment, Word

    words = literal_argv("--use-checkpoint-args --load") + [Word((Segment(None, None, (), Unknown("$CKPT")),))]
    words += literal_argv("--num-experts 4")
    bound = bind(words, Catalogue.load("HEAD"))
    assert isinstance(supplied_args(bound, "HEAD", True).value("num_experts"), Unknown)


def test_every_listed_dest_is_a_flag_of_some_release():
    dests = {d for d, *_ in FROM_CHECKPOINT}
    known = set()
    for v in ("0.8", "0.12", "0.15", "0.19", "HEAD"):
        cat = Catalogue.load(v)
        known |= dests & set(cat.dests())
    # padded_vocab_size, spec, is_hybrid_model, virtual sizes are set internally or not flags.
    assert dests - known <= {"padded_vocab_size", "spec", "is_hybrid_model"}


CONVERTER = (
    "torchrun hf2mcore.py --load /hf --num-layers 1 --hidden-size 1 --ffn-hidden-size 1 "
    "--num-attention-heads 1 --max-position-embeddings 1 --seq-length 1 --micro-batch-size 1 "
    "--group-query-attention --num-query-groups 8 --position-embedding-type rope\n"
)


def test_a_converter_placeholder_shape_is_not_the_model():
    assert "ML618" not in codes(CONVERTER)
    _, after = supplied(CONVERTER.split("hf2mcore.py ")[1].strip(), stock=False, entry="hf2mcore.py")
    reason = after.value("num_attention_heads").reason
    assert "placeholder" in reason and "hf2mcore.py" in reason
    assert isinstance(after.value("seq_length"), Unknown)


def test_the_same_shape_on_a_megatron_entry_point_is_checked():
    assert "ML618" in codes(CONVERTER.replace("hf2mcore.py", "pretrain_gpt.py"))


@pytest.mark.parametrize(
    "shape",
    [
        "--num-layers 2 --hidden-size 1 --num-attention-heads 1",
        "--num-layers 1 --hidden-size 64 --num-attention-heads 1",
    ],
)
def test_a_real_shape_on_a_converter_stays_known(shape):
    _, after = supplied(shape + " --num-query-groups 8", stock=False, entry="hf2mcore.py")
    assert after.value("num_query_groups") == 8
