"""Megatron-LM argument defaults the memory estimator relies on.

Values are argparse defaults of ``megatron/training/arguments.py`` (and the
TransformerConfig dataclass fields it exposes), as catalogued in
megatron-flags-by-version.tsv (NVIDIA/Megatron-LM main@d98e8a64, core_v0.19.0;
identical in core_v0.12.0 and core_v0.15.0 unless noted). Keys are argparse
``dest`` names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULTS: dict[str, Any] = {
    # parallelism
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "virtual_pipeline_model_parallel_size": None,
    "num_layers_per_virtual_pipeline_stage": None,
    "num_layers_in_first_pipeline_stage": None,
    "num_layers_in_last_pipeline_stage": None,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
    "expert_tensor_parallel_size": None,  # None -> tensor_model_parallel_size (validate_args)
    "sequence_parallel": False,
    "use_distributed_optimizer": False,
    "num_distributed_optimizer_instances": 1,
    "use_torch_fsdp2": False,
    "use_megatron_fsdp": False,
    # precision
    "bf16": False,
    "fp16": False,
    "fp8": None,  # --fp8-format
    "fp8_param_gather": False,
    "grad_reduce_in_bf16": False,
    "accumulate_allreduce_grads_in_fp32": False,
    "use_precision_aware_optimizer": False,
    "optimizer": "adam",
    # model shape
    "num_query_groups": 1,  # only read when group_query_attention is set
    "group_query_attention": False,
    "kv_channels": None,  # None -> hidden_size // num_attention_heads
    "ffn_hidden_size": None,  # None -> 4h, or int(8h/3 / 64) * 64 with --swiglu
    "swiglu": False,
    "squared_relu": False,
    "normalization": "LayerNorm",
    "qk_layernorm": False,
    "add_bias_linear": True,  # --disable-bias-linear stores False
    "add_qkv_bias": False,
    "position_embedding_type": "learned_absolute",
    "untie_embeddings_and_output_weights": False,
    "make_vocab_size_divisible_by": 128,
    "hidden_dropout": 0.1,
    "attention_dropout": 0.1,
    # kernels
    "transformer_impl": "transformer_engine",
    "attention_backend": "auto",
    "use_flash_attn": False,
    "attention_softmax_in_fp32": False,
    "masked_softmax_fusion": True,
    "bias_swiglu_fusion": True,
    "bias_gelu_fusion": True,
    "cross_entropy_loss_fusion": False,
    # recompute
    "recompute_granularity": None,
    "recompute_method": None,
    "recompute_num_layers": None,
    "recompute_modules": None,  # None -> ["core_attn"] with selective (TransformerConfig.__post_init__)
    # MoE
    "num_experts": None,
    "moe_router_topk": 2,
    "moe_ffn_hidden_size": None,  # None -> ffn_hidden_size
    "moe_shared_expert_intermediate_size": None,
    "moe_layer_freq": 1,
    "moe_grouped_gemm": False,
    "moe_expert_capacity_factor": None,
    # MLA
    "multi_latent_attention": False,
    "q_lora_rank": None,
    "kv_lora_rank": 32,
    "qk_head_dim": 128,
    "qk_pos_emb_head_dim": 64,
    "v_head_dim": 128,
    # multi-token prediction
    "mtp_num_layers": None,
    # Not a Megatron flag: which Adam runs the step. Megatron-Core uses Transformer
    # Engine's or Apex's FusedAdam when importable and falls back to
    # torch.optim.AdamW otherwise (megatron/core/optimizer/__init__.py, core_v0.19).
    "optimizer_impl": "fused",
}

# Arguments without which no estimate is made.
REQUIRED = ("num_layers", "hidden_size", "num_attention_heads", "seq_length", "micro_batch_size")


def with_defaults(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` over DEFAULTS; keys explicitly set to None keep Megatron's None."""
    out = dict(DEFAULTS)
    for k, v in args.items():
        out[k] = v
    return out
