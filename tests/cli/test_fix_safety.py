"""--fix never damages a file: line endings kept, an edit made meanwhile never overwritten, nothing
written outside the folder checked, a read-only file an error (exit 2) with its findings shown."""

from __future__ import annotations

import stat
from pathlib import Path

import megalint.checking.run as run_module
from megalint.checking.files import write_fixed

# ML016 (info, safe fix): the last line ends with a continuation backslash; bash -n accepts it.
TRAILING_BS = "torchrun pretrain_gpt.py \\\n    --num-layers 2 \\\n"
FIXED_BS = "torchrun pretrain_gpt.py \\\n    --num-layers 2 \n"
# ML732 (error, safe fix): the fix inserts `export NCCL_GRAPH_REGISTER=0` after the export.
CUDA_GRAPHS = (
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\r\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --cuda-graph-impl transformer_engine\r\n"
)


def test_a_line_inserted_into_a_crlf_file_keeps_the_pairs(megalint, scripts):
    p = scripts("job.sh", CUDA_GRAPHS)
    r = megalint("--isolated", "--no-cache", "--fix", "--output-format", "concise", str(p))
    assert p.read_bytes() == (
        b"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\r\n"
        b"export NCCL_GRAPH_REGISTER=0\r\n"
        b"torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --cuda-graph-impl transformer_engine\r\n"
    )
    assert r.rc == 0 and r.err == "megalint: fixed 1 finding(s)\n"


def test_the_trailing_backslash_fix_applies(megalint, scripts):
    p = scripts("job.sh", TRAILING_BS)
    r = megalint("--isolated", "--no-cache", "--fix", "--output-format", "concise", str(p))
    assert p.read_text() == FIXED_BS
    assert (r.rc, r.err) == (0, "megalint: fixed 1 finding(s)\n")


def test_a_link_to_a_file_outside_the_folder_is_not_written(megalint, scripts, tmp_path):
    outside = scripts("elsewhere/victim.sh", TRAILING_BS)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "link.sh").symlink_to("../elsewhere/victim.sh")
    r = megalint("--isolated", "--no-cache", "--fix", "--output-format", "concise", "tree", cwd=tmp_path)
    assert outside.read_text() == TRAILING_BS
    assert r.rc == 2
    assert r.err == f"megalint: tree/link.sh: fixes not written: the file links outside tree (to {outside})\n"
    assert r.codes == ["ML016"]  # its findings are still shown


def test_a_link_inside_the_folder_writes_its_target_and_stays_a_link(megalint, scripts, tmp_path):
    target = scripts("tree/real.sh", TRAILING_BS)
    (tmp_path / "tree" / "link").symlink_to("real.sh")
    r = megalint("--isolated", "--no-cache", "--fix", "tree/link", cwd=tmp_path)
    assert r.rc == 0
    assert (tmp_path / "tree" / "link").is_symlink() and target.read_text() == FIXED_BS


def test_a_read_only_file_is_an_error_with_its_findings(megalint, scripts, tmp_path):
    p = scripts("job.sh", TRAILING_BS)
    p.chmod(0o444)
    r = megalint("--isolated", "--no-cache", "--fix", "--output-format", "concise", "job.sh", cwd=tmp_path)
    assert p.read_text() == TRAILING_BS and stat.S_IMODE(p.stat().st_mode) == 0o444
    assert r.rc == 2
    assert r.err == "megalint: job.sh: fixes not written: the file is read-only\n"
    assert r.codes == ["ML016"] and "All checks passed." not in r.out


def test_an_edit_made_while_fixing_is_kept(megalint, scripts, tmp_path, monkeypatch):
    p = scripts("job.sh", TRAILING_BS)
    edited = TRAILING_BS + "echo edited meanwhile\n"
    real_check_all = run_module.check_all

    def check_all_then_edit(*args, **kwargs):  # the user saves the file while megalint runs
        outcomes = list(real_check_all(*args, **kwargs))
        p.write_text(edited)
        return iter(outcomes)

    monkeypatch.setattr(run_module, "check_all", check_all_then_edit)
    r = megalint("--isolated", "--no-cache", "--fix", "--output-format", "concise", "job.sh", cwd=tmp_path)
    assert p.read_text() == edited
    assert r.rc == 2
    assert r.err == "megalint: job.sh: fixes not written: the file changed while it was checked; run megalint again\n"


def test_a_fixed_file_keeps_its_permissions_and_leaves_no_temporary_file(megalint, scripts, tmp_path):
    p = scripts("job.sh", TRAILING_BS)
    p.chmod(0o750)
    r = megalint("--isolated", "--no-cache", "--fix", "job.sh", cwd=tmp_path)
    assert r.rc == 0 and p.read_text() == FIXED_BS
    assert stat.S_IMODE(p.stat().st_mode) == 0o750
    assert sorted(x.name for x in tmp_path.iterdir()) == ["job.sh"]


def test_write_fixed_refuses_a_changed_file(tmp_path: Path):
    p = tmp_path / "job.sh"
    p.write_bytes(b"new\n")
    assert write_fixed(str(p), str(tmp_path), "job.sh", b"old\n", b"fixed\n") == (
        "job.sh: fixes not written: the file changed while it was checked; run megalint again"
    )
    assert p.read_bytes() == b"new\n"
    assert write_fixed(str(p), str(tmp_path), "job.sh", b"new\n", b"fixed\n") is None
    assert p.read_bytes() == b"fixed\n"
