"""Model states per GPU: parameters, gradients and optimizer state.

Model states follow Megatron's byte accounting (docs/user-guide/features/dist_optimizer.md,
megatron/training/theoretical_memory_usage.py): bf16 parameters 2 B, fp32 gradient
buffer 4 B, fp32 main parameters 4 B and Adam moments 8 B per parameter; the last
three are sharded over DP x CP (expert DP for routed experts) with the distributed
optimizer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .arg_values import truthy


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of each model state, and how the states are sharded."""

    param: int  # the weights
    grad: int  # the gradient buffer
    optimizer: int  # main parameters and optimizer moments
    step: int  # held while the optimizer steps (torch's own optimizer implementation)
    fsdp: bool  # weights and gradients are sharded as well
    distributed: bool  # the optimizer state is sharded
    shard: int  # GPUs the dense parameters' states are sharded over
    expert_shard: int  # GPUs the routed experts' states are sharded over

    def terms(self, dense: int, expert: int) -> dict[str, int]:
        """The `params`, `grads` and `optimizer_state` bytes of a GPU's dense and expert parameters."""
        shard, eshard = self.shard, self.expert_shard
        return {
            "params": int(
                dense * self.param / (shard if self.fsdp else 1) + expert * self.param / (eshard if self.fsdp else 1)
            ),
            "grads": int(
                dense * self.grad / (shard if self.fsdp else 1) + expert * self.grad / (eshard if self.fsdp else 1)
            ),
            "optimizer_state": int(dense * self.optimizer / shard + expert * self.optimizer / eshard),
        }

    def step_transient(self, dense: int, expert: int) -> int:
        """Bytes held only while the optimizer steps."""
        shard, eshard = self.shard, self.expert_shard
        return int(
            (dense / (shard if self.distributed else 1) + expert / (eshard if self.distributed else 1)) * self.step
        )


def state_bytes(a: Mapping[str, Any], layout: Mapping[str, int]) -> StateBytes:
    fp16, bf16 = truthy(a.get("fp16")), truthy(a.get("bf16"))
    half = fp16 or bf16
    p_b = 2 if half else 4
    if truthy(a.get("fp8_param_gather")):
        p_b = 1
    if not half:
        g_b = 4
    elif bf16:
        g_b = 2 if truthy(a.get("grad_reduce_in_bf16")) else 4
    else:
        g_b = 4 if truthy(a.get("accumulate_allreduce_grads_in_fp32")) else 2
    adam = str(a.get("optimizer") or "adam") == "adam"
    o_b = (8 if adam else 4) + (4 if half else 0) + (4 if half and g_b == 2 else 0)
    fsdp = truthy(a.get("use_torch_fsdp2")) or truthy(a.get("use_megatron_fsdp"))
    dist = truthy(a.get("use_distributed_optimizer")) or fsdp
    shard = max(1, layout["dp"] * layout["cp"] // layout["instances"]) if dist else 1
    eshard = max(1, layout["edp"] // layout["instances"]) if dist else 1
    step_tmp = 4 if str(a.get("optimizer_impl")) == "torch" else 0
    return StateBytes(p_b, g_b, o_b, step_tmp, fsdp, dist, shard, eshard)
