"""bench/realbench/files.py: which files the bench reads and the Megatron flags each writes."""

from __future__ import annotations

import os

from bench.realbench.files import flag_sites, known_flags, normal_flag, select_files

KNOWN = known_flags(["--num-layers", "--tensor-model-parallel-size", "--seq-length", "-h", "--micro-batch-size"])


def write(root, rel: str, text: str) -> str:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def test_known_flags_are_long_options_in_their_normal_spelling():
    assert KNOWN == {"--num-layers", "--tensor-model-parallel-size", "--seq-length", "--micro-batch-size"}
    assert normal_flag("--tensor_model_parallel_size=2") == "--tensor-model-parallel-size"


def test_selection_reads_shell_files_that_mention_megatron_and_counts_apart_those_it_leaves_out(tmp_path):
    root = str(tmp_path)
    entry = write(root, "a/train.sh", "torchrun pretrain_gpt.py\n")
    underscore = write(root, "a/old.sh", "python x.py --tensor_model_parallel_size 2\n")
    shebang = write(root, "b/run", "#!/usr/bin/env bash\nsrun python finetune_t5.py\n")
    config = write(root, "b/config.sh", "ARGS=(--num-layers 2)\n")
    write(root, "b/other.sh", "echo --unknown-flag\n")
    write(root, "b/tool.py", "# pretrain_gpt.py --tensor-model-parallel-size\n")
    write(root, ".git/hooks/pre-commit.sh", "pretrain_gpt.py\n")
    write(root, "c/skipped.sh", "pretrain_gpt.py\n")
    os.symlink(entry, os.path.join(root, "a", "link.sh"))
    chosen, left_out = select_files(root, ["a", "b"], KNOWN)
    assert chosen == [underscore, entry, shebang]
    assert left_out == [config]


def test_a_folder_named_twice_is_read_once(tmp_path):
    entry = write(str(tmp_path), "a/train.sh", "torchrun pretrain_gpt.py\n")
    assert select_files(str(tmp_path), ["a", ".", "a/"], KNOWN) == ([entry], [])


def test_flag_sites_are_catalogue_flags_outside_comments_one_per_occurrence():
    text = (
        "# --num-layers 4 in a comment\n"
        "N=${#ARR[@]}  # --seq-length in a trailing comment\n"
        "ARGS=(--num-layers 4 --num_layers=8 --not-a-flag 1 -h)\n"
        "echo x--num-layers $--seq-length\n"
        'torchrun pretrain_gpt.py "${ARGS[@]}" --tensor-model-parallel-size=$TP --micro-batch-size 1\n'
    )
    assert flag_sites(text, KNOWN) == [
        (3, "--num-layers"),
        (3, "--num-layers"),
        (5, "--tensor-model-parallel-size"),
        (5, "--micro-batch-size"),
    ]
