"""The padded vocabulary size, known when Megatron computes it from the command line."""

from __future__ import annotations

import math

from megalint.megatron.derived.deriver import Computed, Deriver, at_least, cite
from megalint.shell.values import Unknown


def vocab(d: Deriver) -> None:
    v = d.version
    name = "padded_vocab_size"
    given = d.arg("padded_vocab_size")
    if given is not None and not isinstance(given, Unknown):
        d.put(name, given, "--padded-vocab-size", ("padded_vocab_size",))
        return
    if d.arg("pad_vocab_size", True) is False:
        d.put(name, Unknown("--no-pad-vocab-size: Megatron does not compute it"), "", ("pad_vocab_size",))
        return
    tok = d.arg("tokenizer_type")
    if isinstance(tok, Unknown):
        d.put(name, Unknown(f"needs --tokenizer-type: {tok.reason}"), "", ("tokenizer_type",))
        return
    if tok != "NullTokenizer":
        d.put(
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
    extra = 0 if at_least(v, "0.19") else 1
    src = cite(
        v,
        {
            "0.8": "megatron/training/tokenizer/tokenizer.py:86@core_v0.8.0",
            "0.12": "megatron/training/tokenizer/tokenizer.py:109@core_v0.12.0",
            "0.15": "megatron/training/tokenizer/tokenizer.py:117@core_v0.15.0",
            "0.19": "megatron/core/tokenizers/utils/build_tokenizer.py:124@core_v0.19.0",
            "HEAD": "megatron/core/tokenizers/utils/build_tokenizer.py:133@HEAD",
        },
    )

    def pad(vocab_size: int | None, make_vocab_size_divisible_by: int, tensor_model_parallel_size: int) -> Computed:
        if vocab_size is None:
            return None, "", "NullTokenizer needs --vocab-size"
        orig = vocab_size + extra
        multiple = make_vocab_size_divisible_by * tensor_model_parallel_size
        after = int(math.ceil(orig / multiple) * multiple)
        return after, (
            f"{orig} rounded up to a multiple of {make_vocab_size_divisible_by} × {tensor_model_parallel_size}"
        )

    d.need(
        name,
        {
            "vocab_size": d.arg("vocab_size"),
            "make_vocab_size_divisible_by": d.arg("make_vocab_size_divisible_by", 128),
            "tensor_model_parallel_size": d.arg("tensor_model_parallel_size", 1),
        },
        src,
        pad,
    )
