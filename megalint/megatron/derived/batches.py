"""The batch sizes: the global batch and the micro-batches per step."""

from __future__ import annotations

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, at_least, cite
from megalint.shell.values import Unknown


def batches(d: Deriver) -> None:
    v = d.version
    mbs = d.arg("micro_batch_size")
    gbs = d.arg("global_batch_size")
    dp = d.get("data_parallel_size")
    src = cite(
        v,
        {
            "0.8": f"{ARGS}:248-249@core_v0.8.0",
            "0.12": f"{ARGS}:421-422@core_v0.12.0",
            "0.15": f"{ARGS}:524-525@core_v0.15.0",
            "0.19": f"{ARGS}:684-685@core_v0.19.0",
            "HEAD": f"{ARGS}:702-703@HEAD",
        },
    )

    def g(global_batch_size: int | None, micro_batch_size: int | None, data_parallel_size: int) -> Computed:
        if global_batch_size is not None:
            return global_batch_size, "--global-batch-size"
        if micro_batch_size is None:
            return None, "", "--micro-batch-size is required"
        return (
            micro_batch_size * data_parallel_size,
            f"micro_batch_size × data_parallel_size = {micro_batch_size} × {data_parallel_size}",
        )

    d.need(
        "global_batch_size",
        {
            "global_batch_size": gbs,
            "micro_batch_size": mbs if gbs is None else 0,
            "data_parallel_size": dp if gbs is None else 0,
        },
        src,
        g,
    )

    nm_src = cite(
        v,
        {
            "0.8": "megatron/core/num_microbatches_calculator.py:248@core_v0.8.0",
            "0.12": "megatron/core/num_microbatches_calculator.py:324-340@core_v0.12.0",
            "0.15": "megatron/core/num_microbatches_calculator.py:324-340@core_v0.15.0",
            "0.19": "megatron/core/num_microbatches_calculator.py:367-381@core_v0.19.0",
            "HEAD": "megatron/core/num_microbatches_calculator.py:367-381@HEAD",
        },
    )
    rampup = d.arg("rampup_batch_size")
    if rampup is not None and not at_least(v, "0.19"):
        d.put(
            "num_microbatches",
            Unknown("--rampup-batch-size changes the number of micro-batches during training"),
            "ramp-up",
            ("rampup_batch_size",),
            nm_src,
        )
        return

    def nm(global_batch_size: int, micro_batch_size: int | None, data_parallel_size: int) -> Computed:
        if micro_batch_size is None:
            return None, "", "--micro-batch-size is required"
        per = micro_batch_size * data_parallel_size
        if per == 0 or global_batch_size % per:
            return (
                None,
                "",
                (
                    f"global batch size ({global_batch_size}) is not divisible by "
                    f"micro batch size ({micro_batch_size}) times data parallel "
                    f"size ({data_parallel_size})"
                ),
            )
        return (global_batch_size // per, f"{global_batch_size} // ({micro_batch_size} × {data_parallel_size})")

    d.need(
        "num_microbatches",
        {"global_batch_size": d.get("global_batch_size"), "micro_batch_size": mbs, "data_parallel_size": dp},
        nm_src,
        nm,
    )
