"""Launchers and the ways scripts give the node count and world size (survey §4)."""

import pytest
from modelhelp import load, pos, text_at

# fixture, launch index, launcher, nproc per node, nodes, world size
LAUNCHES = [
    ("launchers/torch_distributed_launch.sh", 0, "torch.distributed.launch", 4, 2, 8),
    ("launchers/torch_distributed_run.sh", 0, "torch.distributed.run", 8, 2, 16),
    ("launchers/torch_distributed_run.sh", 1, "torch.distributed.run", 8, None, None),
    ("launchers/srun_per_node.slurm", 0, "srun+torch.distributed.run", 8, 4, 32),
    ("launchers/srun_task_per_gpu.sbatch", 0, "srun+python", 4, 16, 64),
    ("launchers/launcher_variable.sh", 0, "torchrun", 8, 1, 8),
    ("launchers/deepspeed_launcher.sh", 0, "deepspeed", 8, 1, 8),
    ("launchers/deepspeed_launcher.sh", 1, "deepspeed", None, None, None),
    ("launchers/plain_python.sh", 0, "python", 1, 1, 1),
    ("launchers/world_size_prefix.sh", 0, "python", 1, 1, 2),
    ("launchers/underscore_flags.sh", 0, "python", 1, 1, 1),
    ("launchers/mpirun_launch.sh", 0, "mpirun", 4, 2, 8),
    ("launchers/pai_world_size.sh", 0, "torchrun", 8, None, None),
    ("launchers/env_node_counts.sh", 0, "torchrun", 8, 2, 16),
    ("launchers/env_node_counts.sh", 1, "torchrun", None, 2, None),
    ("launchers/env_node_counts.sh", 2, "deepspeed", None, None, None),
    ("idioms/strings_and_exports.sh", 0, "torchrun", 8, 1, 8),
    ("launchers/msrun_launch.sh", 0, "msrun", 8, 2, 16),
    ("launchers/msrun_launch.sh", 1, "msrun", 8, 1, 8),  # --local_worker_num defaults to 8
    ("launchers/msrun_launch.sh", 2, "msrun", None, None, None),
]


@pytest.mark.parametrize("fixture,index,launcher,nproc,nodes,world", LAUNCHES)
def test_launcher_and_world_size(fixture, index, launcher, nproc, nodes, world):
    _, launches = load(fixture)
    launch = launches[index]
    assert launch.launcher == launcher
    assert launch.nproc_per_node.value == nproc
    assert launch.nnodes.value == nodes
    assert launch.world_size.value == world
    for q in (launch.nproc_per_node, launch.nnodes, launch.world_size):
        if q.value is None:
            assert q.unknown is not None and q.unknown.reason


def test_world_size_sources_point_at_the_script():
    facts, launches = load("launchers/srun_per_node.slurm")
    launch = launches[0]
    assert text_at(facts, launch.nproc_per_node.span) == "$GPUS_PER_NODE"
    assert text_at(facts, launch.nnodes.span) == "$SLURM_NNODES"
    # $SLURM_NNODES is known through the literal `#SBATCH --nodes=4`
    assert [pos(s) for s in launch.nnodes.words[0].origins] == ["3:17"]


def test_world_size_counting_nodes_is_not_read_as_processes():
    _, launches = load("launchers/pai_world_size.sh")
    reason = launches[0].nnodes.unknown.reason
    assert "WORLD_SIZE" in reason and "environment" in reason


def test_gpu_count_queried_at_run_time_is_unknown():
    _, launches = load("launchers/env_node_counts.sh")
    assert "nvidia-smi" in launches[1].nproc_per_node.unknown.reason
    assert "hostfile" in launches[2].nnodes.unknown.reason


def test_scheduler_headers_are_read_with_positions():
    facts, _ = load("launchers/srun_per_node.slurm")
    got = {(h.key, h.value, pos(h.span)) for h in facts.headers}
    assert ("--nodes", "4", "3:17") in got
    assert ("--ntasks-per-node", "1", "4:27") in got  # the inline comment is not part of it
    assert ("--gres", "gpu:8", "5:16") in got
    assert ("--constraint", "a100", "6:22") in got


def test_pbs_select_gives_the_node_count():
    facts, launches = load("launchers/mpirun_launch.sh")
    assert ("-l select", "2:system=polaris") in {(h.key, h.value) for h in facts.headers}
    assert launches[0].nnodes.value == 2 and launches[0].nnodes.how == "#PBS -l select"


def test_conversion_then_training_gives_only_the_megatron_launch(tmp_path):
    from modelhelp import load_text

    _, launches = load_text(
        "python tools/checkpoint/convert.py --model-type GPT --target-tensor-parallel-size 2\n"
        "torchrun --nproc_per_node 2 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 2\n"
    )
    assert [la.entry.text for la in launches] == ["pretrain_gpt.py"]


def test_a_launch_is_told_apart_by_where_each_word_begins_as_its_span_says():
    """extract.py `_placed_at` gives `str(word.span)` without making the span, on every word of
    every launch of every fixture (words from strings, expansions, `eval`, several files)."""
    from pathlib import Path

    from megalint.launch.extract import _placed_at
    from megalint.shell.analyze import analyze_text

    root = Path(__file__).resolve().parents[1] / "fixtures"
    words = 0
    for script in sorted(root.rglob("*.sh")):
        facts = analyze_text(str(script), script.read_text(encoding="utf-8", errors="replace"))
        for path in facts.paths:
            for rec in path.commands:
                for word in rec.words:
                    assert _placed_at(word) == str(word.span), (script, word)
                    words += 1
    assert words > 1500
