"""Per-GPU peak memory of Megatron-LM GPT training, from the launch arguments alone.

The estimate is per pipeline stage: the model states (model_states.py) of the parameters the
stage holds (params.py), the activations (activations.py) of the micro-batches it holds, and
the transients of each moment of a step. The peak of a stage is the largest of three moments:
the loss of a micro-batch (last stage), the backward of the last layer held, and the
optimizer step.

Pure function of the argument values: no torch, no Megatron import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .activations import OFFLOAD_MODULES, inflight, kernels, layer_activation, offloaded_activation
from .arg_values import InvalidConfig, as_int, as_words, opt_int, truthy
from .breakdown import MemoryEstimate, StageEstimate
from .calibration import (
    CUDA_CONTEXT_BYTES,
    DEFAULT_CALIBRATION,
    FRAGMENTATION_FRACTION,
    NCCL_PER_COMMUNICATOR_BYTES,
    Calibration,
)
from .defaults import REQUIRED, with_defaults
from .layout import parallel_layout, stage_layers
from .model_states import state_bytes
from .params import layer_params
from .shape import model_shape

# The most layers an estimate is made for: a hundred times the deepest published model.
MAX_LAYERS = 100_000


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
    world = as_int(world_size, "world_size")
    L = as_int(a["num_layers"], "num_layers")
    if not 0 <= L <= MAX_LAYERS:
        # The estimate walks the layers of each stage; a count past any model's is a typo.
        raise InvalidConfig(f"num_layers {L} is outside the 0 to {MAX_LAYERS:,} layers megalint estimates")
    lay = parallel_layout(a, world, L)
    tp, pp, cp, ep, etp, vpp = lay["tp"], lay["pp"], lay["cp"], lay["ep"], lay["etp"], lay["vpp"]
    sh = model_shape(a, tp)
    kn = kernels(a, tp)
    cal = calibration
    assumptions: list[str] = []

    states = state_bytes(a, lay)
    graphs = (
        str(a.get("cuda_graph_impl") or "none") != "none"
        or truthy(a.get("enable_cuda_graph"))
        or truthy(a.get("external_cuda_graph"))
    )
    if graphs:
        assumptions.append(
            "CUDA graphs: static input/output buffers of every graphed layer and micro-batch "
            "are counted; other private-pool overhead is not"
        )
    offload: frozenset[str] = frozenset()
    if truthy(a.get("fine_grained_activation_offloading")):
        offload = frozenset(as_words(a.get("offload_modules")) or ()) & frozenset(OFFLOAD_MODULES)
        assumptions.append(
            "fine-grained activation offloading: the saved tensors of "
            + (", ".join(sorted(offload)) or "no module")
            + " stay on the GPU only for the layer being computed"
        )
    if truthy(a.get("cpu_offloading")):
        assumptions.append(
            "--cpu-offloading not modelled: offloaded activations are counted on the GPU, so the estimate is high"
        )
    if truthy(a.get("use_precision_aware_optimizer")):
        assumptions.append("precision-aware optimizer modelled as the default fp32 states")

    rank_layers = stage_layers(a, L, pp, vpp)
    m = lay["microbatches"]
    tied = not truthy(a.get("untie_embeddings_and_output_weights"))
    learned_pos = str(a.get("position_embedding_type")) == "learned_absolute"
    max_pos = opt_int(a, "max_position_embeddings") or sh.s
    T = sh.s * sh.b / cp

    ranks = [0] if pp == 1 else ([0, 1, pp - 1] if pp > 2 else [0, pp - 1])
    stages: list[StageEstimate] = []
    for r in ranks:
        name = "only" if pp == 1 else ("first" if r == 0 else "last" if r == pp - 1 else "middle")
        idx = rank_layers[r]
        dense = expert = 0
        scores_max = 0.0
        layer_acts: list[float] = []
        layer_off: list[float] = []
        # A layer's figures depend on whether it is a MoE layer alone: worked out once for
        # each kind, still added layer by layer (the sums are the same to the last bit).
        per_kind: dict[bool, tuple[tuple[int, int], tuple[float, float], float]] = {}
        for i in idx:
            moe = sh.moe_pattern[i]
            kind = per_kind.get(moe)
            if kind is None:
                kind = per_kind[moe] = (
                    layer_params(sh, moe, tp, ep, etp),
                    layer_activation(sh, kn, moe, tp, cp, ep, etp, cal),
                    offloaded_activation(sh, kn, moe, tp, cp, etp, offload),
                )
            (dp_, ex_), (act, sc), off = kind
            dense += dp_
            expert += ex_
            layer_acts.append(act)
            layer_off.append(off)
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
                # every MTP layer is the same: counted once, times their number
                dp_, ex_ = layer_params(sh, bool(sh.E), tp, ep, etp)
                dense += sh.mtp * (dp_ + 2 * sh.h * sh.h // tp + 3 * norm_p)
                expert += sh.mtp * ex_
        dense += emb

        # model states
        terms = states.terms(dense, expert)
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
        held_mbs = inflight(pp, r, vpp, m)
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
        held = per_mb * held_mbs
        if offload and n_layers and not full:
            # offloaded tensors leave the GPU once their layer's forward is done; the
            # layer whose backward runs has had them reloaded
            off_avg = sum(layer_off) / n_layers
            held -= off_avg * max(0.0, n_layers * held_mbs - 1)
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
            outside += (2 * sh.h + (sh.h if kn.dropout_h else 0)) * T / kn.tsp * held_mbs
        if last:
            outside += 4 * sh.h * T / kn.tsp  # final norm input and output
        if last and truthy(a.get("defer_embedding_wgrad_compute")):
            # --defer-embedding-wgrad-compute: the output layer keeps each micro-batch's
            # input (bf16, T x h) and logits gradient (bf16, T x V/tp) until the weight
            # gradient is computed, at most --wgrad-deferral-limit of them at a time
            # (0: all micro-batches of the step; core/tensor_parallel/layers.py)
            limit = opt_int(a, "wgrad_deferral_limit") or 0
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
        opt_tmp = states.step_transient(dense, expert)
        terms["optimizer_step_transient"] = opt_tmp
        events["optimizer_step"] = static + opt_tmp
        ev = max(events, key=lambda e: events[e])
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
