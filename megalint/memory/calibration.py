"""The few measured constants of the memory estimator, each with its physical meaning.

Everything else in the estimator is counted from tensor shapes. These constants
cover behaviour that depends on kernels rather than on shapes; each one is a
number of bytes per element of a named tensor and was read off measurements:

* H200: tests/data/h200_memory.jsonl (Megatron-Core 0.19.2 local spec, torch 2.11),
  the activation bytes held after the forward pass and the peaks of the forward,
  backward and optimizer phases, per configuration.
* Megatron-LM CI golden values (NVIDIA/Megatron-LM d98e8a64, see
  bench/memory_accuracy.py) for the Transformer Engine paths.

bench/memory_accuracy.py re-fits the ones marked "fitted" on k-fold training
splits to report held-out accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Calibration:
    """Constants of the memory model measured on real steps, each with how it was measured."""

    # Torch's composite RMSNorm (local spec: WrappedTorchNorm) keeps an fp32 copy of
    # its input and the normalised tensor for backward, on top of the output that the
    # next GEMM saves: 4h + 2h = 6h bytes per token physically; measured 6.75h per
    # norm on the H200 rows (the rest is rope/rotary temporaries kept by autograd).
    local_rmsnorm_extra_per_h: float = 6.75
    # Local DotProductAttention without GQA does not repeat K/V; K and V then alias
    # the fused QKV output, which stays alive whole. Measured +3.6 bytes per token per
    # query-width element (H200 rows g1_mha vs g1_gqa8).
    local_mha_alias_per_q: float = 3.6
    # Logits of the last stage: bf16 logits plus the fp32 pieces of
    # vocab_parallel_cross_entropy still alive when forward returns, in bytes per
    # logit element (H200: 3.9), and the extra transient while the loss is computed
    # (H200: 2.0). Fitted on golden rows for the Transformer Engine path.
    logits_held_bytes: float = 4.0
    logits_transient_bytes: float = 2.0
    # Extra bytes per logit element on the Transformer Engine path (TE output layer and
    # Megatron's training loss path keep more fp32 pieces of the logits alive than the
    # local-spec run above). Fitted on the Megatron-LM CI golden rows (k-fold in
    # bench/memory_accuracy.py).
    te_logits_extra_bytes: float = 0.5
    # Unfused attention backward of the last layer: gradients of the probabilities
    # and of the scores plus the scaled copy live together, in units of the stored
    # bf16 probabilities (2*a*s*s*b/t bytes). H200: 2.7-2.9 with or without
    # recompute; a recomputed core attention adds its recomputed probabilities (+1.0).
    unfused_attn_bwd_factor: float = 2.6
    # Flash / fused attention: backward of one layer allocates gradients about the
    # size of that layer's stored activations.
    layer_bwd_transient_factor: float = 1.0
    # cuBLAS workspace (32 MiB on Hopper, PyTorch CUBLAS_WORKSPACE_CONFIG default) and
    # small persistent buffers allocated through the caching allocator.
    workspace_bytes: int = 32 * 1024 * 1024

    # Any: dataclasses.replace checks each keyword against its own field (floats, and one int).
    def with_(self, **kw: Any) -> Calibration:
        return replace(self, **kw)


DEFAULT_CALIBRATION = Calibration()

# Memory outside PyTorch's caching allocator (not in max_memory_allocated), bytes.
# CUDA context with lazy module loading: 527-701 MiB measured on H200 (torch 2.11,
# CUDA 13); NCCL: about 0.5 GiB per communicator that exists (NVIDIA/nccl#964,
# #864; Fujii et al. 2024 web tool); allocator fragmentation: reported ~10 % of the
# peak (pytorch/pytorch#40989), but a 130.4 GiB peak ran on a 139.8 GiB H200
# (tests/data/h200_memory.jsonl), so at most ~6.5 % there: 5 %, or the largest
# single block when that is larger (see estimator).
CUDA_CONTEXT_BYTES = 700 * 1024**2
NCCL_PER_COMMUNICATOR_BYTES = 512 * 1024**2
FRAGMENTATION_FRACTION = 0.05

# Share of the usable memory above which a fitting prediction is only a warning. The
# estimator's error on measured runs: median |error| ~4 % (held-out p90 ~23 %) on the Megatron-LM CI goldens,
# every fitting H200 run within 10 % (bench/memory_accuracy.py, tests/memory). A device
# total predicted within 10 % of the limit cannot be told apart from an OOM.
WARN_FRACTION = 0.90
