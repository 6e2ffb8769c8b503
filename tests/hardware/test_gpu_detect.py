"""Choosing the GPU of a script: the script's own hints, else the user's setting."""

import pytest

from megalint.hardware.detect import choose_gpu, gpu_hints
from megalint.shell.analyze import analyze_text


def test_the_script_wins_over_the_configured_gpu_and_an_unknown_name_is_an_error():
    # The job gets the GPU its scheduler line asks for: the option is not used, and a note says so.
    facts = analyze_text("train_a100.sh", "#SBATCH --constraint=h100\ntorchrun pretrain_gpt.py\n")
    choice = choose_gpu(facts, "h200")
    assert choice.profile is not None and choice.profile.id == "h100" and choice.source == "script"
    assert choice.option == "h200" and choice.unknown is None
    assert choice.option_note == (
        "the GPU `h200` given to megalint was not used: the script names NVIDIA H100, "
        "taken from `#SBATCH --constraint=h100` (1:22)"
    )
    with pytest.raises(ValueError, match="unknown GPU `no-such-gpu`"):
        choose_gpu(facts, "no-such-gpu")


def test_the_configured_gpu_fills_in_a_gpu_the_script_does_not_name():
    facts = analyze_text("job.sh", "torchrun pretrain_gpt.py\n")
    choice = choose_gpu(facts, "h200")
    assert choice.profile is not None and choice.profile.id.startswith("h200")
    assert choice.source == "option" and choice.detection is None and choice.option_note is None


def test_the_same_gpu_from_the_script_and_the_option_needs_no_note():
    facts = analyze_text("job.sh", "#SBATCH --constraint=h100\ntorchrun pretrain_gpt.py\n")
    assert choose_gpu(facts, "h100").option_note is None


def test_gpus_per_node_names_the_type_in_its_first_field():
    text = "#!/bin/bash\n#SBATCH --gpus-per-node=h100:8\ntorchrun pretrain_gpt.py\n"
    facts = analyze_text("job.sh", text)
    (hint,) = [h for h in gpu_hints(facts) if h.kind == "sbatch-constraint"]
    assert hint.text == "h100"
    assert hint.span is not None and text[hint.span.start : hint.span.end] == "h100"
    choice = choose_gpu(facts, None)
    assert choice.profile is not None and choice.detection is not None and choice.unknown is None


def test_hints_of_the_same_weight_that_disagree_leave_the_gpu_unknown():
    # The file name and the header comment weigh the same: neither side is taken.
    facts = analyze_text("train_a100.sh", "# runs on H100 nodes\ntorchrun pretrain_gpt.py\n")
    choice = choose_gpu(facts, None)
    assert choice.profile is None and choice.detection is None
    assert choice.unknown is not None and "disagree" in choice.unknown
    assert {(h.kind, pid) for h, pid in choice.conflict} == {("path", "a100"), ("header-comment", "h100")}


def test_no_hint_leaves_the_gpu_unknown_with_a_way_to_give_it():
    facts = analyze_text("job.sh", "torchrun pretrain_gpt.py\n")
    choice = choose_gpu(facts, None)
    assert choice.profile is None and choice.unknown is not None and "--gpu NAME" in choice.unknown


def test_an_option_naming_a_model_of_the_scripts_gpu_sharpens_it():
    # `gpu:h100` leaves the memory open; `--gpu h100-sxm5-80gb` agrees with it and says which model.
    facts = analyze_text("job.sh", "#SBATCH --gres=gpu:h100:8\ntorchrun pretrain_gpt.py\n")
    choice = choose_gpu(facts, "h100-sxm5-80gb")
    assert choice.profile is not None and choice.profile.id == "h100-sxm5-80gb"
    assert choice.detection is not None and choice.detection.profile.id == "h100"
    assert choice.source == "script" and choice.option_note is None
