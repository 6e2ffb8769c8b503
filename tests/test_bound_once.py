"""The launches of a script's paths that run the same words after the entry point (they differ in
the launcher's words or the environment) share one parser and one binding; each keeps its own
launch, context and findings."""

from __future__ import annotations

from dataclasses import replace

import pytest
from linting import lint

from megalint.pipeline import launches
from megalint.shell.values import Word

SCRIPT = """\
if [ "$1" = small ]; then
  GPUS=4
else
  GPUS=8
fi
torchrun --nproc_per_node $GPUS pretrain_gpt.py --tensor-model-parallel-size 8 --num-layers 2 \\
  --hidden-size 64 --num-attention-heads 8 --seq-length 128 --max-position-embeddings 128 \\
  --micro-batch-size 1 --global-batch-size 8 --lr 1e-4 --train-iters 10 --bf16
"""


@pytest.fixture
def binds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = launches.bind_launch

    def counting(argv, entry, parser):
        calls.append(len(argv))
        return real(argv, entry, parser)

    monkeypatch.setattr(launches, "bind_launch", counting)
    return calls


def test_paths_running_the_same_words_are_bound_once(binds: list[int]):
    result = lint(SCRIPT, gpu="H100", memory=False)
    assert len(result.launches) == 2 and len(binds) == 1
    small, large = result.launches
    assert small.bound is large.bound
    # Each launch keeps its own size: only the path with 4 processes cannot hold TP 8.
    assert [r.context["launch"].get("world_size") for r in result.launches] == [4, 8]
    (ml101,) = [d for d in result.diagnostics if d.code == "ML101"]
    assert ml101.condition is not None and "small" in ml101.condition
    assert ml101.span.start_line == 6


def test_paths_running_different_words_are_bound_each(binds: list[int]):
    script = SCRIPT.replace("GPUS=4", "GPUS=4; TP=4").replace("GPUS=8", "GPUS=8; TP=8")
    script = script.replace("--tensor-model-parallel-size 8", "--tensor-model-parallel-size $TP")
    result = lint(script, gpu="H100", memory=False)
    assert len(result.launches) == 2 and len(binds) == 2
    assert result.launches[0].bound is not result.launches[1].bound
    assert [r.bound.value("tensor_model_parallel_size") for r in result.launches] == [4, 8]
    assert not [d for d in result.diagnostics if d.code == "ML101"]


def test_a_shared_binding_gives_the_findings_of_a_binding_each(monkeypatch: pytest.MonkeyPatch):
    """The same report as when every launch is bound alone (its words copied: other objects)."""
    shared = lint(SCRIPT, gpu="H100", memory=False)
    real = launches.bind_all

    def bind_each(facts, found, *args, **kwargs):
        copies = [replace(la, argv=tuple(Word(w.segments, w.splat) for w in la.argv)) for la in found]
        return real(facts, copies, *args, **kwargs)

    monkeypatch.setattr(launches, "bind_all", bind_each)
    alone = lint(SCRIPT, gpu="H100", memory=False)
    assert alone.launches[0].bound is not alone.launches[1].bound
    assert shared.diagnostics and shared.diagnostics == alone.diagnostics
    assert shared.evaluation.undecided == alone.evaluation.undecided
    assert shared.evaluation.outcomes == alone.evaluation.outcomes


def test_a_shared_binding_is_searched_once_for_unset_variables(monkeypatch: pytest.MonkeyPatch):
    """`--save $CKPT_DIR` with CKPT_DIR set nowhere, on both paths: reported once, from one binding."""
    searched: list[int] = []
    real = launches.unset_variable_findings

    def counting(facts, bound):
        bound = list(bound)
        searched.append(len(bound))
        return real(facts, bound)

    monkeypatch.setattr(launches, "unset_variable_findings", counting)
    # Read through `eval`, the words of the string's parts are the same objects on both paths.
    script = SCRIPT.replace("torchrun", 'CMD="torchrun').replace("--bf16", '--bf16 --save $CKPT_DIR"\neval $CMD')
    result = lint(script, gpu="H100", memory=False)
    assert len(result.launches) == 2 and searched == [1]
    assert result.launches[0].bound is result.launches[1].bound
    unset = [f for f in result.facts.findings if f.kind.name == "UNSET_VARIABLE"]
    assert [(f.span.start_line, f.data["name"]) for f in unset] == [(8, "CKPT_DIR")]


def test_the_places_of_words_the_paths_share_are_worked_out_once(monkeypatch: pytest.MonkeyPatch):
    """Telling launches apart by where their words are: a word two paths' launches share is
    placed once (each place is worked out from the file's line table)."""
    from megalint.launch import extract

    placed: list[str] = []
    real = extract._placed_at

    def counting(word):
        placed.append(word.partial_text)
        return real(word)

    monkeypatch.setattr(extract, "_placed_at", counting)
    result = lint(SCRIPT, gpu="H100", memory=False)
    assert len(result.launches) == 2
    words = result.launches[0].launch.command
    assert len(placed) == len(words) + 1, "every word once, and the other path's `$GPUS`"
    assert placed.count("--num-layers") == 1 and placed.count("--nproc_per_node") == 1


def test_launches_sharing_a_binding_and_a_world_size_derive_once(monkeypatch: pytest.MonkeyPatch):
    """Two ports, one world size: what is derived and the memory estimate are worked out once;
    two world sizes (SCRIPT): once each."""
    script = SCRIPT.replace("GPUS=4", "PORT=6000").replace("GPUS=8", "PORT=6001")
    script = script.replace("--nproc_per_node $GPUS", "--nproc_per_node 8 --master_port $PORT")
    derived: list[object] = []
    estimated: list[object] = []
    real_derive, real_memory = launches.derive, launches.launch_memory

    def derive(bound, world, version):
        derived.append(world)
        return real_derive(bound, world, version)

    def launch_memory(bound, world, *args):
        estimated.append(world)
        return real_memory(bound, world, *args)

    monkeypatch.setattr(launches, "derive", derive)
    monkeypatch.setattr(launches, "launch_memory", launch_memory)
    result = lint(script, gpu="H100")
    assert len(result.launches) == 2 and result.launches[0].bound is result.launches[1].bound
    assert derived == [8] and estimated == [8]
    assert result.launches[0].context["memory"] == result.launches[1].context["memory"] != {}
    derived.clear()
    estimated.clear()
    lint(SCRIPT, gpu="H100")
    assert derived == [4, 8] and estimated == [4, 8]
