"""The context of a launch (rulecontext/launch.py): the part that comes from the binding is worked
out once for contexts of the same binding (a finding resting on a default builds one per node
count), the plain values of the defaults once per catalogue, and each context still gets dicts
of its own."""

import pytest

from megalint.launch.extract import extract_launches
from megalint.megatron import catalogue
from megalint.megatron.bind import bind
from megalint.megatron.derived import derive
from megalint.megatron.plain import plain
from megalint.rulecontext import launch as launch_context
from megalint.shell.analyze import analyze_text
from megalint.shell.values import Unknown

SCRIPT = "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size $TP\n"


def _context(launch, bound):
    derived = derive(bound, launch.world_size.value, "0.13.0")
    return launch_context.build_context(launch, bound, derived, "0.13.0", None, "no GPU", [], None, "not computed")


def test_contexts_of_one_binding_agree_with_a_fresh_one_and_share_no_dict():
    (launch,) = extract_launches(analyze_text("job.sh", SCRIPT))
    bound = bind(launch.argv, catalogue.load("0.13.0"))
    first = _context(launch, bound)
    again = _context(launch, bound)
    launch_context._last_bound.clear()
    fresh = _context(launch, bound)
    assert first == again == fresh
    assert first["args"]["num_layers"] == 2 and first["given"]["num_layers"] is True
    assert "args.tensor_model_parallel_size" in first["unknown"]
    for root in ("args", "given", "unknown"):
        assert first[root] is not again[root]
    first["args"]["num_layers"] = 99
    assert _context(launch, bound)["args"]["num_layers"] == 2


def test_another_binding_is_not_served_the_last_one():
    (launch,) = extract_launches(analyze_text("job.sh", SCRIPT))
    cat = catalogue.load("0.13.0")
    one = _context(launch, bind(launch.argv, cat))
    (other,) = extract_launches(analyze_text("job.sh", SCRIPT.replace("--num-layers 2", "--num-layers 4")))
    two = _context(other, bind(other.argv, cat))
    assert (one["args"]["num_layers"], two["args"]["num_layers"]) == (2, 4)


def _bound_part_made_dest_by_dest(script: str):
    """The binding part of the script's launch, checked against every value made plain dest by
    dest, in the catalogue's order (what it was before the defaults' values were kept)."""
    (launch,) = extract_launches(analyze_text("job.sh", script))
    bound = bind(launch.argv, catalogue.load("0.13.0"))
    launch_context._last_bound.clear()
    args, given, unknown = launch_context._bound_part(bound)
    expected = {dest: plain(arg.value) for dest, arg in bound.args.items()}
    assert list(args.items()) == [(d, v) for d, v in expected.items() if not isinstance(v, Unknown)]
    assert list(unknown.items()) == [(f"args.{d}", v.reason) for d, v in expected.items() if isinstance(v, Unknown)]
    assert list(given) == [d for d, arg in bound.args.items() if arg.given]
    return args, given, unknown


def test_the_binding_part_is_every_argument_made_plain_in_the_catalogues_order():
    script = SCRIPT.replace("--num-layers 2", "--num-layers 2 --lr-decay-style cosine --eval-iters $E")
    args, given, unknown = _bound_part_made_dest_by_dest(script)
    assert {"args.eval_iters", "args.tensor_model_parallel_size"} <= set(unknown)
    assert args["lr_decay_style"] == "cosine" and args["num_layers"] == 2
    assert given == {"num_layers": True, "lr_decay_style": True, "eval_iters": True, "tensor_model_parallel_size": True}


@pytest.mark.parametrize(
    "flags",
    [
        "--num-layers 2 --lr-decay-style cosine",
        "--num-layers 2 --num-layers 3 --fp16 --no-masked-softmax-fusion",
        "--num-layers 2 --data-path a b c --lr 1e-4",
        "--num-layers $L",  # a known default made unknown: the dest moves to `unknown`
        "--num-layers 2 --eval-iters $E --seq-length $S --lr $LR",
        "--num-layers 2 --world-size 8 --rank 0 --local-rank 0",  # defaults read from the environment
        "--num-layers 2 --world-size $W --rank 0",
    ],
)
def test_the_binding_part_from_the_defaults_made_once_is_the_one_made_in_full(flags):
    """A binding puts its few dests into copies of the defaults' dicts (made once per catalogue),
    in the catalogue's order even when one moves between `args` and `unknown`: what making the
    part dest by dest gives."""
    _bound_part_made_dest_by_dest(SCRIPT.replace("--num-layers 2 --tensor-model-parallel-size $TP", flags))
