"""`-1` for the model's shape is a placeholder, not a typo: a program that takes the shape from the
checkpoint it loads passes `--num-layers -1 --hidden-size -1 …` to get past argparse's required
flags (an evaluation harness does). The value is unknown and no invalid-size finding is made; any
other negative size, and -1 for a parallel size, still is one."""

from __future__ import annotations

from linting import lint

HARNESS = (
    "#!/bin/bash\n"
    'SHAPE="--num-layers -1 --hidden-size -1 --num-attention-heads -1 --seq-length -1 --max-position-embeddings -1"\n'
    "torchrun --nproc-per-node 1 pretrain_gpt.py --load /ckpt $SHAPE --micro-batch-size 1\n"
)


def _invalid(text: str) -> list[tuple[int, int]]:
    return [(d.span.start_line, d.span.start_col) for d in lint(text, memory=False).diagnostics if d.code == "ML515"]


def test_minus_one_for_the_model_s_shape_is_a_placeholder() -> None:
    result = lint(HARNESS, memory=False)
    assert not [d for d in result.diagnostics if d.code == "ML515"]
    (launch,) = result.launches
    held = launch.bound.args["num_layers"].value
    assert "placeholder" in str(held)


def test_other_negative_sizes_are_still_typos() -> None:
    text = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers -2 --tensor-model-parallel-size -1\n"
    assert _invalid(text) == [(1, 58), (1, 90)]
