"""bench/real_scripts.py end to end on a checkout we write: the real pipeline in this process."""

from __future__ import annotations

import json
import os

from bench.real_scripts import main

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_bench_reads_a_checkout_in_place_warns_of_its_commit_and_writes_the_errors(tmp_path, capsys):
    checkout = tmp_path / "root" / "acme+fork"
    (checkout / "examples").mkdir(parents=True)
    script = checkout / "examples" / "train.sh"
    script.write_text(
        "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 3 --num-layers 4 --no-such-flag\n"
    )
    before = script.stat().st_mtime_ns
    repos = tmp_path / "repos.toml"
    repos.write_text(f'[[repo]]\nname = "acme/fork"\nurl = "https://example.org/acme/fork.git"\ncommit = "{SHA}"\n')
    out = tmp_path / "errors.json"
    rc = main(
        ["--root", str(tmp_path / "root"), "--repos", str(repos), "--jobs", "1", "--no-memory", "--json", str(out)]
    )
    printed = capsys.readouterr()
    assert rc == 0
    assert "acme/fork: the checkout is not a git repository" in printed.err
    assert "acme/fork @ 0123456789ab (NOT at the recorded commit)" in printed.out
    assert "  launches found: 1 in 1 files" in printed.out
    assert "  parallel/batch flags written: 2; resolved to a value: 2 (100.0%)" in printed.out
    assert "ML501 unknown-flag: 1" in printed.out
    assert printed.out.splitlines()[-1].startswith("total: 1 files, 1 launches")
    rows = json.loads(out.read_text())
    assert {(r["file"], r["line"], r["code"]) for r in rows} >= {("acme+fork/examples/train.sh", 1, "ML501")}
    assert script.stat().st_mtime_ns == before
    assert sorted(os.listdir(checkout)) == ["examples"]


def test_a_root_without_the_checkouts_is_an_error_with_a_message(tmp_path, capsys):
    assert main(["--root", str(tmp_path), "--jobs", "1"]) == 2
    assert "none of the repositories is under" in capsys.readouterr().err
