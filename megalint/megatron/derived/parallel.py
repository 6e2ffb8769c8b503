"""The parallel sizes: tensor-parallel weight shards, the pipeline size (clamped before 0.12),
the model-parallel total, data parallelism and sequence parallelism."""

from __future__ import annotations

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, at_least, cite
from megalint.shell.values import Unknown


def parallel_sizes(d: Deriver) -> None:
    v = d.version
    tp = d.arg("tensor_model_parallel_size", 1)
    if at_least(v, "0.19"):
        # resolve_tensor_parallel_weight_shards: megatron/core/model_parallel_config.py:10@HEAD,
        # called at arguments.py:417@HEAD (:415@core_v0.19.0).
        def gtp(tp: int, shards: int | None) -> Computed:
            if shards is None:
                return 1, "1 (--tensor-parallel-num-weight-shards not given)"
            if shards < tp or shards % tp:
                return (
                    None,
                    "",
                    (
                        f"tensor_parallel_num_weight_shards ({shards}) must be "
                        f">= and divisible by tensor_model_parallel_size ({tp})"
                    ),
                )
            return shards // tp, f"{shards} // {tp}"

        d.need(
            "gtp_weight_remat_size",
            {
                "tensor_model_parallel_size": tp,
                "tensor_parallel_num_weight_shards": d.arg("tensor_parallel_num_weight_shards"),
            },
            "megatron/core/model_parallel_config.py:10@HEAD",
            lambda tensor_model_parallel_size, tensor_parallel_num_weight_shards: gtp(
                tensor_model_parallel_size, tensor_parallel_num_weight_shards
            ),
        )
    else:
        d.put("gtp_weight_remat_size", 1, "no weight-shard axis before 0.19")

    pp = d.arg("pipeline_model_parallel_size", 1)
    world = d.get("world_size")
    if v == "0.8" or not at_least(v, "0.12"):
        # PP is clamped to world // TP without a word (arguments.py:165@core_v0.8.0), after
        # world % TP is asserted (arguments.py:160@core_v0.8.0).
        def clamp(world_size: int, tensor_model_parallel_size: int, pipeline_model_parallel_size: int) -> Computed:
            if world_size % tensor_model_parallel_size:
                return (
                    None,
                    "",
                    (
                        f"world size ({world_size}) is not divisible by tensor "
                        f"model parallel size ({tensor_model_parallel_size})"
                    ),
                )
            cap = world_size // tensor_model_parallel_size
            eff = min(pipeline_model_parallel_size, cap)
            return eff, f"min({pipeline_model_parallel_size}, {world_size} // {tensor_model_parallel_size})"

        d.need(
            "pipeline_model_parallel_size",
            {"world_size": world, "tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp},
            f"{ARGS}:165@core_v0.8.0",
            clamp,
        )
        standalone = d.arg("standalone_embedding_stage", False)
        ppv = d.get("pipeline_model_parallel_size")
        if isinstance(ppv, Unknown) or isinstance(standalone, Unknown):
            d.put(
                "transformer_pipeline_model_parallel_size",
                ppv if isinstance(ppv, Unknown) else standalone,
                "needs PP",
                source=f"{ARGS}:168@core_v0.8.0",
            )
        else:
            d.put(
                "transformer_pipeline_model_parallel_size",
                ppv - 1 if standalone else ppv,
                f"{ppv} - 1 (--standalone-embedding-stage)" if standalone else str(ppv),
                ("pipeline_model_parallel_size", "standalone_embedding_stage"),
                f"{ARGS}:168@core_v0.8.0",
            )
    else:
        d.put("pipeline_model_parallel_size", pp, "--pipeline-model-parallel-size", ("pipeline_model_parallel_size",))
        d.put(
            "transformer_pipeline_model_parallel_size",
            pp,
            "= pipeline_model_parallel_size",
            ("pipeline_model_parallel_size",),
            cite(
                v,
                {
                    "0.12": f"{ARGS}:323@core_v0.12.0",
                    "0.15": f"{ARGS}:382@core_v0.15.0",
                    "0.19": f"{ARGS}:438@core_v0.19.0",
                    "HEAD": f"{ARGS}:440@HEAD",
                },
            ),
        )


def data_parallel(d: Deriver) -> None:
    v = d.version
    tp = d.arg("tensor_model_parallel_size", 1)
    cp = d.arg("context_parallel_size", 1)
    pp = d.get("pipeline_model_parallel_size")
    gtp = d.get("gtp_weight_remat_size")
    world = d.get("world_size")
    if at_least(v, "0.19"):
        source = cite(v, {"0.19": f"{ARGS}:422-446@core_v0.19.0", "HEAD": f"{ARGS}:424-448@HEAD"})

        def total(
            tensor_model_parallel_size: int,
            pipeline_model_parallel_size: int,
            context_parallel_size: int,
            gtp_weight_remat_size: int,
        ) -> Computed:
            t = (
                tensor_model_parallel_size
                * pipeline_model_parallel_size
                * context_parallel_size
                * gtp_weight_remat_size
            )
            return t, (
                f"TP×PP×CP×GTP = {tensor_model_parallel_size}×"
                f"{pipeline_model_parallel_size}×{context_parallel_size}×"
                f"{gtp_weight_remat_size}"
            )

        d.need(
            "total_model_size",
            {
                "tensor_model_parallel_size": tp,
                "pipeline_model_parallel_size": pp,
                "context_parallel_size": cp,
                "gtp_weight_remat_size": gtp,
            },
            source,
            total,
        )
    elif at_least(v, "0.12") and not at_least(v, "0.15"):
        # Encoder and decoder sizes add up (arguments.py:300-312@core_v0.12.0).
        source = f"{ARGS}:300-325@core_v0.12.0"

        def total12(
            tensor_model_parallel_size: int,
            pipeline_model_parallel_size: int,
            context_parallel_size: int,
            encoder_tensor_model_parallel_size: int | None,
            encoder_pipeline_model_parallel_size: int | None,
        ) -> Computed:
            etp = encoder_tensor_model_parallel_size or 0
            epp = encoder_pipeline_model_parallel_size or 0
            if epp > 0 and etp == 0:
                etp = tensor_model_parallel_size
            dec = tensor_model_parallel_size * pipeline_model_parallel_size * context_parallel_size
            enc = etp * epp * context_parallel_size
            how = f"TP×PP×CP = {tensor_model_parallel_size}×{pipeline_model_parallel_size}×{context_parallel_size}"
            if enc:
                how = f"encoder {etp}×{epp}×{context_parallel_size} + decoder " + how
            return enc + dec, how

        d.need(
            "total_model_size",
            {
                "tensor_model_parallel_size": tp,
                "pipeline_model_parallel_size": pp,
                "context_parallel_size": cp,
                "encoder_tensor_model_parallel_size": d.arg("encoder_tensor_model_parallel_size", 0),
                "encoder_pipeline_model_parallel_size": d.arg("encoder_pipeline_model_parallel_size", 0),
            },
            source,
            total12,
        )
    else:
        source = cite(v, {"0.8": f"{ARGS}:175-182@core_v0.8.0", "0.15": f"{ARGS}:371-385@core_v0.15.0"})

        def total3(
            tensor_model_parallel_size: int, pipeline_model_parallel_size: int, context_parallel_size: int
        ) -> Computed:
            return (
                tensor_model_parallel_size * pipeline_model_parallel_size * context_parallel_size,
                f"TP×PP×CP = {tensor_model_parallel_size}×{pipeline_model_parallel_size}×{context_parallel_size}",
            )

        d.need(
            "total_model_size",
            {"tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp, "context_parallel_size": cp},
            source,
            total3,
        )

    def dp(world_size: int, total_model_size: int) -> Computed:
        if world_size % total_model_size:
            return (
                None,
                "",
                (f"world size ({world_size}) is not divisible by total_model_size ({total_model_size})"),
            )
        return world_size // total_model_size, f"{world_size} // {total_model_size}"

    d.need("data_parallel_size", {"world_size": world, "total_model_size": d.get("total_model_size")}, source, dp)

    # Megatron turns sequence parallelism off when TP is 1 (arguments.py:1433@HEAD,
    # :1393@core_v0.19.0, :922@core_v0.15.0, :758@core_v0.12.0, :468@core_v0.8.0).
    sp = d.arg("sequence_parallel", False)
    d.need(
        "sequence_parallel",
        {"tensor_model_parallel_size": tp, "sequence_parallel": sp},
        cite(
            v,
            {
                "0.8": f"{ARGS}:468@core_v0.8.0",
                "0.12": f"{ARGS}:758@core_v0.12.0",
                "0.15": f"{ARGS}:922@core_v0.15.0",
                "0.19": f"{ARGS}:1393@core_v0.19.0",
                "HEAD": f"{ARGS}:1433@HEAD",
            },
        ),
        lambda tensor_model_parallel_size, sequence_parallel: (
            (False, "off: TP is 1")
            if tensor_model_parallel_size == 1
            else (bool(sequence_parallel), "--sequence-parallel")
        ),
    )
