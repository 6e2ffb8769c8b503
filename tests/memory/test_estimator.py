import json
from pathlib import Path

import pytest

from megalint.memory import InvalidConfig, estimate, pad_vocab, parse_layer_pattern, suggest
from megalint.memory.activations import inflight

DATA = Path(__file__).resolve().parent.parent / "data"
GIB = 2**30

LLAMA2_7B = {
    "num_layers": 32,
    "hidden_size": 4096,
    "ffn_hidden_size": 11008,
    "num_attention_heads": 32,
    "seq_length": 4096,
    "max_position_embeddings": 4096,
    "micro_batch_size": 1,
    "swiglu": True,
    "normalization": "RMSNorm",
    "position_embedding_type": "rope",
    "add_bias_linear": False,
    "untie_embeddings_and_output_weights": True,
    "padded_vocab_size": 32000,
    "bf16": True,
}


def test_llama2_7b_parameter_count_is_exact():
    e = estimate(LLAMA2_7B, 1)
    # Llama-2-7B has 6,738,415,616 parameters
    assert e.stages[0].params == 6_738_415_616


def test_gqa_changes_only_kv_projection():
    mha = estimate(LLAMA2_7B, 1).stages[0].params
    gqa = estimate(dict(LLAMA2_7B, group_query_attention=True, num_query_groups=8), 1).stages[0].params
    assert mha - gqa == 32 * 4096 * 2 * (4096 - 8 * 128)


def test_bytes_per_parameter_follow_megatron_table():
    args = dict(LLAMA2_7B, use_distributed_optimizer=False)
    s = estimate(args, 1).stages[0]
    per = (s.terms["params"] + s.terms["grads"] + s.terms["optimizer_state"]) / s.params
    assert per == pytest.approx(18.0)
    s8 = estimate(
        dict(LLAMA2_7B, use_distributed_optimizer=True, tensor_model_parallel_size=8, global_batch_size=8), 64
    ).stages[0]
    per8 = (s8.terms["params"] + s8.terms["grads"] + s8.terms["optimizer_state"]) / s8.params
    assert per8 == pytest.approx(6 + 12 / 8)


def test_fp16_and_fp32_bytes():
    s = estimate(dict(LLAMA2_7B, bf16=False, fp16=True), 1).stages[0]
    assert (s.terms["params"] + s.terms["grads"] + s.terms["optimizer_state"]) / s.params == pytest.approx(20.0)
    s = estimate(dict(LLAMA2_7B, bf16=False), 1).stages[0]
    assert (s.terms["params"] + s.terms["grads"] + s.terms["optimizer_state"]) / s.params == pytest.approx(16.0)


def test_korthikanti_table2_gpt3_layer():
    # GPT-3-like layer, no SP, TP t, unfused attention, dropout on: sbh(10 + 24/t + 5as/(ht))
    from megalint.memory.activations import kernels, layer_activation
    from megalint.memory.calibration import DEFAULT_CALIBRATION
    from megalint.memory.defaults import with_defaults
    from megalint.memory.shape import model_shape

    s, b, h, a, t = 2048, 1, 4096, 32, 4
    args = with_defaults(
        dict(
            num_layers=1,
            hidden_size=h,
            num_attention_heads=a,
            seq_length=s,
            micro_batch_size=b,
            padded_vocab_size=51200,
            attention_backend="unfused",
            tensor_model_parallel_size=t,
        )
    )
    sh, kn = model_shape(args, t), kernels(args, t)
    act, _ = layer_activation(sh, kn, False, t, 1, 1, t, DEFAULT_CALIBRATION)
    assert act == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    args["sequence_parallel"] = True
    kn = kernels(args, t)
    act, _ = layer_activation(sh, kn, False, t, 1, 1, t, DEFAULT_CALIBRATION)
    assert act == pytest.approx(s * b * h * (34 / t + 5 * a * s / (h * t)))


def test_flash_attention_drops_score_term_and_cp_divides():
    base = dict(LLAMA2_7B, tensor_model_parallel_size=1, transformer_impl="transformer_engine")
    e1 = estimate(base, 1).stages[0].terms["activations"]
    e2 = estimate(dict(base, context_parallel_size=2, global_batch_size=1), 2).stages[0].terms["activations"]
    assert e2 == pytest.approx(e1 / 2, rel=1e-6)


def test_pipeline_inflight_microbatches():
    assert inflight(4, 0, 1, 8) == 4 and inflight(4, 3, 1, 8) == 1 and inflight(4, 0, 1, 2) == 2
    # interleaved first stage: Megatron's 1 + (p-1)/(p*v) penalty, in units of stage layers x p
    assert inflight(4, 0, 2, 64) == pytest.approx(4 * (1 + 3 / 8))


def test_stages_and_embedding_placement():
    e = estimate(dict(LLAMA2_7B, pipeline_model_parallel_size=4, global_batch_size=8), 4)
    names = [s.stage for s in e.stages]
    assert names == ["first", "middle", "last"]
    first, last = e.stage("first"), e.stage("last")
    assert "logits_and_loss" in last.terms and "logits_and_loss" not in first.terms
    assert first.num_layers == 8


def test_moe_pattern_and_expert_sharding():
    assert parse_layer_pattern("([0]*1+[1]*3)*2") == [0, 1, 1, 1, 0, 1, 1, 1]
    with pytest.raises(InvalidConfig):
        parse_layer_pattern("__import__('os')")
    args = dict(
        LLAMA2_7B,
        num_layers=8,
        num_experts=8,
        moe_ffn_hidden_size=1024,
        moe_router_topk=2,
        expert_model_parallel_size=4,
        global_batch_size=4,
    )
    e = estimate(args, 4).stages[0]
    per_expert = 3 * 4096 * 1024
    assert e.expert_params == 8 * 2 * per_expert  # 8 MoE layers x 2 local experts


def test_missing_and_invalid():
    e = estimate({"num_layers": 2}, 1)
    assert not e.complete and e.peak_bytes is None and "hidden_size" in e.missing
    with pytest.raises(InvalidConfig):
        estimate(dict(LLAMA2_7B, tensor_model_parallel_size=3), 4)
    assert pad_vocab(50257, 128, 2) == 50432


def test_recompute_lowers_memory_and_suggest_orders_fits_first():
    big = dict(LLAMA2_7B, micro_batch_size=4, transformer_impl="local")
    none = estimate(big, 1).peak_bytes
    sel = estimate(dict(big, recompute_granularity="selective"), 1).peak_bytes
    full = estimate(
        dict(big, recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1), 1
    ).peak_bytes
    assert full < sel < none
    out = suggest(big, 1, 140 * GIB)
    assert out and all(s.flags for s in out)
    fits = [s.fits for s in out]
    assert fits == sorted(fits, reverse=True)
    assert all("--tensor-model-parallel-size" not in " ".join(s.flags) for s in out)  # world size 1
    json.dumps([s.to_json() for s in out])
    json.dumps(estimate(big, 1).to_json())


LLAMA2_70B = dict(
    LLAMA2_7B,
    num_layers=80,
    hidden_size=8192,
    num_attention_heads=64,
    group_query_attention=True,
    num_query_groups=8,
    ffn_hidden_size=28672,
    global_batch_size=1024,
)


def test_plan_finds_cheapest_fitting_combination_and_it_really_fits():
    from megalint.memory.suggest import plan

    usable = 80 * GIB
    assert estimate(LLAMA2_70B, 32).device_bytes > 10 * usable
    p = plan(LLAMA2_70B, 32, usable, gpus_per_node=8)
    assert p is not None and p.fits and p.device_bytes <= usable
    again = estimate(dict(LLAMA2_70B, **p.changes), 32)
    assert again.device_bytes == p.device_bytes
    assert p.changes.get("use_distributed_optimizer") is True  # free, and needed at this size
    tp = p.changes.get("tensor_model_parallel_size", 1)
    assert 64 % tp == 0 and 8 % tp == 0  # heads and query groups split whole
    # nothing fits on one GPU: no plan rather than an invalid layout
    assert plan(LLAMA2_70B | {"global_batch_size": 1}, 1, usable) is None


def test_usable_memory_of_families_is_an_upper_bound():
    from megalint.hardware.profiles import find_gpu
    from megalint.memory.report import usable_memory, usable_min

    assert usable_memory(find_gpu("h200")) == (find_gpu("h200").memory_bytes, False)
    top, upper = usable_memory(find_gpu("a100"))
    assert upper and top == find_gpu("a100-80gb").memory_bytes
    assert usable_min(find_gpu("a100")) == find_gpu("a100-40gb").memory_bytes
    assert usable_memory(None) == (None, False)


def test_recompute_modules_as_one_string_and_unmodelled_features_are_stated():
    base = dict(LLAMA2_7B, recompute_granularity="selective", transformer_impl="local")
    as_list = estimate(dict(base, recompute_modules=["core_attn", "layernorm"]), 1).peak_bytes
    assert estimate(dict(base, recompute_modules="[core_attn layernorm]"), 1).peak_bytes == as_list
    assert estimate(dict(base, recompute_modules="core_attn,layernorm"), 1).peak_bytes == as_list
    e = estimate(dict(LLAMA2_7B, cuda_graph_impl="transformer_engine"), 1)
    assert any("CUDA graphs" in a for a in e.assumptions)
    assert not estimate(LLAMA2_7B, 1).assumptions


def test_fine_grained_offloading_keeps_one_layer_of_offloaded_tensors():
    base = dict(LLAMA2_7B, pipeline_model_parallel_size=2, global_batch_size=8)
    plain = estimate(base, 2).stage("first")
    off = estimate(dict(base, fine_grained_activation_offloading=True, offload_modules="[attn_norm mlp_norm]"), 2)
    st = off.stage("first")
    # two norm inputs of 2 bytes x h per token leave the GPU for every held layer but one
    T, h, n_held = 4096, 4096, 16 * 2  # 16 layers x 2 micro-batches in flight on the first stage
    assert plain.terms["activations"] - st.terms["activations"] == pytest.approx(2 * 2 * h * T * (n_held - 1), rel=1e-6)
    assert any("offloading" in a for a in off.assumptions)
    # an unknown module name offloads nothing
    same = estimate(dict(base, fine_grained_activation_offloading=True, offload_modules="[bogus]"), 2)
    assert same.stage("first").terms["activations"] == plain.terms["activations"]


def test_cuda_graph_static_buffers_per_layer_and_microbatch():
    base = dict(LLAMA2_7B, global_batch_size=4)
    plain = estimate(base, 1).stage("only")
    g = estimate(dict(base, cuda_graph_impl="transformer_engine"), 1).stage("only")
    want = 4 * 2 * 4096 * 4096 * 32 * 4  # in/out and grad in/out, h x tokens, 32 layers, 4 micro-batches
    assert g.terms["cuda_graph_buffers"] == want
    assert g.peak_bytes - plain.peak_bytes == want
    assert "cuda_graph_buffers" not in plain.terms


def test_deferred_embedding_wgrad_holds_limit_microbatches_of_logit_gradients():
    base = dict(LLAMA2_7B, pipeline_model_parallel_size=2, global_batch_size=8)
    plain = estimate(base, 2).stage("last")
    T, h, V = 4096, 4096, 32000
    per_mb = 2 * h * T + 2 * T * V
    for limit, held in ((2, 2), (0, 8), (20, 8)):
        d = estimate(dict(base, defer_embedding_wgrad_compute=True, wgrad_deferral_limit=limit), 2).stage("last")
        assert d.terms["deferred_embedding_wgrad"] == held * per_mb
        assert d.peak_bytes - plain.peak_bytes == held * per_mb
        assert sum(d.peak_terms.values()) == d.peak_bytes
    # only the stage with the output layer holds them
    assert (
        "deferred_embedding_wgrad"
        not in estimate(dict(base, defer_embedding_wgrad_compute=True), 2).stage("first").terms
    )


def test_each_kind_of_layer_is_worked_out_once_and_added_layer_by_layer(monkeypatch):
    # Dense and MoE layers mixed over two stages: the figures of one layer depend on its kind
    # alone, so each stage asks for each kind once; the totals are those of adding every layer.
    from megalint.memory import activations, estimator, params

    args = dict(
        LLAMA2_7B,
        num_layers=8,
        num_experts=8,
        moe_layer_freq="([0]*1+[1]*3)*2",
        moe_ffn_hidden_size=1024,
        moe_router_topk=2,
        expert_model_parallel_size=2,
        pipeline_model_parallel_size=2,
        global_batch_size=8,
    )
    calls = []
    real = estimator.layer_activation
    monkeypatch.setattr(
        estimator, "layer_activation", lambda sh, kn, moe, *a: calls.append(moe) or real(sh, kn, moe, *a)
    )
    stages = estimate(args, 4).stages
    assert sorted(calls) == [False, False, True, True], "two stages, each with a dense and a MoE layer"
    sh = estimator.model_shape(estimator.with_defaults(args), 1)
    for stage, layers in zip(stages, ([False, True, True, True], [False, True, True, True]), strict=True):
        expert = sum(params.layer_params(sh, moe, 1, 2, 1)[1] for moe in layers)
        assert stage.expert_params == expert
    assert activations.layer_activation is real
