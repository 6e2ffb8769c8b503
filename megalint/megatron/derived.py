"""Values Megatron-LM computes from its arguments before training, per version.

Each rule is Megatron's own, with the line it comes from as `file:line@version` (version = the
git tag, HEAD = main@d98e8a64). A value is known, or Unknown with the reason: an input that is
unknown, or a check Megatron would fail (then `error` says which, and the value is Unknown,
because Megatron never gets to compute it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from megalint.megatron.bound import BoundArgs
from megalint.megatron.versions import version_key
from megalint.shell.values import Unknown

__all__ = ["Derived", "derive", "derived_values"]

ARGS = "megatron/training/arguments.py"


@dataclass(frozen=True)
class Derived:
    name: str
    value: Any  # the value (None = "not set", as in Megatron), or Unknown
    how: str  # the computation with its numbers, for messages and `megalint model`
    inputs: tuple[str, ...] = ()  # the dests and derived names it reads
    source: str = ""  # file:line@version of the rule
    error: str | None = None  # what Megatron would stop with, when it would

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown)


def _at_least(version: str, other: str) -> bool:
    return version_key(version) >= version_key(other)


def _cite(version: str, table: dict[str, str]) -> str:
    """The citation for the newest listed version not newer than `version`."""
    best = None
    for v in table:
        if _at_least(version, v) and (best is None or version_key(v) > version_key(best)):
            best = v
    return table[best] if best is not None else ""


class _Deriver:
    def __init__(self, bound: BoundArgs, world_size: Any, version: str):
        self.bound = bound
        self.version = version
        self.out: dict[str, Derived] = {}
        if world_size is None:
            world: Any = Unknown("the world size is not known")
        elif isinstance(world_size, Unknown):
            world = world_size
        elif isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
            world = Unknown(f"the world size {world_size!r} is not a positive integer")
        else:
            world = world_size
        self.put("world_size", world, "the number of processes the launch starts")

    # -- helpers ---------------------------------------------------------------------------

    def arg(self, dest: str, absent: Any = None) -> Any:
        """A bound value; `absent` when this version has no such flag."""
        return self.bound.value(dest, absent)

    def get(self, name: str) -> Any:
        return self.out[name].value

    def put(
        self, name: str, value: Any, how: str, inputs: tuple[str, ...] = (), source: str = "", error: str | None = None
    ) -> Any:
        self.out[name] = Derived(name, value, how, inputs, source, error)
        return value

    def need(
        self,
        name: str,
        inputs: dict[str, Any],
        source: str,
        compute: Callable[..., tuple[Any, str] | tuple[Any, str, str]],
    ) -> Any:
        """Compute `name` from inputs when all are known; else Unknown naming the first one."""
        for key, value in inputs.items():
            if isinstance(value, Unknown):
                return self.put(
                    name,
                    Unknown(f"{name} needs {key}, which is unknown: {value.reason}", value.span),
                    f"needs {key}",
                    tuple(inputs),
                    source,
                )
        result = compute(**inputs)
        value, how = result[0], result[1]
        error = result[2] if len(result) > 2 else None
        if error is not None:
            value = Unknown(error)
        return self.put(name, value, how, tuple(inputs), source, error)

    # -- the rules ---------------------------------------------------------------------------

    def run(self) -> dict[str, Derived]:
        self.parallel_sizes()
        self.data_parallel()
        self.pipeline_layout()
        self.virtual_pipeline()
        self.model_shape()
        self.experts()
        self.batches()
        self.vocab()
        self.precision()
        return self.out

    def parallel_sizes(self) -> None:
        v = self.version
        tp = self.arg("tensor_model_parallel_size", 1)
        if _at_least(v, "0.19"):
            # resolve_tensor_parallel_weight_shards: megatron/core/model_parallel_config.py:10@HEAD,
            # called at arguments.py:417@HEAD (:415@core_v0.19.0).
            def gtp(tp: int, shards: int | None):
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

            self.need(
                "gtp_weight_remat_size",
                {
                    "tensor_model_parallel_size": tp,
                    "tensor_parallel_num_weight_shards": self.arg("tensor_parallel_num_weight_shards"),
                },
                "megatron/core/model_parallel_config.py:10@HEAD",
                lambda tensor_model_parallel_size, tensor_parallel_num_weight_shards: gtp(
                    tensor_model_parallel_size, tensor_parallel_num_weight_shards
                ),
            )
        else:
            self.put("gtp_weight_remat_size", 1, "no weight-shard axis before 0.19")

        pp = self.arg("pipeline_model_parallel_size", 1)
        world = self.get("world_size")
        if v == "0.8" or not _at_least(v, "0.12"):
            # PP is clamped to world // TP without a word (arguments.py:165@core_v0.8.0), after
            # world % TP is asserted (arguments.py:160@core_v0.8.0).
            def clamp(world_size: int, tensor_model_parallel_size: int, pipeline_model_parallel_size: int):
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

            self.need(
                "pipeline_model_parallel_size",
                {"world_size": world, "tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp},
                f"{ARGS}:165@core_v0.8.0",
                clamp,
            )
            standalone = self.arg("standalone_embedding_stage", False)
            ppv = self.get("pipeline_model_parallel_size")
            if isinstance(ppv, Unknown) or isinstance(standalone, Unknown):
                self.put(
                    "transformer_pipeline_model_parallel_size",
                    ppv if isinstance(ppv, Unknown) else standalone,
                    "needs PP",
                    source=f"{ARGS}:168@core_v0.8.0",
                )
            else:
                self.put(
                    "transformer_pipeline_model_parallel_size",
                    ppv - 1 if standalone else ppv,
                    f"{ppv} - 1 (--standalone-embedding-stage)" if standalone else str(ppv),
                    ("pipeline_model_parallel_size", "standalone_embedding_stage"),
                    f"{ARGS}:168@core_v0.8.0",
                )
        else:
            self.put(
                "pipeline_model_parallel_size", pp, "--pipeline-model-parallel-size", ("pipeline_model_parallel_size",)
            )
            self.put(
                "transformer_pipeline_model_parallel_size",
                pp,
                "= pipeline_model_parallel_size",
                ("pipeline_model_parallel_size",),
                _cite(
                    v,
                    {
                        "0.12": f"{ARGS}:323@core_v0.12.0",
                        "0.15": f"{ARGS}:382@core_v0.15.0",
                        "0.19": f"{ARGS}:438@core_v0.19.0",
                        "HEAD": f"{ARGS}:440@HEAD",
                    },
                ),
            )

    def data_parallel(self) -> None:
        v = self.version
        tp = self.arg("tensor_model_parallel_size", 1)
        cp = self.arg("context_parallel_size", 1)
        pp = self.get("pipeline_model_parallel_size")
        gtp = self.get("gtp_weight_remat_size")
        world = self.get("world_size")
        if _at_least(v, "0.19"):
            source = _cite(v, {"0.19": f"{ARGS}:422-446@core_v0.19.0", "HEAD": f"{ARGS}:424-448@HEAD"})

            def total(
                tensor_model_parallel_size, pipeline_model_parallel_size, context_parallel_size, gtp_weight_remat_size
            ):
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

            self.need(
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
        elif _at_least(v, "0.12") and not _at_least(v, "0.15"):
            # Encoder and decoder sizes add up (arguments.py:300-312@core_v0.12.0).
            source = f"{ARGS}:300-325@core_v0.12.0"

            def total12(
                tensor_model_parallel_size,
                pipeline_model_parallel_size,
                context_parallel_size,
                encoder_tensor_model_parallel_size,
                encoder_pipeline_model_parallel_size,
            ):
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

            self.need(
                "total_model_size",
                {
                    "tensor_model_parallel_size": tp,
                    "pipeline_model_parallel_size": pp,
                    "context_parallel_size": cp,
                    "encoder_tensor_model_parallel_size": self.arg("encoder_tensor_model_parallel_size", 0),
                    "encoder_pipeline_model_parallel_size": self.arg("encoder_pipeline_model_parallel_size", 0),
                },
                source,
                total12,
            )
        else:
            source = _cite(v, {"0.8": f"{ARGS}:175-182@core_v0.8.0", "0.15": f"{ARGS}:371-385@core_v0.15.0"})

            def total3(tensor_model_parallel_size, pipeline_model_parallel_size, context_parallel_size):
                return (
                    tensor_model_parallel_size * pipeline_model_parallel_size * context_parallel_size,
                    f"TP×PP×CP = {tensor_model_parallel_size}×{pipeline_model_parallel_size}×{context_parallel_size}",
                )

            self.need(
                "total_model_size",
                {"tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp, "context_parallel_size": cp},
                source,
                total3,
            )

        def dp(world_size, total_model_size):
            if world_size % total_model_size:
                return (
                    None,
                    "",
                    (f"world size ({world_size}) is not divisible by total_model_size ({total_model_size})"),
                )
            return world_size // total_model_size, f"{world_size} // {total_model_size}"

        self.need(
            "data_parallel_size", {"world_size": world, "total_model_size": self.get("total_model_size")}, source, dp
        )

        # Megatron turns sequence parallelism off when TP is 1 (arguments.py:1433@HEAD,
        # :1393@core_v0.19.0, :922@core_v0.15.0, :758@core_v0.12.0, :468@core_v0.8.0).
        sp = self.arg("sequence_parallel", False)
        self.need(
            "sequence_parallel",
            {"tensor_model_parallel_size": tp, "sequence_parallel": sp},
            _cite(
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

    def pipeline_layout(self) -> None:
        """The stages and layer counts of --pipeline-model-parallel-layout (0.13+), parsed as
        PipelineParallelLayerLayout.parse_str_to_list does
        (megatron/core/transformer/pipeline_parallel_layer_layout.py:283-320@HEAD)."""

        # The layer count the pipeline split divides: --num-layers plus one for each of
        # --account-for-embedding/loss-in-pipeline-split (arguments.py:986-996@HEAD,
        # :588-598@core_v0.15.0, :480-490@core_v0.12.0).
        def split(num_layers, embedding, loss):
            if num_layers is None:
                return None, "--num-layers is not given"
            extra = int(bool(embedding)) + int(bool(loss))
            return num_layers + extra, (f"{num_layers} + {extra} (embedding/loss stages)" if extra else f"{num_layers}")

        self.need(
            "pipeline_split_layers",
            {
                "num_layers": self.arg("num_layers"),
                "embedding": self.arg("account_for_embedding_in_pipeline_split", False),
                "loss": self.arg("account_for_loss_in_pipeline_split", False),
            },
            _cite(
                self.version,
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
        layout = self.arg("pipeline_model_parallel_layout")
        names = (
            "pipeline_layout_stages",
            "pipeline_layout_decoder_layers",
            "pipeline_layout_mtp_layers",
            "pipeline_layout_problem",
        )
        if isinstance(layout, Unknown):
            for n in names:
                self.put(
                    n,
                    Unknown(f"{n} needs --pipeline-model-parallel-layout: {layout.reason}", layout.span),
                    "needs the layout",
                    ("pipeline_model_parallel_layout",),
                    src,
                )
            return
        if layout is None or not isinstance(layout, str):
            for n in names:
                self.put(n, None, "no --pipeline-model-parallel-layout", (), src)
            return
        parsed = parse_pipeline_layout(layout)
        how = f"parsed from {layout!r}"
        inputs = ("pipeline_model_parallel_layout",)
        if isinstance(parsed, str):
            for n in names[:3]:
                self.put(n, Unknown(parsed), how, inputs, src, parsed)
            self.put(names[3], parsed, how, inputs, src)
            return
        flat = [c for stage in parsed for c in stage]
        self.put(names[0], len(parsed), how, inputs, src)
        self.put(names[1], flat.count("t"), how, inputs, src)
        self.put(names[2], flat.count("m"), how, inputs, src)
        problem = None
        if flat.count("E") != 1 or flat[:1] != ["E"]:
            problem = "the layout must start with exactly one embedding layer E"
        elif flat.count("L") != 1 or flat[-1:] != ["L"]:
            problem = "the layout must end with exactly one loss layer L"
        elif "m" in flat and "t" in flat[flat.index("m") :]:
            problem = "decoder layers t must come before the MTP layers m"
        self.put(
            names[3], problem, how, inputs, "megatron/core/transformer/pipeline_parallel_layer_layout.py:88-131@HEAD"
        )

    def virtual_pipeline(self) -> None:
        v = self.version
        name = "virtual_pipeline_model_parallel_size"
        src = _cite(
            v,
            {
                "0.8": f"{ARGS}:254-272@core_v0.8.0",
                "0.12": f"{ARGS}:429-468@core_v0.12.0",
                "0.15": f"{ARGS}:531-585@core_v0.15.0",
                "0.19": f"{ARGS}:893-949@core_v0.19.0",
                "HEAD": f"{ARGS}:927-983@HEAD",
            },
        )
        per_stage = self.arg("num_layers_per_virtual_pipeline_stage")
        per_rank = self.arg("num_virtual_stages_per_pipeline_rank")
        layout = self.arg("pipeline_model_parallel_layout")
        hybrid = self.arg("hybrid_layer_pattern")
        for dest, val in (
            ("num_layers_per_virtual_pipeline_stage", per_stage),
            ("num_virtual_stages_per_pipeline_rank", per_rank),
            ("pipeline_model_parallel_layout", layout),
            ("hybrid_layer_pattern", hybrid),
        ):
            if isinstance(val, Unknown):
                self.put(
                    name, Unknown(f"{name} needs {dest}, which is unknown: {val.reason}"), f"needs {dest}", (dest,), src
                )
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
            self.put(name, Unknown(msg), "", tuple(given), src, msg)
            return
        reset_one = _at_least(v, "0.15")  # VPP 1 becomes None from 0.15 on
        if hybrid is not None and _at_least(v, "0.19"):
            self.put(
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
            stages = self.get("pipeline_layout_stages")
            pp = self.get("pipeline_model_parallel_size")

            def from_layout(pipeline_layout_stages, pipeline_model_parallel_size):
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

            self.need(name, {"pipeline_layout_stages": stages, "pipeline_model_parallel_size": pp}, src, from_layout)
            return
        if per_rank is not None:
            value = per_rank
            if reset_one and value == 1:
                value = None
            self.put(
                name,
                value,
                f"--num-virtual-stages-per-pipeline-rank {per_rank}",
                ("num_virtual_stages_per_pipeline_rank",),
                src,
            )
            return
        if per_stage is None:
            self.put(name, None, "no virtual pipeline flag given", (), src)
            return
        num_layers = self.arg("num_layers")
        if num_layers is None:
            num_layers = self.arg("decoder_num_layers")
        tpp = self.get("transformer_pipeline_model_parallel_size")
        extra = 0
        if _at_least(v, "0.12"):
            for dest in ("account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"):
                flag = self.arg(dest, False)
                if isinstance(flag, Unknown):
                    self.put(name, Unknown(f"{name} needs {dest}: {flag.reason}"), "", (dest,), src)
                    return
                extra += 1 if flag else 0

        def vpp(num_layers, transformer_pipeline_model_parallel_size, num_layers_per_virtual_pipeline_stage):
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

        self.need(
            name,
            {
                "num_layers": num_layers,
                "transformer_pipeline_model_parallel_size": tpp,
                "num_layers_per_virtual_pipeline_stage": per_stage,
            },
            src,
            vpp,
        )

    def model_shape(self) -> None:
        v = self.version
        hidden = self.arg("hidden_size")
        heads = self.arg("num_attention_heads")
        ffn_src = _cite(
            v,
            {
                "0.8": f"{ARGS}:378-387@core_v0.8.0",
                "0.12": f"{ARGS}:668-677@core_v0.12.0",
                "0.15": f"{ARGS}:828-837@core_v0.15.0",
                "0.19": f"{ARGS}:1280-1289@core_v0.19.0",
                "HEAD": f"{ARGS}:1320-1329@HEAD",
            },
        )

        def ffn(ffn_hidden_size, swiglu, hidden_size):
            if ffn_hidden_size is not None:
                return ffn_hidden_size, "--ffn-hidden-size"
            if hidden_size is None:
                return None, "", "--hidden-size is not given"
            if swiglu:
                # Keeps the parameter count of 4h with two input projections, rounded down to
                # a multiple of 64.
                return (
                    int((4 * hidden_size * 2 / 3) / 64) * 64,
                    f"int((4 × {hidden_size} × 2 / 3) / 64) × 64 (--swiglu)",
                )
            return 4 * hidden_size, f"4 × {hidden_size}"

        ffn_given = self.arg("ffn_hidden_size")
        self.need(
            "ffn_hidden_size",
            {
                "ffn_hidden_size": ffn_given,
                "swiglu": self.arg("swiglu", False),
                "hidden_size": hidden if ffn_given is None else 0,
            },
            ffn_src,
            ffn,
        )

        kv_src = _cite(
            v,
            {
                "0.8": f"{ARGS}:389-391@core_v0.8.0",
                "0.12": f"{ARGS}:679-681@core_v0.12.0",
                "0.15": f"{ARGS}:839-841@core_v0.15.0",
                "0.19": f"{ARGS}:1291-1293@core_v0.19.0",
                "HEAD": f"{ARGS}:1331-1333@HEAD",
            },
        )

        def kv(kv_channels, hidden_size, num_attention_heads):
            if kv_channels is not None:
                return kv_channels, "--kv-channels"
            if hidden_size is None or num_attention_heads is None:
                return None, "", "--hidden-size and --num-attention-heads are required"
            if num_attention_heads == 0 or hidden_size % num_attention_heads:
                return (
                    None,
                    "",
                    (
                        f"hidden_size ({hidden_size}) is not divisible by "
                        f"num_attention_heads ({num_attention_heads}) and "
                        "--kv-channels is not given: Megatron's bare assert fails"
                    ),
                )
            return hidden_size // num_attention_heads, f"{hidden_size} // {num_attention_heads}"

        kv_given = self.arg("kv_channels")
        self.need(
            "kv_channels",
            {
                "kv_channels": kv_given,
                "hidden_size": hidden if kv_given is None else 0,
                "num_attention_heads": heads if kv_given is None else 1,
            },
            kv_src,
            kv,
        )

        # Without --group-query-attention Megatron passes num_query_groups=None to
        # TransformerConfig, which then uses the head count (argument_utils.py:330@HEAD,
        # transformer_config.py:1458@HEAD; arguments.py:1275@core_v0.15.0,
        # :1035@core_v0.12.0, :637@core_v0.8.0).
        nqg_src = _cite(
            v,
            {
                "0.8": f"{ARGS}:636-639@core_v0.8.0",
                "0.12": f"{ARGS}:1034-1037@core_v0.12.0",
                "0.15": f"{ARGS}:1275-1278@core_v0.15.0",
                "0.19": "megatron/training/argument_utils.py:330-333@core_v0.19.0",
                "HEAD": "megatron/training/argument_utils.py:330-333@HEAD",
            },
        )

        def nqg(group_query_attention, num_query_groups, num_attention_heads):
            if group_query_attention:
                return num_query_groups, "--num-query-groups (with --group-query-attention)"
            if num_attention_heads is None:
                return None, "", "--num-attention-heads is not given"
            return num_attention_heads, "= num_attention_heads (no --group-query-attention)"

        gqa = self.arg("group_query_attention", False)
        self.need(
            "num_query_groups",
            {
                "group_query_attention": gqa,
                "num_query_groups": self.arg("num_query_groups") if gqa is True else 0,
                "num_attention_heads": heads if gqa is not True else 0,
            },
            nqg_src,
            nqg,
        )

    def experts(self) -> None:
        v = self.version
        tp = self.arg("tensor_model_parallel_size", 1)
        ep = self.arg("expert_model_parallel_size", 1)
        pp = self.get("pipeline_model_parallel_size")
        world = self.get("world_size")
        if _at_least(v, "0.12"):
            etp_src = _cite(
                v,
                {
                    "0.12": f"{ARGS}:358-359@core_v0.12.0",
                    "0.15": f"{ARGS}:439-440@core_v0.15.0",
                    "0.19": f"{ARGS}:569-570@core_v0.19.0",
                    "HEAD": f"{ARGS}:587-588@HEAD",
                },
            )
            etp_given = self.arg("expert_tensor_parallel_size")
            self.need(
                "expert_tensor_parallel_size",
                {"expert_tensor_parallel_size": etp_given, "tensor_model_parallel_size": tp},
                etp_src,
                lambda expert_tensor_parallel_size, tensor_model_parallel_size: (
                    (expert_tensor_parallel_size, "--expert-tensor-parallel-size")
                    if expert_tensor_parallel_size is not None
                    else (tensor_model_parallel_size, "= tensor_model_parallel_size")
                ),
            )
            etp = self.get("expert_tensor_parallel_size")
            egtp: Any = 1
            if _at_least(v, "0.19"):
                shards = self.arg("expert_tensor_parallel_num_weight_shards")
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
            edp_src = _cite(
                v,
                {
                    "0.12": "megatron/core/parallel_state.py:696-699@core_v0.12.0",
                    "0.15": "megatron/core/parallel_state.py:745-748@core_v0.15.0",
                    "0.19": "megatron/core/parallel_state.py:874-880@core_v0.19.0",
                    "HEAD": "megatron/core/parallel_state.py:874-880@HEAD",
                },
            )

            def edp(
                world_size,
                expert_tensor_parallel_size,
                expert_model_parallel_size,
                pipeline_model_parallel_size,
                expert_gtp_remat_size,
            ):
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

            self.need(
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
            self.put(
                "expert_tensor_parallel_size",
                tp,
                "= tensor_model_parallel_size (no --expert-tensor-parallel-size in 0.8)",
                ("tensor_model_parallel_size",),
            )

            def edp8(data_parallel_size, expert_model_parallel_size):
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

            self.need(
                "expert_data_parallel_size",
                {"data_parallel_size": self.get("data_parallel_size"), "expert_model_parallel_size": ep},
                "megatron/core/parallel_state.py:442@core_v0.8.0",
                edp8,
            )

        num_experts = self.arg("num_experts")
        moe_ffn = self.arg("moe_ffn_hidden_size")
        if _at_least(v, "0.12"):
            src = _cite(
                v,
                {
                    "0.12": f"{ARGS}:842-843@core_v0.12.0",
                    "0.15": f"{ARGS}:1028-1029@core_v0.15.0",
                    "0.19": f"{ARGS}:1595-1596@core_v0.19.0",
                    "HEAD": f"{ARGS}:1650-1651@HEAD",
                },
            )

            # 0.12 copies ffn_hidden_size whether or not the model has experts.
            always = not _at_least(v, "0.15")

            def moe(num_experts, moe_ffn_hidden_size, ffn_hidden_size):
                if moe_ffn_hidden_size is not None:
                    return moe_ffn_hidden_size, "--moe-ffn-hidden-size"
                if num_experts is None and not always:
                    return None, "not a MoE model"
                return ffn_hidden_size, "= ffn_hidden_size"

            self.need(
                "moe_ffn_hidden_size",
                {
                    "num_experts": num_experts,
                    "moe_ffn_hidden_size": moe_ffn,
                    "ffn_hidden_size": self.get("ffn_hidden_size")
                    if (num_experts is not None or always) and moe_ffn is None
                    else None,
                },
                src,
                moe,
            )
        else:
            self.put(
                "moe_ffn_hidden_size",
                moe_ffn,
                "--moe-ffn-hidden-size" if moe_ffn is not None else "not set",
                ("moe_ffn_hidden_size",),
            )

    def batches(self) -> None:
        v = self.version
        mbs = self.arg("micro_batch_size")
        gbs = self.arg("global_batch_size")
        dp = self.get("data_parallel_size")
        src = _cite(
            v,
            {
                "0.8": f"{ARGS}:248-249@core_v0.8.0",
                "0.12": f"{ARGS}:421-422@core_v0.12.0",
                "0.15": f"{ARGS}:524-525@core_v0.15.0",
                "0.19": f"{ARGS}:684-685@core_v0.19.0",
                "HEAD": f"{ARGS}:702-703@HEAD",
            },
        )

        def g(global_batch_size, micro_batch_size, data_parallel_size):
            if global_batch_size is not None:
                return global_batch_size, "--global-batch-size"
            if micro_batch_size is None:
                return None, "", "--micro-batch-size is required"
            return (
                micro_batch_size * data_parallel_size,
                f"micro_batch_size × data_parallel_size = {micro_batch_size} × {data_parallel_size}",
            )

        self.need(
            "global_batch_size",
            {
                "global_batch_size": gbs,
                "micro_batch_size": mbs if gbs is None else 0,
                "data_parallel_size": dp if gbs is None else 0,
            },
            src,
            g,
        )

        nm_src = _cite(
            v,
            {
                "0.8": "megatron/core/num_microbatches_calculator.py:248@core_v0.8.0",
                "0.12": "megatron/core/num_microbatches_calculator.py:324-340@core_v0.12.0",
                "0.15": "megatron/core/num_microbatches_calculator.py:324-340@core_v0.15.0",
                "0.19": "megatron/core/num_microbatches_calculator.py:367-381@core_v0.19.0",
                "HEAD": "megatron/core/num_microbatches_calculator.py:367-381@HEAD",
            },
        )
        rampup = self.arg("rampup_batch_size")
        if rampup is not None and not _at_least(v, "0.19"):
            self.put(
                "num_microbatches",
                Unknown("--rampup-batch-size changes the number of micro-batches during training"),
                "ramp-up",
                ("rampup_batch_size",),
                nm_src,
            )
            return

        def nm(global_batch_size, micro_batch_size, data_parallel_size):
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

        self.need(
            "num_microbatches",
            {"global_batch_size": self.get("global_batch_size"), "micro_batch_size": mbs, "data_parallel_size": dp},
            nm_src,
            nm,
        )

    def vocab(self) -> None:
        v = self.version
        name = "padded_vocab_size"
        given = self.arg("padded_vocab_size")
        if given is not None and not isinstance(given, Unknown):
            self.put(name, given, "--padded-vocab-size", ("padded_vocab_size",))
            return
        if self.arg("pad_vocab_size", True) is False:
            self.put(name, Unknown("--no-pad-vocab-size: Megatron does not compute it"), "", ("pad_vocab_size",))
            return
        tok = self.arg("tokenizer_type")
        if isinstance(tok, Unknown):
            self.put(name, Unknown(f"needs --tokenizer-type: {tok.reason}"), "", ("tokenizer_type",))
            return
        if tok != "NullTokenizer":
            self.put(
                name,
                Unknown("the vocabulary size comes from the tokenizer's files" + (f" ({tok})" if tok else "")),
                "",
                ("tokenizer_type",),
            )
            return
        # NullTokenizer: up to 0.15 its vocab_size is --vocab-size + 1 (an EOD token:
        # megatron/training/tokenizer/tokenizer.py:812@core_v0.12.0,
        # megatron/core/tokenizers/text/libraries/null_tokenizer.py:44@core_v0.15.0); from 0.19
        # it is --vocab-size itself (null_tokenizer.py:60@core_v0.19.0, :60@HEAD).
        extra = 0 if _at_least(v, "0.19") else 1
        src = _cite(
            v,
            {
                "0.8": "megatron/training/tokenizer/tokenizer.py:86@core_v0.8.0",
                "0.12": "megatron/training/tokenizer/tokenizer.py:109@core_v0.12.0",
                "0.15": "megatron/training/tokenizer/tokenizer.py:117@core_v0.15.0",
                "0.19": "megatron/core/tokenizers/utils/build_tokenizer.py:124@core_v0.19.0",
                "HEAD": "megatron/core/tokenizers/utils/build_tokenizer.py:133@HEAD",
            },
        )

        def pad(vocab_size, make_vocab_size_divisible_by, tensor_model_parallel_size):
            if vocab_size is None:
                return None, "", "NullTokenizer needs --vocab-size"
            orig = vocab_size + extra
            multiple = make_vocab_size_divisible_by * tensor_model_parallel_size
            after = int(math.ceil(orig / multiple) * multiple)
            return after, (
                f"{orig} rounded up to a multiple of {make_vocab_size_divisible_by} × {tensor_model_parallel_size}"
            )

        self.need(
            name,
            {
                "vocab_size": self.arg("vocab_size"),
                "make_vocab_size_divisible_by": self.arg("make_vocab_size_divisible_by", 128),
                "tensor_model_parallel_size": self.arg("tensor_model_parallel_size", 1),
            },
            src,
            pad,
        )

    def precision(self) -> None:
        v = self.version
        fp16 = self.arg("fp16", False)
        bf16 = self.arg("bf16", False)
        src = _cite(
            v,
            {
                "0.8": f"{ARGS}:288-305@core_v0.8.0",
                "0.12": f"{ARGS}:571-594@core_v0.12.0",
                "0.15": f"{ARGS}:722-745@core_v0.15.0",
                "0.19": f"{ARGS}:1171-1193@core_v0.19.0",
                "HEAD": f"{ARGS}:1194-1216@HEAD",
            },
        )

        def dtype(fp16, bf16):
            if fp16 and bf16:
                return None, "", "--fp16 and --bf16 together: Megatron's bare assert fails"
            return (
                "fp16" if fp16 else "bf16" if bf16 else "fp32",
                "--fp16" if fp16 else "--bf16" if bf16 else "neither --fp16 nor --bf16",
            )

        self.need("params_dtype", {"fp16": fp16, "bf16": bf16}, src, dtype)

        acc = self.arg("accumulate_allreduce_grads_in_fp32", False)
        if not _at_least(v, "0.12"):
            self.need(
                "accumulate_allreduce_grads_in_fp32",
                {"bf16": bf16, "acc": acc},
                src,
                lambda bf16, acc: (
                    (True, "forced by --bf16") if bf16 else (bool(acc), "--accumulate-allreduce-grads-in-fp32")
                ),
            )
            return

        def acc_rule(bf16, acc, grad_reduce_in_bf16, main_grads_dtype):
            if not bf16:
                return bool(acc), "--accumulate-allreduce-grads-in-fp32"
            if grad_reduce_in_bf16:
                return False, "off: --grad-reduce-in-bf16"
            if not acc and main_grads_dtype == "fp32":
                return True, "forced by --bf16 (main grads in fp32)"
            return bool(acc), "--accumulate-allreduce-grads-in-fp32"

        self.need(
            "accumulate_allreduce_grads_in_fp32",
            {
                "bf16": bf16,
                "acc": acc,
                "grad_reduce_in_bf16": self.arg("grad_reduce_in_bf16", False),
                "main_grads_dtype": self.arg("main_grads_dtype", "fp32"),
            },
            src,
            acc_rule,
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


def derive(bound: BoundArgs, world_size: int | Unknown | None, version: str | None = None) -> dict[str, Derived]:
    """Megatron's derived values for a binding; `version` defaults to the binding's own."""
    return _Deriver(bound, world_size, version or bound.version).run()


def derived_values(derived: dict[str, Derived]) -> dict[str, Any]:
    """name -> value (Unknown kept), for rule contexts."""
    return {k: d.value for k, d in derived.items()}
