"""The model's shape as the estimator reads it: layers, widths, heads, vocabulary, experts and
which layers hold them, multi-latent attention."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .arg_values import InvalidConfig, as_int, opt_int, truthy


def pad_vocab(vocab: int, divisible_by: int, tp: int) -> int:
    """Megatron's vocab_size_with_padding (megatron/training/tokenizer/tokenizer.py)."""
    multiple = divisible_by * tp
    return int(math.ceil(vocab / multiple) * multiple)


@dataclass
class ModelShape:
    """The sizes of the model that its memory depends on."""

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
    n = as_int(freq, "moe_layer_freq")
    return [i % n == 0 for i in range(L)]


def model_shape(a: Mapping[str, Any], tp: int) -> ModelShape:
    L = as_int(a["num_layers"], "num_layers")
    h = as_int(a["hidden_size"], "hidden_size")
    heads = as_int(a["num_attention_heads"], "num_attention_heads")
    d = opt_int(a, "kv_channels") or h // heads
    g = as_int(a["num_query_groups"], "num_query_groups") if truthy(a.get("group_query_attention")) else heads
    gated = truthy(a.get("swiglu"))
    F = opt_int(a, "ffn_hidden_size")
    if F is None:
        # megatron/training/arguments.py validate_args: swiglu keeps 8h/3 rounded to 64
        F = int((4 * h * 2 / 3) / 64) * 64 if gated else 4 * h
    V = opt_int(a, "padded_vocab_size")
    if V is None:
        V = pad_vocab(
            as_int(a["vocab_size"], "vocab_size"),
            as_int(a["make_vocab_size_divisible_by"], "make_vocab_size_divisible_by"),
            tp,
        )
    E = opt_int(a, "num_experts")
    Fe = opt_int(a, "moe_ffn_hidden_size") or F
    Fs = opt_int(a, "moe_shared_expert_intermediate_size") or 0
    pattern = _moe_pattern(a.get("moe_layer_freq", 1), L) if E else [False] * L
    mla = truthy(a.get("multi_latent_attention"))
    mla_dims = {
        k: opt_int(a, k) for k in ("q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim")
    }
    return ModelShape(
        L=L,
        h=h,
        a=heads,
        d=d,
        q=heads * d,
        g=g,
        k=g * d,
        F=F,
        V=V,
        s=as_int(a["seq_length"], "seq_length"),
        b=as_int(a["micro_batch_size"], "micro_batch_size"),
        gated=gated,
        rms=str(a.get("normalization")) == "RMSNorm",
        bias=truthy(a.get("add_bias_linear")),
        qkv_bias=truthy(a.get("add_qkv_bias")),
        qk_norm=truthy(a.get("qk_layernorm")),
        E=E,
        topk=as_int(a.get("moe_router_topk") or 2, "moe_router_topk"),
        Fe=Fe,
        Fs=Fs,
        moe_pattern=pattern,
        mla=mla,
        mla_dims=mla_dims,
        mtp=opt_int(a, "mtp_num_layers") or 0,
    )
