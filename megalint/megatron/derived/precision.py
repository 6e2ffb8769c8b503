"""Precision: the parameters' dtype and whether gradients are reduced in fp32."""

from __future__ import annotations

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, at_least, cite


def precision(d: Deriver) -> None:
    v = d.version
    fp16 = d.arg("fp16", False)
    bf16 = d.arg("bf16", False)
    src = cite(
        v,
        {
            "0.8": f"{ARGS}:288-305@core_v0.8.0",
            "0.12": f"{ARGS}:571-594@core_v0.12.0",
            "0.15": f"{ARGS}:722-745@core_v0.15.0",
            "0.19": f"{ARGS}:1171-1193@core_v0.19.0",
            "HEAD": f"{ARGS}:1194-1216@HEAD",
        },
    )

    def dtype(fp16: bool, bf16: bool) -> Computed:
        if fp16 and bf16:
            return None, "", "--fp16 and --bf16 together: Megatron's bare assert fails"
        return (
            "fp16" if fp16 else "bf16" if bf16 else "fp32",
            "--fp16" if fp16 else "--bf16" if bf16 else "neither --fp16 nor --bf16",
        )

    d.need("params_dtype", {"fp16": fp16, "bf16": bf16}, src, dtype)

    acc = d.arg("accumulate_allreduce_grads_in_fp32", False)
    if not at_least(v, "0.12"):
        d.need(
            "accumulate_allreduce_grads_in_fp32",
            {"bf16": bf16, "acc": acc},
            src,
            lambda bf16, acc: (
                (True, "forced by --bf16") if bf16 else (bool(acc), "--accumulate-allreduce-grads-in-fp32")
            ),
        )
        return

    def acc_rule(bf16: bool, acc: bool, grad_reduce_in_bf16: bool, main_grads_dtype: str) -> Computed:
        if not bf16:
            return bool(acc), "--accumulate-allreduce-grads-in-fp32"
        if grad_reduce_in_bf16:
            return False, "off: --grad-reduce-in-bf16"
        if not acc and main_grads_dtype == "fp32":
            return True, "forced by --bf16 (main grads in fp32)"
        return bool(acc), "--accumulate-allreduce-grads-in-fp32"

    d.need(
        "accumulate_allreduce_grads_in_fp32",
        {
            "bf16": bf16,
            "acc": acc,
            "grad_reduce_in_bf16": d.arg("grad_reduce_in_bf16", False),
            "main_grads_dtype": d.arg("main_grads_dtype", "fp32"),
        },
        src,
        acc_rule,
    )
