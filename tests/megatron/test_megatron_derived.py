from __future__ import annotations

import pytest

from megalint.megatron.argv_words import literal_argv
from megalint.megatron.bind import bind
from megalint.megatron.catalogue import Catalogue
from megalint.megatron.derived import derive, derived_values
from megalint.shell.values import Unknown, Word


def d(argv: str, world, version="HEAD"):
    return derive(bind(literal_argv(argv), Catalogue.load(version)), world)


def val(argv: str, world, name, version="HEAD"):
    return d(argv, world, version)[name].value


GPT = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --micro-batch-size 1"


@pytest.mark.parametrize("version", ["HEAD", "0.19", "0.15", "0.12", "0.8"])
def test_data_parallel_size(version):
    args = GPT + " --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2"
    out = d(args + " --context-parallel-size 2", 16, version)
    assert out["data_parallel_size"].value == 2
    assert out["data_parallel_size"].source.endswith("@HEAD" if version == "HEAD" else f"@core_v{version}.0")
    bad = d(args, 10, version)["data_parallel_size"]
    assert isinstance(bad.value, Unknown) and "not divisible" in bad.error


def test_unknown_inputs_give_unknown_with_reason():
    out = d(GPT + " --tensor-model-parallel-size 2", None)
    dp = out["data_parallel_size"]
    assert isinstance(dp.value, Unknown) and "world size is not known" in dp.value.reason
    assert dp.error is None
    from megalint.shell.values import Segment
    from megalint.source import Span

    words = literal_argv("--tensor-model-parallel-size") + [
        Word((Segment.unknown_at("$TP is not set", Span("s", 1, 1, 1, 3, 0, 2)),))
    ]
    out = derive(bind(words, Catalogue.load("HEAD")), 8)
    assert "$TP is not set" in out["data_parallel_size"].value.reason
    assert "$TP is not set" in out["expert_tensor_parallel_size"].value.reason


def test_pipeline_clamp_in_0_8():
    out = d(GPT + " --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4", 8, "0.8")
    assert out["pipeline_model_parallel_size"].value == 2
    assert out["data_parallel_size"].value == 1
    out = d(GPT + " --tensor-model-parallel-size 4 --pipeline-model-parallel-size 4", 8, "0.15")
    assert isinstance(out["data_parallel_size"].value, Unknown)


def test_encoder_sizes_in_0_12():
    args = GPT + " --tensor-model-parallel-size 2 --encoder-pipeline-model-parallel-size 1"
    out = d(args, 8, "0.12")
    assert out["total_model_size"].value == 4  # encoder 2×1×1 + decoder 2×1×1
    assert out["data_parallel_size"].value == 2


def test_weight_shards_from_0_19():
    args = GPT + " --tensor-model-parallel-size 2 --tensor-parallel-num-weight-shards 4"
    out = d(args, 16, "HEAD")
    assert out["gtp_weight_remat_size"].value == 2
    assert out["data_parallel_size"].value == 4
    bad = d(GPT + " --tensor-model-parallel-size 2 --tensor-parallel-num-weight-shards 3", 16)
    assert bad["gtp_weight_remat_size"].error


def test_virtual_pipeline():
    base = GPT + " --pipeline-model-parallel-size 4"
    assert val(base, 8, "virtual_pipeline_model_parallel_size") is None
    assert val(base + " --num-layers-per-virtual-pipeline-stage 2", 8, "virtual_pipeline_model_parallel_size") == 4
    assert val(base + " --num-virtual-stages-per-pipeline-rank 3", 8, "virtual_pipeline_model_parallel_size") == 3
    # 32 layers / 4 stages = 8, one virtual stage of 8: VPP 1 becomes None from 0.15 on.
    assert val(base + " --num-layers-per-virtual-pipeline-stage 8", 8, "virtual_pipeline_model_parallel_size") is None
    assert (
        val(base + " --num-layers-per-virtual-pipeline-stage 8", 8, "virtual_pipeline_model_parallel_size", "0.12") == 1
    )
    bad = d(base + " --num-layers-per-virtual-pipeline-stage 3", 8)["virtual_pipeline_model_parallel_size"]
    assert "not divisible" in bad.error
    acc = (
        GPT.replace("--num-layers 32", "--num-layers 30")
        + " --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2"
        " --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split"
    )
    assert val(acc, 8, "virtual_pipeline_model_parallel_size") == 4
    both = base + " --num-layers-per-virtual-pipeline-stage 2 --num-virtual-stages-per-pipeline-rank 2"
    assert d(both, 8)["virtual_pipeline_model_parallel_size"].error
    # The layout's stage count over PP: 4 stages on PP 4 is no interleaving, 8 is two.
    layout = d(base + " --pipeline-model-parallel-layout Et*8|t*8|t*8|t*8L", 8)
    assert layout["virtual_pipeline_model_parallel_size"].value is None
    layout = d(base + " --pipeline-model-parallel-layout E(t*4|)*7,t*4L", 8)
    assert layout["virtual_pipeline_model_parallel_size"].value == 2
    assert layout["pipeline_layout_decoder_layers"].value == 32
    odd = d(base + " --pipeline-model-parallel-layout Et*8|t*8|t*16L", 8)
    assert isinstance(odd["virtual_pipeline_model_parallel_size"].value, Unknown)


def test_ffn_kv_and_groups():
    assert val(GPT, 1, "ffn_hidden_size") == 16384
    assert val(GPT + " --swiglu", 1, "ffn_hidden_size") == 10880
    assert val("--hidden-size 5120 --num-attention-heads 40 --swiglu", 1, "ffn_hidden_size") == 13632
    assert val(GPT + " --ffn-hidden-size 11008 --swiglu", 1, "ffn_hidden_size") == 11008
    assert val(GPT, 1, "kv_channels") == 128
    assert val(GPT + " --kv-channels 64", 1, "kv_channels") == 64
    bad = d("--hidden-size 4000 --num-attention-heads 48", 1)["kv_channels"]
    assert isinstance(bad.value, Unknown) and "bare assert" in bad.error
    assert val(GPT, 1, "num_query_groups") == 32
    assert val(GPT + " --num-query-groups 8", 1, "num_query_groups") == 32  # no GQA flag
    assert val(GPT + " --group-query-attention --num-query-groups 8", 1, "num_query_groups") == 8
    assert val(GPT + " --group-query-attention", 1, "num_query_groups") == 1


def test_experts():
    args = GPT + " --tensor-model-parallel-size 2 --num-experts 8 --expert-model-parallel-size 4"
    out = d(args, 16)
    assert out["expert_tensor_parallel_size"].value == 2
    assert out["expert_data_parallel_size"].value == 2  # 16 // (2×4×1)
    out = d(args + " --expert-tensor-parallel-size 1", 16)
    assert out["expert_data_parallel_size"].value == 4
    assert d(args, 12)["expert_data_parallel_size"].error
    assert val(args, 16, "moe_ffn_hidden_size") == 16384
    assert val(GPT, 16, "moe_ffn_hidden_size") is None
    assert val(GPT, 16, "moe_ffn_hidden_size", "0.12") == 16384
    # 0.8: expert data parallel = DP // EP.
    assert val(args, 16, "expert_data_parallel_size", "0.8") == 2


def test_batches():
    args = GPT + " --tensor-model-parallel-size 2"
    assert val(args, 16, "global_batch_size") == 8
    assert val(args + " --global-batch-size 64", 16, "num_microbatches") == 8
    bad = d(args + " --global-batch-size 60 --micro-batch-size 2", 16)["num_microbatches"]
    assert "not divisible" in bad.error
    ramp = d(args + " --global-batch-size 64 --rampup-batch-size 8 8 100", 16, "0.15")
    assert isinstance(ramp["num_microbatches"].value, Unknown)
    assert d(args + " --global-batch-size 64 --rampup-batch-size 8 8 100", 16)["num_microbatches"].value == 8


def test_padded_vocab():
    args = GPT + " --tokenizer-type NullTokenizer --vocab-size 50257 --tensor-model-parallel-size 2"
    assert val(args, 2, "padded_vocab_size") == 50432  # multiple of 256
    assert val(args, 2, "padded_vocab_size", "0.15") == 50432  # 50258 also rounds to 50432
    edge = GPT + " --tokenizer-type NullTokenizer --vocab-size 32000"
    assert val(edge, 1, "padded_vocab_size") == 32000
    assert val(edge, 1, "padded_vocab_size", "0.15") == 32128  # an EOD token is added
    other = d(GPT + " --tokenizer-type GPT2BPETokenizer", 1)["padded_vocab_size"]
    assert isinstance(other.value, Unknown) and "tokenizer" in other.value.reason


def test_precision_and_sequence_parallel():
    assert val(GPT, 1, "params_dtype") == "fp32"
    assert val(GPT + " --bf16", 1, "params_dtype") == "bf16"
    assert d(GPT + " --bf16 --fp16", 1)["params_dtype"].error
    assert val(GPT + " --bf16", 1, "accumulate_allreduce_grads_in_fp32") is True
    assert val(GPT + " --bf16 --grad-reduce-in-bf16", 1, "accumulate_allreduce_grads_in_fp32") is False
    assert val(GPT + " --bf16", 1, "accumulate_allreduce_grads_in_fp32", "0.8") is True
    assert val(GPT + " --sequence-parallel", 8, "sequence_parallel") is False
    assert val(GPT + " --sequence-parallel --tensor-model-parallel-size 2", 8, "sequence_parallel") is True


def test_every_derived_value_cites_megatron():
    out = d(GPT + " --num-experts 8 --tokenizer-type NullTokenizer --vocab-size 8", 8)
    for name, item in out.items():
        if name in ("world_size", "pipeline_model_parallel_size", "gtp_weight_remat_size"):
            continue
        assert "@" in item.source and ".py:" in item.source, name
    assert derived_values(out)["data_parallel_size"] == 8
