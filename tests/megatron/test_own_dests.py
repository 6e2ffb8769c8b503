"""A binding names the dests it holds a value of its own for (`BoundArgs.own`): what is worked
out from a binding (its context, its assumptions, its unset-variable reads) looks at those alone,
so they must be every dest whose BoundArg is not the one the catalogue's bindings share."""

from __future__ import annotations

import os

import pytest
from linting import lint

from megalint.megatron.bind import bind, default_args
from megalint.megatron.bound import BoundArgs
from megalint.megatron.catalogue_choice import catalogue_for
from megalint.megatron.supplied import supplied_args
from megalint.shell.values import literal_word

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures")
SCRIPTS = sorted(os.path.join(d, f) for d, _, fs in os.walk(FIXTURES) for f in fs if f.endswith(".sh"))


def _own_by_scan(bound: BoundArgs) -> tuple[str, ...]:
    shared = default_args(bound.catalogue)
    return tuple(dest for dest, arg in bound.args.items() if shared.get(dest) is not arg)


def test_a_binding_names_the_dests_it_gives_in_the_catalogues_order():
    cat = catalogue_for(None)[0]
    words = [literal_word(t, None) for t in "--seq-length 8 --num-layers 2 --bf16 --num-layers 4 --lr 1e-4".split()]
    bound = bind(words, cat)
    assert bound.own == _own_by_scan(bound)
    assert set(bound.own) == {"seq_length", "num_layers", "bf16", "lr"}
    assert [d for d, _ in bound.own_args()] == list(bound.own)


def test_arguments_taken_from_a_checkpoint_are_named_too():
    cat, version, _ = catalogue_for(None)
    words = [literal_word(t, None) for t in "--load /ckpt --use-checkpoint-args --num-layers 2".split()]
    bound = supplied_args(bind(words, cat), version, True)
    assert bound.own == _own_by_scan(bound)
    assert len(bound.own) > 3, "the model's shape is read from the checkpoint: those dests are its own"


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_every_binding_of_the_fixtures_names_its_own_dests(path: str):
    with open(path, encoding="utf-8", errors="replace") as fh:
        result = lint(fh.read(), path=path, root_dir=FIXTURES, memory=False)
    for r in [*result.launches, *result.fragments]:
        if isinstance(r.bound, BoundArgs):
            assert r.bound.own == _own_by_scan(r.bound), r.launch.span
