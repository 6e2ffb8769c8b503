"""The model's shape: the FFN width, the channels per attention head, the query groups."""

from __future__ import annotations

from megalint.megatron.derived.deriver import ARGS, Computed, Deriver, cite


def model_shape(d: Deriver) -> None:
    v = d.version
    hidden = d.arg("hidden_size")
    heads = d.arg("num_attention_heads")
    ffn_src = cite(
        v,
        {
            "0.8": f"{ARGS}:378-387@core_v0.8.0",
            "0.12": f"{ARGS}:668-677@core_v0.12.0",
            "0.15": f"{ARGS}:828-837@core_v0.15.0",
            "0.19": f"{ARGS}:1280-1289@core_v0.19.0",
            "HEAD": f"{ARGS}:1320-1329@HEAD",
        },
    )

    def ffn(ffn_hidden_size: int | None, swiglu: bool, hidden_size: int | None) -> Computed:
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

    ffn_given = d.arg("ffn_hidden_size")
    d.need(
        "ffn_hidden_size",
        {
            "ffn_hidden_size": ffn_given,
            "swiglu": d.arg("swiglu", False),
            "hidden_size": hidden if ffn_given is None else 0,
        },
        ffn_src,
        ffn,
    )

    kv_src = cite(
        v,
        {
            "0.8": f"{ARGS}:389-391@core_v0.8.0",
            "0.12": f"{ARGS}:679-681@core_v0.12.0",
            "0.15": f"{ARGS}:839-841@core_v0.15.0",
            "0.19": f"{ARGS}:1291-1293@core_v0.19.0",
            "HEAD": f"{ARGS}:1331-1333@HEAD",
        },
    )

    def kv(kv_channels: int | None, hidden_size: int | None, num_attention_heads: int | None) -> Computed:
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

    kv_given = d.arg("kv_channels")
    d.need(
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
    nqg_src = cite(
        v,
        {
            "0.8": f"{ARGS}:636-639@core_v0.8.0",
            "0.12": f"{ARGS}:1034-1037@core_v0.12.0",
            "0.15": f"{ARGS}:1275-1278@core_v0.15.0",
            "0.19": "megatron/training/argument_utils.py:330-333@core_v0.19.0",
            "HEAD": "megatron/training/argument_utils.py:330-333@HEAD",
        },
    )

    def nqg(group_query_attention: bool, num_query_groups: int | None, num_attention_heads: int | None) -> Computed:
        if group_query_attention:
            return num_query_groups, "--num-query-groups (with --group-query-attention)"
        if num_attention_heads is None:
            return None, "", "--num-attention-heads is not given"
        return num_attention_heads, "= num_attention_heads (no --group-query-attention)"

    gqa = d.arg("group_query_attention", False)
    d.need(
        "num_query_groups",
        {
            "group_query_attention": gqa,
            "num_query_groups": d.arg("num_query_groups") if gqa is True else 0,
            "num_attention_heads": heads if gqa is not True else 0,
        },
        nqg_src,
        nqg,
    )
