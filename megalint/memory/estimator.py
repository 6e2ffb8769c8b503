"""Per-GPU peak memory of Megatron-LM GPT training, from the launch arguments alone.

Model states follow Megatron's byte accounting (docs/user-guide/features/dist_optimizer.md,
megatron/training/theoretical_memory_usage.py): bf16 parameters 2 B, fp32 gradient
buffer 4 B, fp32 main parameters 4 B and Adam moments 8 B per parameter; the last
three are sharded over DP x CP (expert DP for routed experts) with the distributed
optimizer.

Activations follow Korthikanti et al. 2022 (arXiv:2205.05198, Table 2), counted per
saved tensor so that GQA, gated MLPs, flash vs unfused attention, dropout, SP, CP,
fp8 GEMM inputs, MoE, selective and full recompute and pipeline schedules each
change the tensors they change. The estimate is per pipeline stage; the peak of a
stage is the largest of three moments: the loss of a micro-batch (last stage), the
backward of the last layer held, and the optimizer step.

Pure function of the argument values: no torch, no Megatron import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .calibration import (
    CUDA_CONTEXT_BYTES,
    DEFAULT_CALIBRATION,
    FRAGMENTATION_FRACTION,
    NCCL_PER_COMMUNICATOR_BYTES,
    Calibration,
)
from .defaults import REQUIRED, with_defaults


class InvalidConfig(ValueError):
    """The arguments describe no valid Megatron layout for this world size."""


@dataclass(frozen=True)
class StageEstimate:
    stage: str  # "first", "middle" or "last" ("only" when PP = 1)
    pp_rank: int
    num_layers: int
    params: int  # parameters held by this GPU (dense + local experts)
    expert_params: int
    terms: dict[str, int]  # bytes
    peak_bytes: int  # predicted torch.cuda.max_memory_allocated()
    peak_event: str

    @property
    def peak_terms(self) -> dict[str, int]:
        """The terms alive together at the peak event; they add up to peak_bytes."""
        keep = STATIC_TERMS + EVENT_TERMS.get(self.peak_event, ())
        return {k: v for k, v in self.terms.items() if k in keep}

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "pp_rank": self.pp_rank,
            "num_layers": self.num_layers,
            "params": self.params,
            "expert_params": self.expert_params,
            "terms": dict(self.terms),
            "peak_bytes": self.peak_bytes,
            "peak_event": self.peak_event,
            "peak_terms": self.peak_terms,
        }


# Which terms each moment of a step holds besides the static ones (see `estimate`).
STATIC_TERMS = ("params", "grads", "optimizer_state", "workspace", "attention_buffers", "cuda_graph_buffers")
EVENT_TERMS = {
    "loss": ("activations", "embedding_and_final_norm_activations", "deferred_embedding_wgrad", "logits_and_loss"),
    "backward": (
        "activations",
        "embedding_and_final_norm_activations",
        "deferred_embedding_wgrad",
        "backward_transient",
    ),
    "optimizer_step": ("optimizer_step_transient",),
}


@dataclass(frozen=True)
class MemoryEstimate:
    stages: tuple[StageEstimate, ...]
    overhead_bytes: int  # outside PyTorch's allocator: context, NCCL, fragmentation
    overhead_terms: dict[str, int]
    world_size: int
    layout: dict[str, int]
    assumptions: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # required arguments that were not known

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def peak_bytes(self) -> int | None:
        """Largest predicted max_memory_allocated over the pipeline stages."""
        return max((s.peak_bytes for s in self.stages), default=None) if self.complete else None

    @property
    def device_bytes(self) -> int | None:
        """peak_bytes plus overhead: what the GPU must hold."""
        p = self.peak_bytes
        return None if p is None else p + self.overhead_bytes

    def stage(self, name: str) -> StageEstimate | None:
        for s in self.stages:
            if s.stage == name or (s.stage == "only" and name in ("first", "last")):
                return s
        return None

    def fits(self, usable_bytes: int) -> bool | None:
        d = self.device_bytes
        return None if d is None else d <= usable_bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "missing": list(self.missing),
            "world_size": self.world_size,
            "layout": dict(self.layout),
            "peak_bytes": self.peak_bytes,
            "overhead_bytes": self.overhead_bytes,
            "overhead_terms": dict(self.overhead_terms),
            "device_bytes": self.device_bytes,
            "stages": [s.to_json() for s in self.stages],
            "assumptions": list(self.assumptions),
        }


# --------------------------------------------------------------------------- helpers


def _int(v: Any, name: str) -> int:
    if isinstance(v, bool) or v is None:
        raise InvalidConfig(f"{name} must be an integer, got {v!r}")
    try:
        return int(v)
    except (TypeError, ValueError) as e:
        raise InvalidConfig(f"{name} must be an integer, got {v!r}") from e


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.lower() not in ("", "0", "false", "no", "none")
    return bool(v)


def _opt_int(a: Mapping[str, Any], name: str) -> int | None:
    v = a.get(name)
    return None if v is None else _int(v, name)


def pad_vocab(vocab: int, divisible_by: int, tp: int) -> int:
    """Megatron's vocab_size_with_padding (megatron/training/tokenizer/tokenizer.py)."""
    multiple = divisible_by * tp
    return int(math.ceil(vocab / multiple) * multiple)


@dataclass
class _Shape:
    L: int
    h: int
    a: int
    d: int
    q: int
    g: int
    k: int
    F: int
    V: int
    s: int
    b: int
    gated: bool
    rms: bool
    bias: bool
    qkv_bias: bool
    qk_norm: bool
    E: int | None
    topk: int
    Fe: int
    Fs: int
    moe_pattern: list[bool]
    mla: bool
    mla_dims: dict[str, int | None] = field(default_factory=dict)
    mtp: int = 0


def parse_layer_pattern(text: str) -> list[int]:
    """Megatron's --moe-layer-freq list expression, e.g. "([0]*3+[1]*5)*2" or "[1,0,1]".

    Megatron evaluates it as Python (arguments.py moe_freq_type); only list literals,
    ``+``, ``*`` and parentheses are accepted here, without eval.
    """
    pos = 0
    s = text.replace(" ", "")

    def expr() -> list[int] | int:
        nonlocal pos
        v = term()
        while pos < len(s) and s[pos] == "+":
            pos += 1
            w = term()
            if not isinstance(v, list) or not isinstance(w, list):
                raise InvalidConfig(f"bad layer pattern {text!r}")
            v = v + w
        return v

    def term() -> list[int] | int:
        nonlocal pos
        v = atom()
        while pos < len(s) and s[pos] == "*":
            pos += 1
            w = atom()
            if isinstance(v, list) and isinstance(w, int):
                v = v * w
            elif isinstance(v, int) and isinstance(w, list):
                v = w * v
            elif isinstance(v, int) and isinstance(w, int):
                v = v * w
            else:
                raise InvalidConfig(f"bad layer pattern {text!r}")
        return v

    def atom() -> list[int] | int:
        nonlocal pos
        if pos >= len(s):
            raise InvalidConfig(f"bad layer pattern {text!r}")
        c = s[pos]
        if c == "(":
            pos += 1
            v = expr()
            if pos >= len(s) or s[pos] != ")":
                raise InvalidConfig(f"bad layer pattern {text!r}")
            pos += 1
            return v
        if c == "[":
            pos += 1
            items: list[int] = []
            while pos < len(s) and s[pos] != "]":
                if s[pos] == ",":
                    pos += 1
                    continue
                n = atom()
                if not isinstance(n, int):
                    raise InvalidConfig(f"bad layer pattern {text!r}")
                items.append(n)
            pos += 1
            return items
        start = pos
        while pos < len(s) and s[pos].isdigit():
            pos += 1
        if start == pos:
            raise InvalidConfig(f"bad layer pattern {text!r}")
        return int(s[start:pos])

    v = expr()
    if pos != len(s):
        raise InvalidConfig(f"bad layer pattern {text!r}")
    return v if isinstance(v, list) else [v]


def _moe_pattern(freq: Any, L: int) -> list[bool]:
    if isinstance(freq, str):
        s = freq.strip()
        if "[" in s:
            vals = parse_layer_pattern(s)
            if len(vals) != L:
                raise InvalidConfig("--moe-layer-freq pattern length differs from --num-layers")
            return [bool(v) for v in vals]
        freq = int(s)
    if isinstance(freq, (list, tuple)):
        if len(freq) != L:
            raise InvalidConfig("--moe-layer-freq list length differs from --num-layers")
        return [bool(v) for v in freq]
    n = _int(freq, "moe_layer_freq")
    return [i % n == 0 for i in range(L)]


def _shape(a: Mapping[str, Any], tp: int) -> _Shape:
    L = _int(a["num_layers"], "num_layers")
    h = _int(a["hidden_size"], "hidden_size")
    heads = _int(a["num_attention_heads"], "num_attention_heads")
    d = _opt_int(a, "kv_channels") or h // heads
    g = _int(a["num_query_groups"], "num_query_groups") if _truthy(a.get("group_query_attention")) else heads
    gated = _truthy(a.get("swiglu"))
    F = _opt_int(a, "ffn_hidden_size")
    if F is None:
        # megatron/training/arguments.py validate_args: swiglu keeps 8h/3 rounded to 64
        F = int((4 * h * 2 / 3) / 64) * 64 if gated else 4 * h
    V = _opt_int(a, "padded_vocab_size")
    if V is None:
        V = pad_vocab(
            _int(a["vocab_size"], "vocab_size"),
            _int(a["make_vocab_size_divisible_by"], "make_vocab_size_divisible_by"),
            tp,
        )
    E = _opt_int(a, "num_experts")
    Fe = _opt_int(a, "moe_ffn_hidden_size") or F
    Fs = _opt_int(a, "moe_shared_expert_intermediate_size") or 0
    pattern = _moe_pattern(a.get("moe_layer_freq", 1), L) if E else [False] * L
    mla = _truthy(a.get("multi_latent_attention"))
    mla_dims = {
        k: _opt_int(a, k) for k in ("q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim")
    }
    return _Shape(
        L=L,
        h=h,
        a=heads,
        d=d,
        q=heads * d,
        g=g,
        k=g * d,
        F=F,
        V=V,
        s=_int(a["seq_length"], "seq_length"),
        b=_int(a["micro_batch_size"], "micro_batch_size"),
        gated=gated,
        rms=str(a.get("normalization")) == "RMSNorm",
        bias=_truthy(a.get("add_bias_linear")),
        qkv_bias=_truthy(a.get("add_qkv_bias")),
        qk_norm=_truthy(a.get("qk_layernorm")),
        E=E,
        topk=_int(a.get("moe_router_topk") or 2, "moe_router_topk"),
        Fe=Fe,
        Fs=Fs,
        moe_pattern=pattern,
        mla=mla,
        mla_dims=mla_dims,
        mtp=_opt_int(a, "mtp_num_layers") or 0,
    )


# --------------------------------------------------------------------------- parameters


def attention_params(sh: _Shape, tp: int) -> tuple[int, int]:
    """(TP-sharded, replicated) parameters of one attention block, per GPU."""
    h, norm = sh.h, (1 if sh.rms else 2) * sh.h
    if sh.mla:
        md = sh.mla_dims
        qk, rope, vd, kvr, qr = (
            md["qk_head_dim"] or 128,
            md["qk_pos_emb_head_dim"] or 64,
            md["v_head_dim"] or 128,
            md["kv_lora_rank"] or 32,
            md["q_lora_rank"],
        )
        n = sh.a
        if qr is None:
            q_params, q_repl = h * n * (qk + rope), 0
        else:
            q_params, q_repl = qr * n * (qk + rope), h * qr + qr  # down-projection is replicated
        sharded = q_params + kvr * n * (qk + vd) + n * vd * h
        repl = q_repl + h * (kvr + rope) + kvr + norm
        return sharded // tp, repl
    sharded = h * (sh.q + 2 * sh.k) + sh.q * h
    if sh.bias or sh.qkv_bias:
        sharded += sh.q + 2 * sh.k
    repl = norm + (h if sh.bias else 0) + (2 * sh.d if sh.qk_norm else 0)
    return sharded // tp, repl


def mlp_params(sh: _Shape, F: int, tp: int) -> tuple[int, int]:
    up = sh.h * F * (2 if sh.gated else 1)
    sharded = up + F * sh.h + ((F * (2 if sh.gated else 1)) if sh.bias else 0)
    repl = sh.h if sh.bias else 0
    return sharded // tp, repl


def layer_params(sh: _Shape, moe: bool, tp: int, ep: int, etp: int) -> tuple[int, int]:
    """(dense params, expert params) of one transformer layer on one GPU."""
    at, ar = attention_params(sh, tp)
    dense = at + ar + (1 if sh.rms else 2) * sh.h  # pre-MLP norm
    if not moe:
        mt, mr = mlp_params(sh, sh.F, tp)
        return dense + mt + mr, 0
    dense += sh.h * (sh.E or 0)  # router
    if sh.Fs:
        st, sr = mlp_params(sh, sh.Fs, tp)
        dense += st + sr
    et, er = mlp_params(sh, sh.Fe, etp)
    experts = ((sh.E or 0) // ep) * (et + er)
    return dense, experts


# --------------------------------------------------------------------------- layout


def _layout(a: Mapping[str, Any], world: int, L: int) -> dict[str, int]:
    tp = _int(a["tensor_model_parallel_size"], "tensor_model_parallel_size")
    pp = _int(a["pipeline_model_parallel_size"], "pipeline_model_parallel_size")
    cp = _int(a["context_parallel_size"], "context_parallel_size")
    ep = _int(a["expert_model_parallel_size"], "expert_model_parallel_size")
    etp = _opt_int(a, "expert_tensor_parallel_size") or tp
    if world % (tp * pp * cp):
        raise InvalidConfig(f"world size {world} is not divisible by TP*PP*CP = {tp * pp * cp}")
    dp = world // (tp * pp * cp)
    if world % (etp * ep * pp):
        raise InvalidConfig(f"world size {world} is not divisible by ETP*EP*PP = {etp * ep * pp}")
    edp = world // (etp * ep * pp)
    # --num-virtual-stages-per-pipeline-rank is the newer spelling of the chunk count
    vpp = _opt_int(a, "virtual_pipeline_model_parallel_size") or _opt_int(a, "num_virtual_stages_per_pipeline_rank")
    per_vs = _opt_int(a, "num_layers_per_virtual_pipeline_stage")
    if vpp is None and per_vs:
        vpp = L // pp // per_vs
    vpp = vpp or 1
    inst = _int(a.get("num_distributed_optimizer_instances") or 1, "num_distributed_optimizer_instances")
    mbs = _int(a["micro_batch_size"], "micro_batch_size")
    gbs = _opt_int(a, "global_batch_size") or mbs * dp
    if gbs % (mbs * dp):
        raise InvalidConfig(f"global batch {gbs} is not divisible by micro batch x DP = {mbs * dp}")
    return dict(
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ep,
        etp=etp,
        dp=dp,
        edp=edp,
        vpp=vpp,
        instances=inst,
        microbatches=gbs // (mbs * dp),
        world=world,
    )


def _stage_layers(a: Mapping[str, Any], L: int, pp: int, vpp: int) -> list[list[int]]:
    """Global layer indices held by each pipeline rank (all of its virtual chunks)."""
    first = _opt_int(a, "num_layers_in_first_pipeline_stage")
    last = _opt_int(a, "num_layers_in_last_pipeline_stage")
    if pp == 1:
        return [list(range(L))]
    if first is None and last is None:
        # Megatron requires divisibility unless a layout / embedding-accounting flag
        # moves layers; without modelling those, spread the remainder over the
        # leading chunks.
        n_chunks = pp * vpp
        # --account-for-{embedding,loss}-in-pipeline-split count the embedding and the
        # loss as one layer each of the first and the last virtual stage
        # (megatron/core/transformer/transformer_block.py get_num_layers_to_build)
        emb = 1 if _truthy(a.get("account_for_embedding_in_pipeline_split")) else 0
        loss = 1 if _truthy(a.get("account_for_loss_in_pipeline_split")) else 0
        base, extra = divmod(L + emb + loss, n_chunks)
        sizes = [base + (1 if i < extra else 0) for i in range(n_chunks)]
        sizes[0] = max(0, sizes[0] - emb)
        sizes[-1] = max(0, sizes[-1] - loss)
        ranks: list[list[int]] = [[] for _ in range(pp)]
        start = 0
        for chunk in range(vpp):
            for r in range(pp):
                n = sizes[chunk * pp + r]
                ranks[r].extend(range(start, start + n))
                start += n
        return ranks
    f = first if first is not None else None
    l_ = last if last is not None else None
    rest_ranks = pp - (f is not None) - (l_ is not None)
    rest = L - (f or 0) - (l_ or 0)
    if rest_ranks <= 0 or rest % rest_ranks:
        if rest_ranks == 0 and rest == 0:
            per = 0
        else:
            raise InvalidConfig("uneven pipeline split does not divide the remaining layers")
    else:
        per = rest // rest_ranks
    counts = [per] * pp
    if f is not None:
        counts[0] = f
    if l_ is not None:
        counts[-1] = l_
    out, start = [], 0
    for c in counts:
        out.append(list(range(start, start + c)))
        start += c
    return out


# --------------------------------------------------------------------------- activations


@dataclass
class _Kernels:
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


def _words(v: Any) -> list[str] | None:
    """A nargs='*' argument given as one string ("[a b]" or "a,b") or as a list."""
    if v is None:
        return None
    if isinstance(v, str):
        return [w for w in v.replace("[", " ").replace("]", " ").replace(",", " ").split() if w]
    return [str(w) for w in v]


def _kernels(a: Mapping[str, Any], tp: int) -> _Kernels:
    local = str(a.get("transformer_impl")) == "local"
    backend = str(a.get("attention_backend") or "auto").split(".")[-1].lower()
    unfused = local or backend in ("unfused", "local")
    rg = a.get("recompute_granularity")
    rg = None if rg in (None, "", "none") else str(rg)
    if _truthy(a.get("recompute_activations")) and rg is None:
        rg = "selective"
    mods = _words(a.get("recompute_modules"))
    if rg == "selective" and not mods:
        mods = ["core_attn"]
    return _Kernels(
        local=local,
        unfused=unfused,
        fp8=bool(a.get("fp8")),
        tsp=tp if (_truthy(a.get("sequence_parallel")) and tp > 1) else 1,
        dropout_h=float(a.get("hidden_dropout") or 0) > 0,
        dropout_attn=float(a.get("attention_dropout") or 0) > 0,
        # An fp32 softmax output is kept for backward only when the softmax runs as torch
        # ops: Megatron's local attention without the fused masked-softmax kernel. The
        # fused kernels (Megatron's, and Transformer Engine's unfused attention) compute
        # in fp32 but save their output in the input dtype.
        softmax_fp32=_truthy(a.get("attention_softmax_in_fp32"))
        and local
        and not _truthy(a.get("masked_softmax_fusion")),
        swiglu_fused=_truthy(a.get("bias_swiglu_fusion")) or not local,
        gelu_fused=_truthy(a.get("bias_gelu_fusion")) or not local,
        recompute=rg,
        modules=frozenset(mods or ()),
        method=a.get("recompute_method"),
        rnum=_opt_int(a, "recompute_num_layers") or 1,
    )


def _layer_activation(
    sh: _Shape, kn: _Kernels, moe: bool, tp: int, cp: int, ep: int, etp: int, cal: Calibration
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


def _offloaded_activation(
    sh: _Shape, kn: _Kernels, moe: bool, tp: int, cp: int, etp: int, modules: frozenset[str]
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


def _mlp_act(F: int, sh: _Shape, kn: _Kernels, gb: float, mods: frozenset[str], name: str) -> float:
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


def _inflight(pp: int, rank: int, vpp: int, m: int) -> float:
    """Micro-batches of a stage's layers held at the peak, in units of the stage's layers.

    1F1B: min(pp - rank, m). Interleaved: Megatron runs (pp - rank - 1) * 2 + (vpp - 1) * pp
    warm-up chunk forwards before the first backward (schedules.py), each chunk holding
    1/vpp of the stage's layers.
    """
    if vpp <= 1:
        return float(min(pp - rank, m))
    warm = (pp - rank - 1) * 2 + (vpp - 1) * pp
    return min(warm + 1, m * vpp) / vpp


# --------------------------------------------------------------------------- estimate


def estimate(
    args: Mapping[str, Any], world_size: int, calibration: Calibration = DEFAULT_CALIBRATION
) -> MemoryEstimate:
    """Predict per-GPU memory of a Megatron GPT training job for each pipeline stage.

    ``args`` maps Megatron argparse dest names to values; missing keys take Megatron's
    defaults. A required argument that is missing (or a vocabulary size when neither
    padded_vocab_size nor vocab_size is given) makes an incomplete estimate listing
    it in ``missing``. Raises InvalidConfig for layouts Megatron would reject.
    """
    a = with_defaults(args)
    missing = [k for k in REQUIRED if a.get(k) is None]
    if a.get("padded_vocab_size") is None and a.get("vocab_size") is None:
        missing.append("padded_vocab_size")
    if missing:
        return MemoryEstimate(
            stages=(), overhead_bytes=0, overhead_terms={}, world_size=world_size, layout={}, missing=tuple(missing)
        )
    world = _int(world_size, "world_size")
    L = _int(a["num_layers"], "num_layers")
    lay = _layout(a, world, L)
    tp, pp, cp, ep, etp, vpp = lay["tp"], lay["pp"], lay["cp"], lay["ep"], lay["etp"], lay["vpp"]
    sh = _shape(a, tp)
    kn = _kernels(a, tp)
    cal = calibration
    assumptions: list[str] = []

    # bytes per parameter
    fp16, bf16 = _truthy(a.get("fp16")), _truthy(a.get("bf16"))
    half = fp16 or bf16
    p_b = 2 if half else 4
    if _truthy(a.get("fp8_param_gather")):
        p_b = 1
    if not half:
        g_b = 4
    elif bf16:
        g_b = 2 if _truthy(a.get("grad_reduce_in_bf16")) else 4
    else:
        g_b = 4 if _truthy(a.get("accumulate_allreduce_grads_in_fp32")) else 2
    adam = str(a.get("optimizer") or "adam") == "adam"
    o_b = (8 if adam else 4) + (4 if half else 0) + (4 if half and g_b == 2 else 0)
    fsdp = _truthy(a.get("use_torch_fsdp2")) or _truthy(a.get("use_megatron_fsdp"))
    dist = _truthy(a.get("use_distributed_optimizer")) or fsdp
    shard = max(1, lay["dp"] * cp // lay["instances"]) if dist else 1
    eshard = max(1, lay["edp"] // lay["instances"]) if dist else 1
    if (
        str(a.get("cuda_graph_impl") or "none") != "none"
        or _truthy(a.get("enable_cuda_graph"))
        or _truthy(a.get("external_cuda_graph"))
    ):
        assumptions.append(
            "CUDA graphs: static input/output buffers of every graphed layer and micro-batch "
            "are counted; other private-pool overhead is not"
        )
    offload: frozenset[str] = frozenset()
    if _truthy(a.get("fine_grained_activation_offloading")):
        offload = frozenset(_words(a.get("offload_modules")) or ()) & frozenset(OFFLOAD_MODULES)
        assumptions.append(
            "fine-grained activation offloading: the saved tensors of "
            + (", ".join(sorted(offload)) or "no module")
            + " stay on the GPU only for the layer being computed"
        )
    if _truthy(a.get("cpu_offloading")):
        assumptions.append(
            "--cpu-offloading not modelled: offloaded activations are counted on the GPU, so the estimate is high"
        )
    graphs = (
        str(a.get("cuda_graph_impl") or "none") != "none"
        or _truthy(a.get("enable_cuda_graph"))
        or _truthy(a.get("external_cuda_graph"))
    )
    if _truthy(a.get("use_precision_aware_optimizer")):
        assumptions.append("precision-aware optimizer modelled as the default fp32 states")
    step_tmp = 4 if str(a.get("optimizer_impl")) == "torch" else 0

    stage_layers = _stage_layers(a, L, pp, vpp)
    m = lay["microbatches"]
    tied = not _truthy(a.get("untie_embeddings_and_output_weights"))
    learned_pos = str(a.get("position_embedding_type")) == "learned_absolute"
    max_pos = _opt_int(a, "max_position_embeddings") or sh.s
    T = sh.s * sh.b / cp

    ranks = [0] if pp == 1 else ([0, 1, pp - 1] if pp > 2 else [0, pp - 1])
    stages: list[StageEstimate] = []
    for r in ranks:
        name = "only" if pp == 1 else ("first" if r == 0 else "last" if r == pp - 1 else "middle")
        idx = stage_layers[r]
        dense = expert = 0
        scores_max = 0.0
        layer_acts: list[float] = []
        layer_off: list[float] = []
        for i in idx:
            moe = sh.moe_pattern[i]
            dp_, ex_ = layer_params(sh, moe, tp, ep, etp)
            dense += dp_
            expert += ex_
            act, sc = _layer_activation(sh, kn, moe, tp, cp, ep, etp, cal)
            layer_acts.append(act)
            layer_off.append(_offloaded_activation(sh, kn, moe, tp, cp, etp, offload))
            scores_max = max(scores_max, sc)
        first, last = r == 0, r == pp - 1
        norm_p = (1 if sh.rms else 2) * sh.h
        emb = 0
        if first:
            emb += sh.V * sh.h // tp + (max_pos * sh.h if learned_pos else 0)
        if last:
            dense += norm_p
            if not tied or pp > 1 or not first:
                emb += sh.V * sh.h // tp
            if sh.mtp:
                for _ in range(sh.mtp):
                    dp_, ex_ = layer_params(sh, bool(sh.E), tp, ep, etp)
                    dense += dp_ + 2 * sh.h * sh.h // tp + 3 * norm_p
                    expert += ex_
        dense += emb

        # model states
        terms: dict[str, int] = {}
        terms["params"] = int(dense * p_b / (shard if fsdp else 1) + expert * p_b / (eshard if fsdp else 1))
        terms["grads"] = int(dense * g_b / (shard if fsdp else 1) + expert * g_b / (eshard if fsdp else 1))
        terms["optimizer_state"] = int(dense * o_b / shard + expert * o_b / eshard)
        terms["workspace"] = cal.workspace_bytes
        if kn.local:
            # Megatron's own DotProductAttention (local spec) keeps a persistent global
            # matmul buffer ("mpu") and the cached causal mask. With the Transformer Engine
            # spec, --attention-backend unfused runs TE's UnfusedDotProductAttention, which
            # allocates its score tensor per call (it is counted with the layer).
            terms["attention_buffers"] = int(2 * (sh.a / tp) * sh.b * (sh.s / cp) ** 2 + sh.s**2)
        static = sum(terms.values())

        # activations held when the last micro-batch in flight reaches its backward
        n_layers = len(idx)
        inflight = _inflight(pp, r, vpp, m)
        avg = (sum(layer_acts) / n_layers) if n_layers else 0.0
        full = kn.recompute == "full"
        if full and n_layers:
            ckpt = 2 * sh.h * T / kn.tsp  # a checkpointed layer keeps its input
            if kn.method == "block":
                nrec = min(kn.rnum, n_layers)
                per_mb = nrec * ckpt + (n_layers - nrec) * avg
                recompute_chunk = avg
            else:
                groups = math.ceil(n_layers / kn.rnum)
                per_mb = groups * ckpt
                recompute_chunk = min(kn.rnum, n_layers) * avg
        else:
            per_mb = n_layers * avg
            recompute_chunk = 0.0
        held = per_mb * inflight
        if offload and n_layers and not full:
            # offloaded tensors leave the GPU once their layer's forward is done; the
            # layer whose backward runs has had them reloaded
            off_avg = sum(layer_off) / n_layers
            held -= off_avg * max(0.0, n_layers * inflight - 1)
        terms["activations"] = int(held)
        if graphs and n_layers:
            # Transformer Engine's make_graphed_callables captures one forward and one
            # backward graph per layer and micro-batch; each keeps static buffers for
            # its hidden-state input and output (forward) and for the incoming and
            # outgoing hidden-state gradient (backward): 4 x 2 bytes x h per token.
            terms["cuda_graph_buffers"] = int(4 * 2 * sh.h * T / kn.tsp * n_layers * m)
            static += terms["cuda_graph_buffers"]
        outside = 0.0
        if first:
            outside += (2 * sh.h + (sh.h if kn.dropout_h else 0)) * T / kn.tsp * inflight
        if last:
            outside += 4 * sh.h * T / kn.tsp  # final norm input and output
        if last and _truthy(a.get("defer_embedding_wgrad_compute")):
            # --defer-embedding-wgrad-compute: the output layer keeps each micro-batch's
            # input (bf16, T x h) and logits gradient (bf16, T x V/tp) until the weight
            # gradient is computed, at most --wgrad-deferral-limit of them at a time
            # (0: all micro-batches of the step; core/tensor_parallel/layers.py)
            limit = _opt_int(a, "wgrad_deferral_limit") or 0
            n_def = min(limit, m) if limit > 0 else m
            deferred = n_def * (2 * sh.h * T / kn.tsp + 2 * T * sh.V / tp)
            terms["deferred_embedding_wgrad"] = int(deferred)
            outside += deferred
        terms["embedding_and_final_norm_activations"] = int(outside - terms.get("deferred_embedding_wgrad", 0))

        # transient moments
        events: dict[str, float] = {}
        logits_el = T * sh.V / tp
        if last:
            lh = cal.logits_held_bytes
            lt = cal.logits_transient_bytes + (0.0 if kn.local else cal.te_logits_extra_bytes)
            terms["logits_and_loss"] = int(logits_el * (lh + lt))
            events["loss"] = static + held + outside + logits_el * (lh + lt)
        if not n_layers:
            layer_bwd = 0.0
        elif kn.unfused:
            # recomputed core attention (selective core_attn, or full recompute, whose
            # recomputed chunk holds the probabilities again) brings them back first
            again = 1.0 if (full or "core_attn" in kn.modules) and not full else 0.0
            layer_bwd = scores_max * (cal.unfused_attn_bwd_factor + again)
        else:
            layer_bwd = cal.layer_bwd_transient_factor * avg
        events["backward"] = static + held + outside + recompute_chunk + layer_bwd
        terms["backward_transient"] = int(recompute_chunk + layer_bwd)
        opt_tmp = int((dense / (shard if dist else 1) + expert / (eshard if dist else 1)) * step_tmp)
        terms["optimizer_step_transient"] = opt_tmp
        events["optimizer_step"] = static + opt_tmp
        ev = max(events, key=events.get)
        stages.append(
            StageEstimate(
                stage=name,
                pp_rank=r,
                num_layers=n_layers,
                params=dense + expert,
                expert_params=expert,
                terms=terms,
                peak_bytes=int(events[ev]),
                peak_event=ev,
            )
        )

    # outside the allocator. The caching allocator cannot place a block across
    # segments, so the largest single tensor can strand its own size in reserved but
    # unusable memory (seen on H200: 16 GiB score blocks failed at step 2 with
    # 11.7 GiB free, while 130 GiB peaks with 1.3 GiB blocks ran on a 139.8 GiB card).
    peak = max(s.peak_bytes for s in stages)
    largest_block = max(
        2.0 * (sh.a / tp) * (sh.s / cp) ** 2 * sh.b if kn.unfused else 0.0,
        4.0 * T * sh.V / tp,
    )
    comms = sum(1 for n in (tp, pp, cp, lay["dp"], ep, etp if etp != tp else 1) if n > 1)
    if lay["dp"] > 1 and cp > 1:
        comms += 1
    over = {
        "cuda_context": CUDA_CONTEXT_BYTES,
        "nccl": NCCL_PER_COMMUNICATOR_BYTES * comms,
        "fragmentation": int(max(FRAGMENTATION_FRACTION * peak, largest_block)),
    }
    return MemoryEstimate(
        stages=tuple(stages),
        overhead_bytes=sum(over.values()),
        overhead_terms=over,
        world_size=world,
        layout=lay,
        assumptions=tuple(assumptions),
    )
