"""A release between two curated catalogues (0.16-0.18 between 0.15 and 0.19) is bound against the
catalogue extracted from its own parser, which cannot say that a flag is accepted and ignored: the
deprecations both curated neighbours agree on hold for it too, and only those."""

from __future__ import annotations

import pytest
from linting import lint

from megalint.megatron.catalogue_choice import catalogue_for


@pytest.mark.parametrize("version", ["0.16", "0.17", "0.18"])
def test_flags_deprecated_on_both_sides_are_deprecated_between(version: str) -> None:
    cat, seen_as, _ = catalogue_for(version)
    assert seen_as == version
    for flag in ("--use-mcore-models", "--enable-cuda-graph"):
        spec = cat.lookup(flag)
        assert spec is not None and spec.deprecated, flag


def test_a_deprecation_only_the_newer_side_knows_is_not_carried_back() -> None:
    older, _, _ = catalogue_for("0.15")
    newer, _, _ = catalogue_for("0.19")
    between, _, _ = catalogue_for("0.17")
    only_newer = [
        s.option_strings[0]
        for s in newer.flags
        if s.deprecated and (o := older.lookup(s.option_strings[0])) is not None and not o.deprecated
    ]
    assert only_newer, "the curated catalogues no longer differ: pick another case"
    for flag in only_newer:
        spec = between.lookup(flag)
        assert spec is None or not spec.deprecated, flag


def test_a_deprecated_flag_is_reported_at_an_extracted_release() -> None:
    script = (
        "#!/bin/bash\n"
        "torchrun --nproc-per-node 8 pretrain_gpt.py --use-mcore-models --enable-cuda-graph --num-layers 4\n"
    )
    found = [(d.code, d.span.start_line, d.span.start_col) for d in lint(script, "0.17", memory=False).diagnostics]
    assert ("ML511", 2, 45) in found and ("ML511", 2, 64) in found
