"""The parallel layout: TP, PP, CP, EP, DP and the expert DP, virtual stages, micro-batches,
and the layers each pipeline rank holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .arg_values import InvalidConfig, as_int, opt_int, truthy


def parallel_layout(a: Mapping[str, Any], world: int, L: int) -> dict[str, int]:
    tp = as_int(a["tensor_model_parallel_size"], "tensor_model_parallel_size")
    pp = as_int(a["pipeline_model_parallel_size"], "pipeline_model_parallel_size")
    cp = as_int(a["context_parallel_size"], "context_parallel_size")
    ep = as_int(a["expert_model_parallel_size"], "expert_model_parallel_size")
    etp = opt_int(a, "expert_tensor_parallel_size") or tp
    if world % (tp * pp * cp):
        raise InvalidConfig(f"world size {world} is not divisible by TP*PP*CP = {tp * pp * cp}")
    dp = world // (tp * pp * cp)
    if world % (etp * ep * pp):
        raise InvalidConfig(f"world size {world} is not divisible by ETP*EP*PP = {etp * ep * pp}")
    edp = world // (etp * ep * pp)
    # --num-virtual-stages-per-pipeline-rank is the newer spelling of the chunk count
    vpp = opt_int(a, "virtual_pipeline_model_parallel_size") or opt_int(a, "num_virtual_stages_per_pipeline_rank")
    per_vs = opt_int(a, "num_layers_per_virtual_pipeline_stage")
    if vpp is None and per_vs:
        vpp = L // pp // per_vs
    vpp = vpp or 1
    inst = as_int(a.get("num_distributed_optimizer_instances") or 1, "num_distributed_optimizer_instances")
    mbs = as_int(a["micro_batch_size"], "micro_batch_size")
    gbs = opt_int(a, "global_batch_size") or mbs * dp
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


def stage_layers(a: Mapping[str, Any], L: int, pp: int, vpp: int) -> list[list[int]]:
    """Global layer indices held by each pipeline rank (all of its virtual chunks)."""
    first = opt_int(a, "num_layers_in_first_pipeline_stage")
    last = opt_int(a, "num_layers_in_last_pipeline_stage")
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
        emb = 1 if truthy(a.get("account_for_embedding_in_pipeline_split")) else 0
        loss = 1 if truthy(a.get("account_for_loss_in_pipeline_split")) else 0
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
