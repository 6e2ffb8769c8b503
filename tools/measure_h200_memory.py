"""Measure the peak GPU memory of real Megatron-Core training steps on one GPU.

Ground truth for megalint's memory estimator (tests/data/h200_memory.jsonl,
described in tests/data/README-memory.md).

Each configuration builds a GPTModel with Megatron-Core's local (no Transformer
Engine) layer spec, wraps it in Megatron-Core DDP with the distributed optimizer,
and runs three forward/backward/optimizer steps on random tokens. The model is
configured the way ``pretrain_gpt.py --transformer-impl local`` configures it
with the CLI defaults (bias-swiglu fusion on; masked-softmax fusion off, as its
kernel needs Transformer Engine or Apex;
softmax in the input dtype, dropout off here), and every row carries the
equivalent Megatron argparse values under ``args`` so that the estimator can be
fed exactly the measured setup.

One JSON line per configuration. Out-of-memory is caught per configuration
(``oom: true`` with the phase it happened in) and the script goes on.

Usage:
    python tools/measure_h200_memory.py --emit-configs > configs.json
    python tools/measure_h200_memory.py configs.json > results.jsonl
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time

GIB = 1024**3


def megatron_args(c: dict) -> dict:
    """The Megatron CLI (argparse dest) values that describe configuration ``c``."""
    recompute = c.get("recompute")
    return {
        "num_layers": c["layers"],
        "hidden_size": c["hidden"],
        "ffn_hidden_size": c["ffn"],
        "num_attention_heads": c["heads"],
        "num_query_groups": c.get("groups", c["heads"]),
        "group_query_attention": c.get("groups", c["heads"]) != c["heads"],
        "kv_channels": c["hidden"] // c["heads"],
        "seq_length": c["seq"],
        "max_position_embeddings": c["seq"],
        "micro_batch_size": c["mbs"],
        "global_batch_size": c["mbs"],
        "tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": 1,
        "context_parallel_size": 1,
        "bf16": True,
        "use_distributed_optimizer": True,
        "recompute_granularity": recompute,
        "recompute_method": "uniform" if recompute == "full" else None,
        "recompute_num_layers": c.get("recompute_layers", 1) if recompute == "full" else None,
        "recompute_modules": ["core_attn"] if recompute == "selective" else None,
        "swiglu": True,
        "normalization": "RMSNorm",
        "position_embedding_type": "rope",
        "add_bias_linear": False,  # --disable-bias-linear
        "untie_embeddings_and_output_weights": True,
        "padded_vocab_size": c["vocab"],
        "attention_dropout": 0.0,
        "hidden_dropout": 0.0,
        "transformer_impl": "local",
        "attention_softmax_in_fp32": False,
        "masked_softmax_fusion": False,
        "bias_swiglu_fusion": True,
        "gradient_accumulation_fusion": False,
        "cross_entropy_loss_fusion": False,
        # Not a Megatron flag: without Transformer Engine or Apex, Megatron-Core
        # falls back to torch.optim.AdamW (foreach), whose step allocates
        # temporaries that a fused Adam does not.
        "optimizer_impl": "torch",
    }


def _reset_caches():
    from megatron.core import parallel_state
    from megatron.core.transformer import utils as tutils

    parallel_state.destroy_global_memory_buffer()
    parallel_state._set_global_memory_buffer()
    mask_fn = getattr(tutils, "get_default_causal_mask", None)
    if hasattr(mask_fn, "cache_clear"):
        mask_fn.cache_clear()
    gc.collect()
    torch.cuda.empty_cache()


def run(c: dict, out: dict) -> None:
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.transformer.transformer_config import TransformerConfig

    _reset_caches()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    out["base_bytes"] = base
    model_parallel_cuda_manual_seed(1234)
    recompute = c.get("recompute")
    cfg = TransformerConfig(
        num_layers=c["layers"],
        hidden_size=c["hidden"],
        num_attention_heads=c["heads"],
        num_query_groups=c.get("groups", c["heads"]),
        ffn_hidden_size=c["ffn"],
        kv_channels=c["hidden"] // c["heads"],
        gated_linear_unit=True,
        activation_func=F.silu,
        bias_activation_fusion=True,
        masked_softmax_fusion=False,
        attention_softmax_in_fp32=False,
        bias_dropout_fusion=True,
        normalization="RMSNorm",
        add_bias_linear=False,
        bf16=True,
        params_dtype=torch.bfloat16,
        pipeline_dtype=torch.bfloat16,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        recompute_granularity=recompute,
        recompute_method="uniform" if recompute == "full" else None,
        recompute_num_layers=c.get("recompute_layers", 1) if recompute == "full" else None,
    )
    out["phase"] = "init"
    model = GPTModel(
        config=cfg,
        transformer_layer_spec=get_gpt_layer_local_spec(normalization="RMSNorm"),
        vocab_size=c["vocab"],
        max_sequence_length=c["seq"],
        position_embedding_type="rope",
        share_embeddings_and_output_weights=False,
    ).cuda()
    out["params"] = sum(p.numel() for p in model.parameters())
    ddp_cfg = DistributedDataParallelConfig(grad_reduce_in_fp32=True, use_distributed_optimizer=True)
    model = DistributedDataParallel(config=cfg, ddp_config=ddp_cfg, module=model)
    opt = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=1e-4, bf16=True, use_distributed_optimizer=True), [model]
    )
    out["optimizer"] = type(opt).__name__
    out["init_bytes"] = torch.cuda.memory_allocated() - base
    out["init_peak_bytes"] = torch.cuda.max_memory_allocated() - base
    mbs, seq = c["mbs"], c["seq"]
    steps = []
    try:
        for step in range(3):
            s = {}
            out["phase"] = f"step{step}_fwd"
            tokens = torch.randint(0, c["vocab"], (mbs, seq), device="cuda")
            pos = torch.arange(seq, device="cuda").unsqueeze(0).expand(mbs, seq)
            model.zero_grad_buffer()
            opt.zero_grad()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            s["before_fwd"] = before - base
            loss = model(tokens, pos, None, labels=tokens).float().mean()
            torch.cuda.synchronize()
            s["after_fwd"] = torch.cuda.memory_allocated() - base
            s["fwd_peak"] = torch.cuda.max_memory_allocated() - base
            out["phase"] = f"step{step}_bwd"
            loss.backward()
            model.finish_grad_sync()
            torch.cuda.synchronize()
            s["fwd_bwd_peak"] = torch.cuda.max_memory_allocated() - base
            del loss
            out["phase"] = f"step{step}_opt"
            torch.cuda.reset_peak_memory_stats()
            s["before_opt"] = torch.cuda.memory_allocated() - base
            opt.step()
            torch.cuda.synchronize()
            s["opt_peak"] = torch.cuda.max_memory_allocated() - base
            s["after_opt"] = torch.cuda.memory_allocated() - base
            steps.append(s)
        out["phase"] = "done"
    finally:
        out["steps"] = steps
        del model, opt


def main() -> None:
    if sys.argv[1:] == ["--emit-configs"]:
        json.dump(CONFIGS, sys.stdout, indent=0)
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    global torch, F
    # The fused kernels would otherwise be compiled with torch.compile for every new
    # shape; the eager versions save the same tensors for backward.
    import megatron.core.jit as mjit
    import torch
    import torch.nn.functional as F

    mjit.disable_jit_fuser()
    import megatron.core

    torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    from megatron.core import parallel_state

    parallel_state.initialize_model_parallel(1, 1)
    configs = json.load(open(sys.argv[1])) if len(sys.argv) > 1 else CONFIGS
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "megatron_core": getattr(megatron.core, "__version__", "?"),
        "device": torch.cuda.get_device_name(0),
        "total_memory": torch.cuda.get_device_properties(0).total_memory,
    }
    for c in configs:
        t = time.time()
        out: dict = {"name": c["name"], "config": c, "args": megatron_args(c), "world_size": 1, "env": env}
        try:
            run(c, out)
            st = out["steps"]
            out["oom"] = False
            out["peak_bytes"] = max(max(s["fwd_bwd_peak"], s["opt_peak"]) for s in st)
            out["peak_bytes_incl_init"] = max(out["peak_bytes"], out["init_peak_bytes"])
            out["persistent_bytes"] = st[-1]["after_opt"]
            out["activation_bytes"] = st[-1]["after_fwd"] - st[-1]["before_fwd"]
        except torch.cuda.OutOfMemoryError as e:
            out["oom"] = True
            out["error"] = str(e)[:300]
        except Exception as e:  # report and go on with the next configuration
            out["error"] = f"{type(e).__name__}: {str(e)[:400]}"
        gc.collect()
        torch.cuda.empty_cache()
        out["free_after"] = torch.cuda.mem_get_info()[0]
        out["seconds"] = round(time.time() - t, 1)
        print(json.dumps(out), flush=True)


def _cfg(name, layers, hidden, ffn, heads, groups, seq, mbs, vocab, recompute=None, recompute_layers=1):
    return dict(
        name=name,
        layers=layers,
        hidden=hidden,
        ffn=ffn,
        heads=heads,
        groups=groups,
        seq=seq,
        mbs=mbs,
        vocab=vocab,
        recompute=recompute,
        recompute_layers=recompute_layers,
    )


CONFIGS = [
    # small Llama-like model: sequence-length, micro-batch and recompute sweeps
    _cfg("s1_seq2k_mbs1", 16, 2048, 5632, 16, 16, 2048, 1, 32000),
    _cfg("s1_seq4k_mbs1", 16, 2048, 5632, 16, 16, 4096, 1, 32000),
    _cfg("s1_seq8k_mbs1", 16, 2048, 5632, 16, 16, 8192, 1, 32000),
    _cfg("s1_seq8k_mbs2", 16, 2048, 5632, 16, 16, 8192, 2, 32000),
    _cfg("s1_seq16k_mbs1", 16, 2048, 5632, 16, 16, 16384, 1, 32000),
    _cfg("s1_seq16k_sel", 16, 2048, 5632, 16, 16, 16384, 1, 32000, "selective"),
    _cfg("s1_seq16k_full", 16, 2048, 5632, 16, 16, 16384, 1, 32000, "full"),
    _cfg("s1_seq4k_mbs6", 16, 2048, 5632, 16, 16, 4096, 6, 32000),
    _cfg("s1_seq4k_mbs8_sel", 16, 2048, 5632, 16, 16, 4096, 8, 32000, "selective"),
    _cfg("s1_seq2k_mbs16", 16, 2048, 5632, 16, 16, 2048, 16, 32000),
    _cfg("s1_seq2k_mbs32", 16, 2048, 5632, 16, 16, 2048, 32, 32000),
    _cfg("s1_seq2k_mbs32_full", 16, 2048, 5632, 16, 16, 2048, 32, 32000, "full"),
    _cfg("s1_seq32k_full", 16, 2048, 5632, 16, 16, 32768, 1, 32000, "full"),
    # GQA and vocabulary at fixed shape
    _cfg("g1_mha_seq4k_mbs2", 24, 2048, 8192, 32, 32, 4096, 2, 32000),
    _cfg("g1_gqa8_seq4k_mbs2", 24, 2048, 8192, 32, 8, 4096, 2, 32000),
    _cfg("g1_gqa2_seq4k_mbs2", 24, 2048, 8192, 32, 2, 4096, 2, 32000),
    _cfg("g1_gqa8_seq4k_mbs2_v128k", 24, 2048, 8192, 32, 8, 4096, 2, 128256),
    _cfg("g1_gqa8_seq4k_mbs4_v256k", 24, 2048, 8192, 32, 8, 4096, 4, 256000),
    _cfg("g1_gqa8_seq4k_mbs2_v256k_sel", 24, 2048, 8192, 32, 8, 4096, 2, 256000, "selective"),
    _cfg("g1_gqa8_seq4k_mbs4_v256k_full", 24, 2048, 8192, 32, 8, 4096, 4, 256000, "full"),
    _cfg("g1_gqa8_seq8k_mbs4_sel", 24, 2048, 8192, 32, 8, 8192, 4, 128256, "selective"),
    _cfg("g1_gqa8_seq8k_mbs2_sel", 24, 2048, 8192, 32, 8, 8192, 2, 128256, "selective"),
    # depth sweep at hidden 4096 (Llama-2-7B-like widths, GQA 8)
    _cfg("d8_seq4k_mbs1", 8, 4096, 11008, 32, 8, 4096, 1, 32000),
    _cfg("d16_seq4k_mbs1", 16, 4096, 11008, 32, 8, 4096, 1, 32000),
    _cfg("d24_seq4k_mbs1", 24, 4096, 11008, 32, 8, 4096, 1, 32000),
    _cfg("d32_seq8k_mbs1", 32, 4096, 11008, 32, 8, 8192, 1, 32000),
    _cfg("d32_seq4k_mbs1_full", 32, 4096, 11008, 32, 8, 4096, 1, 32000, "full"),
    _cfg("d16_seq8k_mbs2", 16, 4096, 11008, 32, 8, 8192, 2, 32000),
    _cfg("d16_seq8k_mbs1_sel", 16, 4096, 11008, 32, 8, 8192, 1, 32000, "selective"),
    _cfg("d16_seq8k_mbs2_full", 16, 4096, 11008, 32, 8, 8192, 2, 32000, "full"),
    _cfg("d16_seq8k_mbs2_full4", 16, 4096, 11008, 32, 8, 8192, 2, 32000, "full", 4),
    _cfg("d16_seq4k_mbs4_v128k", 16, 4096, 14336, 32, 8, 4096, 4, 128256),
    _cfg("d16_seq4k_mbs6_v128k_sel", 16, 4096, 14336, 32, 8, 4096, 6, 128256, "selective"),
    _cfg("d16_seq4k_mbs2_v128k_sel", 16, 4096, 14336, 32, 8, 4096, 2, 128256, "selective"),
    _cfg("d8_seq16k_mbs1_full", 8, 4096, 14336, 32, 8, 16384, 1, 128256, "full"),
    _cfg("d8_seq16k_mbs1_sel", 8, 4096, 14336, 32, 8, 16384, 1, 128256, "selective"),
    _cfg("d40_seq2k_mbs1", 40, 4096, 11008, 32, 32, 2048, 1, 32000),
    _cfg("d48_seq2k_mbs1", 48, 4096, 11008, 32, 32, 2048, 1, 32000),
    # wide model: static memory near the limit
    _cfg("w1_h5120_l24_seq2k", 24, 5120, 13824, 40, 40, 2048, 1, 32000),
    _cfg("w1_h5120_l16_seq4k", 16, 5120, 13824, 40, 40, 4096, 1, 32000),
    _cfg("w1_h6144_l20_seq4k_sel", 20, 6144, 16384, 48, 8, 4096, 2, 65536, "selective"),
]


if __name__ == "__main__":
    main()
