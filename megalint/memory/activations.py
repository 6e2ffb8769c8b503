"""Activations saved for the backward: per layer and micro-batch, what offloading keeps off the
GPU, and how many micro-batches a pipeline stage holds at its peak.

Activations follow Korthikanti et al. 2022 (arXiv:2205.05198, Table 2), counted per
saved tensor so that GQA, gated MLPs, flash vs unfused attention, dropout, SP, CP,
fp8 GEMM inputs, MoE, selective and full recompute and pipeline schedules each
change the tensors they change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .arg_values import as_words, opt_int, truthy
from .calibration import Calibration
from .shape import ModelShape


@dataclass
class Kernels:
    """Which kernels a launch runs: what the activations kept for backward depend on."""

    local: bool
    unfused: bool
    fp8: bool
    tsp: int
    dropout_h: bool
    dropout_attn: bool
    softmax_fp32: bool
    swiglu_fused: bool
    gelu_fused: bool
    recompute: str | None
    modules: frozenset[str]
    method: str | None
    rnum: int


def kernels(a: Mapping[str, Any], tp: int) -> Kernels:
    local = str(a.get("transformer_impl")) == "local"
    backend = str(a.get("attention_backend") or "auto").split(".")[-1].lower()
    unfused = local or backend in ("unfused", "local")
    rg = a.get("recompute_granularity")
    rg = None if rg in (None, "", "none") else str(rg)
    if truthy(a.get("recompute_activations")) and rg is None:
        rg = "selective"
    mods = as_words(a.get("recompute_modules"))
    if rg == "selective" and not mods:
        mods = ["core_attn"]
    return Kernels(
        local=local,
        unfused=unfused,
        fp8=bool(a.get("fp8")),
        tsp=tp if (truthy(a.get("sequence_parallel")) and tp > 1) else 1,
        dropout_h=float(a.get("hidden_dropout") or 0) > 0,
        dropout_attn=float(a.get("attention_dropout") or 0) > 0,
        # An fp32 softmax output is kept for backward only when the softmax runs as torch
        # ops: Megatron's local attention without the fused masked-softmax kernel. The
        # fused kernels (Megatron's, and Transformer Engine's unfused attention) compute
        # in fp32 but save their output in the input dtype.
        softmax_fp32=truthy(a.get("attention_softmax_in_fp32"))
        and local
        and not truthy(a.get("masked_softmax_fusion")),
        swiglu_fused=truthy(a.get("bias_swiglu_fusion")) or not local,
        gelu_fused=truthy(a.get("bias_gelu_fusion")) or not local,
        recompute=rg,
        modules=frozenset(mods or ()),
        method=a.get("recompute_method"),
        rnum=opt_int(a, "recompute_num_layers") or 1,
    )


def layer_activation(
    sh: ModelShape, kn: Kernels, moe: bool, tp: int, cp: int, ep: int, etp: int, cal: Calibration
) -> tuple[float, float]:
    """(stored bytes, unfused-score bytes) of one layer for one micro-batch.

    The second number is the part that is quadratic in the sequence (stored softmax
    probabilities), kept apart because the attention backward transient scales with it.
    """
    h, q, k = sh.h, sh.q, sh.k
    T = sh.s * sh.b / cp  # tokens of this rank's sequence chunk
    tsp = kn.tsp
    gb = 1.0 if kn.fp8 else 2.0  # bytes of a saved GEMM input
    sel = kn.recompute == "selective"
    mods = kn.modules if sel else frozenset()

    # two norms: input (2h) and output = GEMM input (gb*h); local torch RMSNorm keeps more
    norm_in = 2 * h * 2
    norm_out = 0 if "layernorm" in mods else gb * h * 2
    norm_extra = cal.local_rmsnorm_extra_per_h * h * 2 if (kn.local and sh.rms) else 0
    drop = 2 * h if kn.dropout_h else 0  # bias-dropout-add masks, 1 byte each
    per_token = (norm_in + norm_out + norm_extra + drop) / tsp

    # attention (heads are TP-sharded)
    if sh.mla:
        md = sh.mla_dims
        qk = (md["qk_head_dim"] or 128) + (md["qk_pos_emb_head_dim"] or 64)
        qw, kw, vw = sh.a * qk, sh.a * qk, sh.a * (md["v_head_dim"] or 128)
        attn = (
            2 * qw + 2 * kw + 2 * vw + gb * vw + 2 * ((md["kv_lora_rank"] or 32) + (md["q_lora_rank"] or 0)) * tp
        ) / tp
    elif kn.unfused:
        # local DotProductAttention repeats K/V to query width for GQA
        attn = (2 * q * 3 + gb * q) / tp
        if sh.g == sh.a and kn.local:
            attn += cal.local_mha_alias_per_q * q / tp
        if "core_attn" in mods:
            attn = (2 * q + 4 * k + gb * q) / tp
    else:
        attn = (2 * q + 4 * k + gb * q) / tp  # Q, K, V, output = proj input
    per_token += attn

    # unfused attention: bf16 probabilities (+ fp32 softmax output, + dropout mask
    # and output) per score element; the probabilities' size is also returned, as the
    # backward transient scales with it even when core attention is recomputed
    probs = 0.0
    stored = 0.0
    if kn.unfused:
        sk = sh.s / cp
        probs = 2.0 * (sh.a / tp) * sk * T
        per_el = 2.0 + (4.0 if kn.softmax_fp32 else 0.0) + (3.0 if kn.dropout_attn else 0.0)
        if "core_attn" not in mods:
            stored = per_el / 2.0 * probs

    # MLP
    if not moe:
        per_token += _mlp_act(sh.F, sh, kn, gb, mods, "mlp") / tp
    else:
        topk = sh.topk
        tokens_expert = topk  # balanced routing: each token reaches topk experts
        router = 2 * h / tsp
        if "moe" in mods:
            per_token += router + 2 * h / tsp
        else:
            per_token += router + tokens_expert * (gb * h + _mlp_act(sh.Fe, sh, kn, gb, mods, "moe_act") / etp) / max(
                1, tp // etp if tsp == 1 else 1
            )
            per_token += 2 * h * topk / tsp  # permuted/unpermuted token copies
        if sh.Fs and "shared_experts" not in mods:
            per_token += _mlp_act(sh.Fs, sh, kn, gb, mods, "mlp") / tp
    return per_token * T + stored, probs


# Saved tensors that --fine-grained-activation-offloading moves to host memory, per
# --offload-modules name (megatron/core/transformer: each module offloads the inputs
# its backward needs): the two norms their bf16 inputs, qkv_linear and attn_proj the
# GEMM inputs, core_attn Q, K and V, expert_fc1 the permuted tokens, moe_act the
# expert fc1 output.
OFFLOAD_MODULES = ("attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act")


def offloaded_activation(
    sh: ModelShape, kn: Kernels, moe: bool, tp: int, cp: int, etp: int, modules: frozenset[str]
) -> float:
    """Bytes of one layer's saved tensors (one micro-batch) that activation offloading
    keeps off the GPU while the layer waits for its backward."""
    if not modules:
        return 0.0
    h, q, k = sh.h, sh.q, sh.k
    T = sh.s * sh.b / cp
    tsp = kn.tsp
    gb = 1.0 if kn.fp8 else 2.0
    mods = kn.modules if kn.recompute == "selective" else frozenset()
    per_token = 0.0
    if "attn_norm" in modules:
        per_token += 2 * h / tsp
    if "mlp_norm" in modules:
        per_token += 2 * h / tsp
    if "qkv_linear" in modules and "layernorm" not in mods:
        per_token += gb * h / tsp
    stored_scores = 0.0
    if sh.mla:
        md = sh.mla_dims
        qk = (md["qk_head_dim"] or 128) + (md["qk_pos_emb_head_dim"] or 64)
        qkv_w, out_w = sh.a * (2 * qk + (md["v_head_dim"] or 128)), sh.a * (md["v_head_dim"] or 128)
    elif kn.unfused:
        qkv_w, out_w = 3 * q, q  # K/V repeated to query width
    else:
        qkv_w, out_w = q + 2 * k, q
    if "core_attn" in modules and "core_attn" not in mods:
        per_token += 2 * qkv_w / tp
        if kn.unfused:
            # the probabilities (with the fp32 softmax output and dropout mask when kept)
            per_el = 2.0 + (4.0 if kn.softmax_fp32 else 0.0) + (3.0 if kn.dropout_attn else 0.0)
            stored_scores = per_el / 2.0 * 2.0 * (sh.a / tp) * (sh.s / cp) * T
    if "attn_proj" in modules:
        per_token += gb * out_w / tp
    if moe and "moe" not in mods:
        if "expert_fc1" in modules:
            per_token += sh.topk * gb * h / max(1, tp // etp if tsp == 1 else 1)
        if "moe_act" in modules:
            per_token += sh.topk * 2 * (2 if sh.gated else 1) * sh.Fe / etp / max(1, tp // etp if tsp == 1 else 1)
    return per_token * T + stored_scores


def _mlp_act(F: int, sh: ModelShape, kn: Kernels, gb: float, mods: frozenset[str], name: str) -> float:
    """Bytes per token saved by one MLP of intermediate width F (before TP split)."""
    fc1_in = gb * sh.h * 0  # counted with the norm output
    if name in mods or ("mlp" in mods and name == "mlp"):
        return 0.0
    if sh.gated:
        fc1_out = 2 * 2 * F  # both halves kept by the swiglu backward
        act_out = gb * F  # fc2 input
        extra = 0 if kn.swiglu_fused else 2 * F  # silu(x1) kept separately when unfused
        if name == "moe_act" and "moe_act" in mods:
            return fc1_in + 2 * 2 * F
        return fc1_in + fc1_out + act_out + extra
    fc1_out = 2 * F
    return fc1_in + fc1_out + gb * F + (0 if kn.gelu_fused else 2 * F)


def inflight(pp: int, rank: int, vpp: int, m: int) -> float:
    """Micro-batches of a stage's layers held at the peak, in units of the stage's layers.

    1F1B: min(pp - rank, m). Interleaved: Megatron runs (pp - rank - 1) * 2 + (vpp - 1) * pp
    warm-up chunk forwards before the first backward (schedules.py), each chunk holding
    1/vpp of the stage's layers.
    """
    if vpp <= 1:
        return float(min(pp - rank, m))
    warm = (pp - rank - 1) * 2 + (vpp - 1) * pp
    return min(warm + 1, m * vpp) / vpp
