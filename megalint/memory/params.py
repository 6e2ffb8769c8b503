"""Parameters held by one GPU: an attention block, an MLP, a dense or MoE transformer layer."""

from __future__ import annotations

from .shape import ModelShape


def attention_params(sh: ModelShape, tp: int) -> tuple[int, int]:
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


def mlp_params(sh: ModelShape, F: int, tp: int) -> tuple[int, int]:
    up = sh.h * F * (2 if sh.gated else 1)
    sharded = up + F * sh.h + ((F * (2 if sh.gated else 1)) if sh.bias else 0)
    repl = sh.h if sh.bias else 0
    return sharded // tp, repl


def layer_params(sh: ModelShape, moe: bool, tp: int, ep: int, etp: int) -> tuple[int, int]:
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
