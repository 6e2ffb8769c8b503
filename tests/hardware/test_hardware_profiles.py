from __future__ import annotations

import pytest

from megalint.hardware.profiles import (
    GpuHint,
    ProfileError,
    detect_gpu,
    find_gpu,
    load_profiles,
    mentions,
    weigh_hints,
)
from megalint.source import Span


def span(line: int, col: int, text: str) -> Span:
    start = (line - 1) * 100 + col - 1
    return Span("job.sh", line, col, line, col + len(text), start, start + len(text))


def hint(kind: str, text: str, line: int = 1, col: int = 1) -> GpuHint:
    return GpuHint(kind, text, span(line, col, text))


@pytest.mark.parametrize(
    "name,pid",
    [
        ("a100", "a100"),
        ("A100", "a100"),
        ("A100-SXM4-80GB", "a100-sxm4-80gb"),
        ("NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"),
        ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"),
        ("nvidia_a100-sxm4-80gb", "a100-sxm4-80gb"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"),
        ("NVIDIA H100 PCIe", "h100-pcie-80gb"),
        ("h100", "h100"),
        ("H100 NVL", "h100-nvl-94gb"),
        ("v100-32g", "v100-32gb"),
        ("Tesla V100-SXM2-16GB", "v100-16gb"),
        ("Tesla T4", "t4"),
        ("tesla_t4", "t4"),
        ("gh200", "gh200"),
        ("NVIDIA GH200 480GB", "gh200"),
        ("b200", "b200"),
        ("NVIDIA B300 SXM6 AC", "b300"),
        ("NVIDIA H200", "h200"),
        ("H20", "h20"),
        ("L40S", "l40s"),
        ("A800-SXM4-80GB", "a800-sxm4-80gb"),
        ("AMD Instinct MI300X", "mi300x"),
        ("A100 80G", "a100-80gb"),
        ("a100 40GB PCIe", "a100-pcie-40gb"),
    ],
)
def test_find_gpu(name, pid):
    p = find_gpu(name)
    assert p is not None and p.id == pid


@pytest.mark.parametrize("name", ["Ascend 910B", "910B", "Atlas 800T A2", "npu", "", "a100 h100", "gpu", "A3"])
def test_not_a_known_gpu(name):
    assert find_gpu(name) is None


def test_profile_facts():
    h200 = find_gpu("h200")
    assert h200.compute_capability == (9, 0) and h200.compute_capability_value == 9.0
    assert h200.memory_bytes == 150109880320 and h200.memory_source == "measured"
    assert h200.architecture == "hopper" and h200.fp8 and not h200.mxfp8
    v100 = find_gpu("v100-32g")
    assert v100.architecture == "volta" and v100.bf16 is False and v100.fp8 is False
    assert v100.flash_attention == ()
    l40s = find_gpu("l40s")
    assert l40s.fp8 is True and "12.1" in l40s.fp8_condition
    b300 = find_gpu("b300")
    assert b300.compute_capability_value == 10.3 and b300.nvfp4 and b300.mxfp8
    assert find_gpu("mi300x").compute_capability is None  # not a CUDA capability
    a100 = find_gpu("a100-sxm4-40gb")
    assert a100.memory_bytes == 42298834944 and not a100.fp8 and a100.bf16


def test_family_holds_what_its_variants_share():
    a100 = find_gpu("a100")
    assert a100.is_family and a100.memory_bytes is None
    assert a100.memory_range == (42298834944, 84986036224)
    assert a100.compute_capability == (8, 0) and a100.bf16 is True and a100.fp8 is False
    a100_80 = find_gpu("a100-80gb")
    assert a100_80.memory_bytes == 84986036224
    assert a100_80.memory_source == "inferred"  # the weakest of its variants' sources
    h100 = find_gpu("h100")
    assert h100.memory_range is None  # the NVL part's memory is not known
    assert h100.fp8 is True and h100.nvlink_gb_s is None  # 900 vs 600


def test_every_profile_is_well_formed():
    profiles = load_profiles()
    assert len({p.id for p in profiles}) == len(profiles)
    for p in profiles:
        if p.is_family:
            continue
        assert p.vendor in ("nvidia", "amd") and p.architecture
        if p.vendor == "nvidia":
            assert p.compute_capability is not None
            # Transformer Engine's rules, by compute capability.
            assert p.fp8 == (p.compute_capability >= (8, 9)), p.id
            assert p.nvfp4 == (p.compute_capability >= (10, 0)), p.id
            assert p.mxfp8 == ((10, 0) <= p.compute_capability < (12, 0)), p.id
            assert p.bf16 == (p.compute_capability >= (8, 0)), p.id
        if p.memory_bytes is not None:
            assert p.memory_source in ("measured", "seen", "inferred")
            if p.smi_memory_bytes:
                assert p.memory_bytes < p.smi_memory_bytes
            assert p.memory_bytes < p.nominal_memory_gb * 1.1e9


def test_user_profiles(tmp_path):
    f = tmp_path / "gpus.yaml"
    f.write_text("gpus:\n  - id: mygpu\n    name: My GPU\n    compute_capability: '9.0'\n")
    (p,) = load_profiles(f)
    assert p.compute_capability == (9, 0)
    f.write_text("gpus:\n  - id: x\n    name: X\n    colour: red\n")
    with pytest.raises(ProfileError, match="unknown keys"):
        load_profiles(f)


# ---- detection ------------------------------------------------------------------------------


def test_constraint():
    h = hint("sbatch-constraint", "a100", 3, 22)
    d = detect_gpu([h])
    assert d.profile.id == "a100" and d.hint == h
    assert d.reason == "taken from `#SBATCH --constraint=a100`"
    assert (d.span.start_line, d.span.start_col, d.span.end_col) == (3, 22, 26)


def test_constraint_with_memory():
    d = detect_gpu([hint("sbatch-constraint", "v100-32g", 2, 14)])
    assert d.profile.id == "v100-32gb"
    d = detect_gpu([hint("sbatch-constraint", "a100&80gb")])
    assert d.profile.id == "a100-80gb"


def test_gres_type():
    h = hint("sbatch-gres", "gpu:a100:8", 4, 16)
    d = detect_gpu([h])
    assert d.profile.id == "a100"
    assert (d.span.start_col, d.span.end_col) == (20, 24)
    assert detect_gpu([hint("sbatch-gres", "gpu:nvidia_h100_80gb_hbm3:8")]).profile.id == "h100-sxm5-80gb"
    assert detect_gpu([hint("sbatch-gres", "gpu:8")]) is None


def test_scheduler_beats_comment_and_path():
    d = detect_gpu(
        [
            hint("comment", "# tuned on 8x H100 nodes", 1),
            hint("path", "train_llama_h100.sh"),
            hint("sbatch-constraint", "a100", 5),
        ]
    )
    assert d.profile.id == "a100"
    assert {pid for _, pid in d.ignored} == {"h100"}


def test_value_and_path_beat_comment():
    d = detect_gpu([hint("comment", "# every perlmutter node has 4 A100 40GB"), hint("path", "run_A22B_16xH20.sh")])
    assert d.profile.id == "h20" and d.reason == "taken from the file name `run_A22B_16xH20.sh`"


def test_header_comment_beats_a_passing_mention_and_weighs_as_much_as_the_file_name():
    d = detect_gpu([hint("comment", "# the old A100 runs", 9), hint("header-comment", "# 8x H100 nodes", 2, 1)])
    assert d.profile.id == "h100" and d.reason == "taken from the header comment `# 8x H100 nodes`"
    assert (d.span.start_line, d.span.start_col) == (2, 6) and {pid for _, pid in d.ignored} == {"a100"}
    assert "outweigh a comment further down" in d.why
    w = weigh_hints([hint("header-comment", "# 8x H100 nodes", 2), hint("path", "train_a100.sh")])
    assert w.detection is None and {pid for _, pid in w.conflict} == {"h100", "a100"}


def test_command_line_requests_weigh_as_much_as_scheduler_headers():
    d = detect_gpu([hint("command-gres", "gpu:a100:8", 3, 23), hint("path", "train_h100.sh")])
    assert d.profile.id == "a100" and (d.span.start_col, d.span.end_col) == (27, 31)
    assert d.reason == "taken from `--gres=gpu:a100:8` on the Slurm command"
    assert detect_gpu([hint("command-constraint", "a100"), hint("sbatch-gres", "gpu:h100:8")]) is None


def test_comment_alone_is_used():
    d = detect_gpu([hint("comment", "# every perlmutter node has 4 A100 40GB", 7, 1)])
    assert d.profile.id == "a100-40gb"
    assert d.reason.startswith("taken from the comment")
    assert (d.span.start_col, d.span.end_col) == (31, 40)  # "A100 40GB"


def test_conflicts_are_unknown():
    assert detect_gpu([hint("sbatch-constraint", "a100|h100")]) is None
    assert detect_gpu([hint("sbatch-constraint", "a100"), hint("sbatch-gres", "gpu:h100:8")]) is None
    assert detect_gpu([hint("path", "a100_vs_h100.sh")]) is None
    assert detect_gpu([hint("value", "h100"), hint("path", "train_a100.sh")]) is None


def test_family_and_variant_agree():
    d = detect_gpu([hint("sbatch-gres", "gpu:a100:4"), hint("sbatch-constraint", "a100-80g")])
    assert d.profile.id == "a100-80gb" and len(d.agreeing) == 1


def test_partition():
    assert detect_gpu([hint("sbatch-partition", "gpu-h100")]).profile.id == "h100"
    assert detect_gpu([hint("sbatch-partition", "gpu_p13")]) is None


def test_npus_are_not_gpus():
    assert (
        detect_gpu([hint("comment", "# Ascend 910B, Atlas A3 nodes"), hint("path", "pretrain_qwen_A3_910b.sh")]) is None
    )


def test_no_hints():
    assert detect_gpu([]) is None
    assert mentions("nothing here") == []


def test_bad_hint_kind():
    with pytest.raises(ValueError):
        detect_gpu([("gossip", "a100", None)])


def test_a_text_scanned_again_names_the_same_gpus(monkeypatch):
    from megalint.hardware import profiles

    db = profiles._shipped()
    texts = ["# 8x H100 80GB SXM nodes", "gpu:a100:4", "# a100 or h100", "no gpu here"]
    first = [mentions(t) for t in texts]
    assert first[0] and first[1] and len(first[2]) == 2 and first[3] == []
    assert all(t in db.scanned for t in texts)
    assert [mentions(t) for t in texts] == first  # from what was kept
    # Past the limit a text is scanned, not kept.
    monkeypatch.setattr(profiles, "_SCANNED_KEPT", len(db.scanned))
    assert mentions("# 4x H200 141GB") == [find_gpu("h200")]
    assert "# 4x H200 141GB" not in db.scanned
