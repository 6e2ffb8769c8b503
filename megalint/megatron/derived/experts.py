"""Mixture of experts: the expert tensor-parallel and data-parallel sizes and the expert FFN width."""

from __future__ import annotations

from typing import Any

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, at_least, cite
from megalint.shell.values import Unknown


def experts(d: Deriver) -> None:
    v = d.version
    tp = d.arg("tensor_model_parallel_size", 1)
    ep = d.arg("expert_model_parallel_size", 1)
    pp = d.get("pipeline_model_parallel_size")
    world = d.get("world_size")
    if at_least(v, "0.12"):
        etp_src = cite(
            v,
            {
                "0.12": f"{ARGS}:358-359@core_v0.12.0",
                "0.15": f"{ARGS}:439-440@core_v0.15.0",
                "0.19": f"{ARGS}:569-570@core_v0.19.0",
                "HEAD": f"{ARGS}:587-588@HEAD",
            },
        )
        etp_given = d.arg("expert_tensor_parallel_size")
        d.need(
            "expert_tensor_parallel_size",
            {"expert_tensor_parallel_size": etp_given, "tensor_model_parallel_size": tp},
            etp_src,
            lambda expert_tensor_parallel_size, tensor_model_parallel_size: (
                (expert_tensor_parallel_size, "--expert-tensor-parallel-size")
                if expert_tensor_parallel_size is not None
                else (tensor_model_parallel_size, "= tensor_model_parallel_size")
            ),
        )
        etp = d.get("expert_tensor_parallel_size")
        egtp: Any = 1
        if at_least(v, "0.19"):
            shards = d.arg("expert_tensor_parallel_num_weight_shards")
            if isinstance(shards, Unknown):
                egtp = shards
            elif shards is not None and not isinstance(etp, Unknown):
                egtp = (
                    shards // etp
                    if etp and shards % etp == 0 and shards >= etp
                    else Unknown(
                        f"expert_tensor_parallel_num_weight_shards ({shards}) must be "
                        f">= and divisible by expert_tensor_parallel_size ({etp})"
                    )
                )
        edp_src = cite(
            v,
            {
                "0.12": "megatron/core/parallel_state.py:696-699@core_v0.12.0",
                "0.15": "megatron/core/parallel_state.py:745-748@core_v0.15.0",
                "0.19": "megatron/core/parallel_state.py:874-880@core_v0.19.0",
                "HEAD": "megatron/core/parallel_state.py:874-880@HEAD",
            },
        )

        def edp(
            world_size: int,
            expert_tensor_parallel_size: int,
            expert_model_parallel_size: int,
            pipeline_model_parallel_size: int,
            expert_gtp_remat_size: int,
        ) -> Computed:
            size = (
                expert_tensor_parallel_size
                * expert_model_parallel_size
                * pipeline_model_parallel_size
                * expert_gtp_remat_size
            )
            if world_size % size:
                return (
                    None,
                    "",
                    (
                        f"world_size ({world_size}) is not divisible by "
                        f"expert_tensor_model_pipeline_parallel size ({size})"
                    ),
                )
            how = (
                f"{world_size} // (ETP×EP×PP = {expert_tensor_parallel_size}×"
                f"{expert_model_parallel_size}×{pipeline_model_parallel_size}"
            )
            how += f"×{expert_gtp_remat_size})" if expert_gtp_remat_size != 1 else ")"
            return world_size // size, how

        d.need(
            "expert_data_parallel_size",
            {
                "world_size": world,
                "expert_tensor_parallel_size": etp,
                "expert_model_parallel_size": ep,
                "pipeline_model_parallel_size": pp,
                "expert_gtp_remat_size": egtp,
            },
            edp_src,
            edp,
        )
    else:
        # 0.8: experts use TP; expert data parallel = DP // EP, and EP must divide DP
        # (megatron/core/parallel_state.py:442@core_v0.8.0).
        d.put(
            "expert_tensor_parallel_size",
            tp,
            "= tensor_model_parallel_size (no --expert-tensor-parallel-size in 0.8)",
            ("tensor_model_parallel_size",),
        )

        def edp8(data_parallel_size: int, expert_model_parallel_size: int) -> Computed:
            if data_parallel_size % expert_model_parallel_size:
                return (
                    None,
                    "",
                    (
                        f"data_parallel_size ({data_parallel_size}) is not "
                        f"divisible by expert_model_parallel_size "
                        f"({expert_model_parallel_size})"
                    ),
                )
            return (
                data_parallel_size // expert_model_parallel_size,
                f"{data_parallel_size} // {expert_model_parallel_size}",
            )

        d.need(
            "expert_data_parallel_size",
            {"data_parallel_size": d.get("data_parallel_size"), "expert_model_parallel_size": ep},
            "megatron/core/parallel_state.py:442@core_v0.8.0",
            edp8,
        )

    num_experts = d.arg("num_experts")
    moe_ffn = d.arg("moe_ffn_hidden_size")
    if at_least(v, "0.12"):
        src = cite(
            v,
            {
                "0.12": f"{ARGS}:842-843@core_v0.12.0",
                "0.15": f"{ARGS}:1028-1029@core_v0.15.0",
                "0.19": f"{ARGS}:1595-1596@core_v0.19.0",
                "HEAD": f"{ARGS}:1650-1651@HEAD",
            },
        )

        # 0.12 copies ffn_hidden_size whether or not the model has experts.
        always = not at_least(v, "0.15")

        def moe(num_experts: int | None, moe_ffn_hidden_size: int | None, ffn_hidden_size: int | None) -> Computed:
            if moe_ffn_hidden_size is not None:
                return moe_ffn_hidden_size, "--moe-ffn-hidden-size"
            if num_experts is None and not always:
                return None, "not a MoE model"
            return ffn_hidden_size, "= ffn_hidden_size"

        d.need(
            "moe_ffn_hidden_size",
            {
                "num_experts": num_experts,
                "moe_ffn_hidden_size": moe_ffn,
                "ffn_hidden_size": d.get("ffn_hidden_size")
                if (num_experts is not None or always) and moe_ffn is None
                else None,
            },
            src,
            moe,
        )
    else:
        d.put(
            "moe_ffn_hidden_size",
            moe_ffn,
            "--moe-ffn-hidden-size" if moe_ffn is not None else "not set",
            ("moe_ffn_hidden_size",),
        )
