"""Choosing the GPU of a script: the user's setting, else the script's own hints."""

import pytest

from megalint.hardware.detect import choose_gpu, gpu_hints
from megalint.shell.analyze import analyze_text


def test_the_configured_gpu_wins_and_an_unknown_name_is_an_error():
    facts = analyze_text("train_a100.sh", "#SBATCH --constraint=h100\ntorchrun pretrain_gpt.py\n")
    profile, detection, reason = choose_gpu(facts, "h200")
    assert profile is not None and profile.id.startswith("h200") and detection is None and reason is None
    with pytest.raises(ValueError, match="unknown GPU `no-such-gpu`"):
        choose_gpu(facts, "no-such-gpu")


def test_gpus_per_node_names_the_type_in_its_first_field():
    text = "#!/bin/bash\n#SBATCH --gpus-per-node=h100:8\ntorchrun pretrain_gpt.py\n"
    facts = analyze_text("job.sh", text)
    (hint,) = [h for h in gpu_hints(facts) if h.kind == "sbatch-constraint"]
    assert hint.text == "h100"
    assert hint.span is not None and text[hint.span.start : hint.span.end] == "h100"
    profile, detection, reason = choose_gpu(facts, None)
    assert profile is not None and detection is not None and reason is None


def test_weak_hints_that_disagree_leave_the_gpu_unknown():
    facts = analyze_text("train_a100.sh", "# runs on H100 nodes\ntorchrun pretrain_gpt.py\n")
    profile, detection, reason = choose_gpu(facts, None)
    assert profile is None and detection is None
    assert reason is not None and "but also" in reason


def test_no_hint_leaves_the_gpu_unknown_with_a_way_to_give_it():
    facts = analyze_text("job.sh", "torchrun pretrain_gpt.py\n")
    profile, _, reason = choose_gpu(facts, None)
    assert profile is None and reason is not None and "--gpu NAME" in reason
