"""The pipeline split: the layers it divides, the stages of --pipeline-model-parallel-layout,
and the virtual pipeline size."""

from __future__ import annotations

import re

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, at_least, cite
from megalint.shell.values import Unknown


def pipeline_layout(d: Deriver) -> None:
    """The stages and layer counts of --pipeline-model-parallel-layout (0.13+), parsed as
    PipelineParallelLayerLayout.parse_str_to_list does
    (megatron/core/transformer/pipeline_parallel_layer_layout.py:283-320@HEAD)."""

    # The layer count the pipeline split divides: --num-layers plus one for each of
    # --account-for-embedding/loss-in-pipeline-split (arguments.py:986-996@HEAD,
    # :588-598@core_v0.15.0, :480-490@core_v0.12.0).
    def split(num_layers: int | None, embedding: bool, loss: bool) -> Computed:
        if num_layers is None:
            return None, "--num-layers is not given"
        extra = int(bool(embedding)) + int(bool(loss))
        return num_layers + extra, (f"{num_layers} + {extra} (embedding/loss stages)" if extra else f"{num_layers}")

    d.need(
        "pipeline_split_layers",
        {
            "num_layers": d.arg("num_layers"),
            "embedding": d.arg("account_for_embedding_in_pipeline_split", False),
            "loss": d.arg("account_for_loss_in_pipeline_split", False),
        },
        cite(
            d.version,
            {
                "0.8": f"{ARGS}:263@core_v0.8.0",
                "0.12": f"{ARGS}:480-490@core_v0.12.0",
                "0.15": f"{ARGS}:588-598@core_v0.15.0",
                "HEAD": f"{ARGS}:986-996@HEAD",
            },
        ),
        split,
    )

    src = "megatron/core/transformer/pipeline_parallel_layer_layout.py:283-320@HEAD"
    layout = d.arg("pipeline_model_parallel_layout")
    names = (
        "pipeline_layout_stages",
        "pipeline_layout_decoder_layers",
        "pipeline_layout_mtp_layers",
        "pipeline_layout_problem",
    )
    if isinstance(layout, Unknown):
        for n in names:
            d.put(
                n,
                Unknown(f"{n} needs --pipeline-model-parallel-layout: {layout.reason}", layout.span),
                "needs the layout",
                ("pipeline_model_parallel_layout",),
                src,
            )
        return
    if layout is None or not isinstance(layout, str):
        for n in names:
            d.put(n, None, "no --pipeline-model-parallel-layout", (), src)
        return
    parsed = parse_pipeline_layout(layout)
    how = f"parsed from {layout!r}"
    inputs = ("pipeline_model_parallel_layout",)
    if isinstance(parsed, str):
        for n in names[:3]:
            d.put(n, Unknown(parsed), how, inputs, src, parsed)
        d.put(names[3], parsed, how, inputs, src)
        return
    flat = [c for stage in parsed for c in stage]
    d.put(names[0], len(parsed), how, inputs, src)
    d.put(names[1], flat.count("t"), how, inputs, src)
    d.put(names[2], flat.count("m"), how, inputs, src)
    problem = None
    if flat.count("E") != 1 or flat[:1] != ["E"]:
        problem = "the layout must start with exactly one embedding layer E"
    elif flat.count("L") != 1 or flat[-1:] != ["L"]:
        problem = "the layout must end with exactly one loss layer L"
    elif "m" in flat and "t" in flat[flat.index("m") :]:
        problem = "decoder layers t must come before the MTP layers m"
    d.put(names[3], problem, how, inputs, "megatron/core/transformer/pipeline_parallel_layer_layout.py:88-131@HEAD")


def virtual_pipeline(d: Deriver) -> None:
    v = d.version
    name = "virtual_pipeline_model_parallel_size"
    src = cite(
        v,
        {
            "0.8": f"{ARGS}:254-272@core_v0.8.0",
            "0.12": f"{ARGS}:429-468@core_v0.12.0",
            "0.15": f"{ARGS}:531-585@core_v0.15.0",
            "0.19": f"{ARGS}:893-949@core_v0.19.0",
            "HEAD": f"{ARGS}:927-983@HEAD",
        },
    )
    per_stage = d.arg("num_layers_per_virtual_pipeline_stage")
    per_rank = d.arg("num_virtual_stages_per_pipeline_rank")
    layout = d.arg("pipeline_model_parallel_layout")
    hybrid = d.arg("hybrid_layer_pattern")
    for dest, val in (
        ("num_layers_per_virtual_pipeline_stage", per_stage),
        ("num_virtual_stages_per_pipeline_rank", per_rank),
        ("pipeline_model_parallel_layout", layout),
        ("hybrid_layer_pattern", hybrid),
    ):
        if isinstance(val, Unknown):
            d.put(name, Unknown(f"{name} needs {dest}, which is unknown: {val.reason}"), f"needs {dest}", (dest,), src)
            return
    given = [
        d
        for d, val in (
            ("--num-layers-per-virtual-pipeline-stage", per_stage),
            ("--num-virtual-stages-per-pipeline-rank", per_rank),
            ("--pipeline-model-parallel-layout", layout),
        )
        if val is not None
    ]
    if len(given) > 1:
        msg = f"{' and '.join(given)} cannot be set at the same time"
        d.put(name, Unknown(msg), "", tuple(given), src, msg)
        return
    reset_one = at_least(v, "0.15")  # VPP 1 becomes None from 0.15 on
    if hybrid is not None and at_least(v, "0.19"):
        d.put(
            name,
            Unknown(
                "the virtual pipeline size comes from the '|' segments of "
                "--hybrid-layer-pattern, which megalint does not compute"
            ),
            "from --hybrid-layer-pattern",
            ("hybrid_layer_pattern",),
            src,
        )
        return
    if layout is not None:
        # arguments.py:943-952@HEAD: VPP = stages // PP, None when 1.
        stages = d.get("pipeline_layout_stages")
        pp = d.get("pipeline_model_parallel_size")

        def from_layout(pipeline_layout_stages: int | None, pipeline_model_parallel_size: int) -> Computed:
            if pipeline_layout_stages is None:
                return None, "", "the layout has no stages"
            if pipeline_layout_stages % pipeline_model_parallel_size:
                return (
                    None,
                    "",
                    (
                        f"the layout's {pipeline_layout_stages} stages are not "
                        f"divisible by pipeline_model_parallel_size "
                        f"({pipeline_model_parallel_size})"
                    ),
                )
            value = pipeline_layout_stages // pipeline_model_parallel_size
            how = f"{pipeline_layout_stages} layout stages // PP {pipeline_model_parallel_size}"
            return (None if value == 1 else value), how

        d.need(name, {"pipeline_layout_stages": stages, "pipeline_model_parallel_size": pp}, src, from_layout)
        return
    if per_rank is not None:
        value = per_rank
        if reset_one and value == 1:
            value = None
        d.put(
            name,
            value,
            f"--num-virtual-stages-per-pipeline-rank {per_rank}",
            ("num_virtual_stages_per_pipeline_rank",),
            src,
        )
        return
    if per_stage is None:
        d.put(name, None, "no virtual pipeline flag given", (), src)
        return
    num_layers = d.arg("num_layers")
    if num_layers is None:
        num_layers = d.arg("decoder_num_layers")
    tpp = d.get("transformer_pipeline_model_parallel_size")
    extra = 0
    if at_least(v, "0.12"):
        for dest in ("account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"):
            flag = d.arg(dest, False)
            if isinstance(flag, Unknown):
                d.put(name, Unknown(f"{name} needs {dest}: {flag.reason}"), "", (dest,), src)
                return
            extra += 1 if flag else 0

    def vpp(
        num_layers: int | None,
        transformer_pipeline_model_parallel_size: int,
        num_layers_per_virtual_pipeline_stage: int,
    ) -> Computed:
        if num_layers is None:
            return None, "", "--num-layers is not given"
        layers = num_layers + extra
        pp = transformer_pipeline_model_parallel_size
        if layers % pp:
            return (
                None,
                "",
                (f"number of layers ({layers}) is not divisible by the pipeline model parallel size ({pp})"),
            )
        per_pp = layers // pp
        if per_pp % num_layers_per_virtual_pipeline_stage:
            return (
                None,
                "",
                (
                    f"layers per pipeline stage ({per_pp}) is not divisible by "
                    f"--num-layers-per-virtual-pipeline-stage "
                    f"({num_layers_per_virtual_pipeline_stage})"
                ),
            )
        value = per_pp // num_layers_per_virtual_pipeline_stage
        how = f"({layers} // {pp}) // {num_layers_per_virtual_pipeline_stage}"
        if reset_one and value == 1:
            return None, how + " = 1, which Megatron sets to None"
        return value, how

    d.need(
        name,
        {
            "num_layers": num_layers,
            "transformer_pipeline_model_parallel_size": tpp,
            "num_layers_per_virtual_pipeline_stage": per_stage,
        },
        src,
        vpp,
    )


_LAYOUT_UNROLL = (re.compile(r"\(([^)]+)\)\*(\d+)"), re.compile(r"(.)\*(\d+)"))


def parse_pipeline_layout(text: str) -> list[list[str]] | str:
    """The stages of a pipeline layout string ("Et*3|(tt|)*2,L"), or the problem Megatron would
    stop with. Commas are cosmetic; `(...)*n` then `x*n` are unrolled, like Megatron's re.sub."""
    s = text.replace(",", "")
    for pattern in _LAYOUT_UNROLL:
        total = 0
        for m in pattern.finditer(s):
            total += len(m.group(1)) * int(m.group(2))
            if total > 1_000_000:
                return "the layout unrolls to more than a million layers"
        s = pattern.sub(lambda m: m.group(1) * int(m.group(2)), s)
    stages = []
    for stage in s.split("|"):
        for ch in stage:
            if ch not in "ELtm":
                return f"invalid layer character {ch!r} in the layout (known: E embedding, L loss, t decoder, m MTP)"
        stages.append(list(stage))
    return stages
