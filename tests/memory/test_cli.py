"""`megalint memory` and the memory rules through the lint command."""

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from megalint.cli import main
from megalint.cli.check import main as lint_main

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "memory"
GIB = 2**30


def run_memory(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["memory", *argv])
    return rc, out.getvalue(), err.getvalue()


def run_lint(capsys, *argv):
    rc = lint_main(["--isolated", "--output-format", "json", *argv])
    return rc, json.loads(capsys.readouterr().out)


def test_json_breakdown_per_stage_with_overheads_and_headroom():
    rc, out, _ = run_memory(str(FIX / "llama2_70b_tp8_pp4_a100.sh"), "--json")
    assert rc == 0
    rep = json.loads(out)
    assert rep["gpu"]["name"] == "NVIDIA A100 80GB" and rep["gpu"]["usable_bytes"] == 84986036224
    (launch,) = rep["launches"]
    est = launch["estimate"]
    assert [s["stage"] for s in est["stages"]] == ["first", "middle", "last"]
    assert not est["lower_bound"]  # NullTokenizer: the vocabulary is known
    for s in est["stages"]:
        assert sum(s["peak_terms"].values()) == pytest.approx(s["peak_bytes"], abs=64)
        assert s["device_bytes"] == s["peak_bytes"] + est["overhead"]["bytes"]
        assert s["num_layers"] == 20
    assert est["overhead"]["bytes"] == sum(est["overhead"]["terms"].values())
    assert est["peak_bytes"] == max(s["peak_bytes"] for s in est["stages"])
    assert est["headroom_bytes"] == est["usable_bytes"] - est["device_bytes"] > 0
    assert est["fits"] is True
    # the first stage holds the most micro-batches in flight, the last the logits
    first, last = est["stages"][0], est["stages"][-1]
    assert first["terms"]["activations"] > last["terms"]["activations"]
    assert "logits_and_loss" in last["terms"] and "logits_and_loss" not in first["terms"]


def test_text_output_has_table_bars_and_legend():
    rc, out, _ = run_memory(str(FIX / "llama2_70b_tp1_a100.sh"), "--color", "never")
    assert rc == 0
    assert "does NOT fit" in out and "at most 79.1 GiB usable" in out
    assert "lower bound: embedding and output layer not counted" in out  # Llama2Tokenizer's files
    bar = next(line for line in out.splitlines() if line.strip().startswith("only "))
    assert "O" in bar and "G" in bar and "|" in bar  # optimizer state, gradients, the usable limit
    assert "O optimizer state" in out and "| usable memory" in out
    assert "fits: --use-distributed-optimizer" in out  # the cheapest combination that fits


def test_no_gpu_shows_estimate_without_headroom_and_how_to_give_it():
    rc, out, _ = run_memory(str(FIX / "llama2_70b_no_gpu.sh"), "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["gpu"]["usable_bytes"] is None and "--gpu" in rep["gpu"]["unknown"]
    est = rep["launches"][0]["estimate"]
    assert est["device_bytes"] > 0 and "headroom_bytes" not in est
    rc, out, _ = run_memory(str(FIX / "llama2_70b_no_gpu.sh"), "--gpu", "a100-80gb", "--json")
    est = json.loads(out)["launches"][0]["estimate"]
    assert est["fits"] is False and est["suggestions"]


def test_unknown_input_is_named_never_guessed():
    rc, out, _ = run_memory(str(FIX / "unknown_layout.sh"), "--json")
    launch = json.loads(out)["launches"][0]
    assert rc == 0 and launch["estimate"] is None
    assert "--tensor-model-parallel-size" in launch["unknown"] and "$TP" in launch["unknown"]
    rc, out, _ = run_memory(str(FIX / "unknown_layout.sh"), "--json", "--assume", "TP=2")
    est = json.loads(out)["launches"][0]["estimate"]
    assert est["layout"]["tp"] == 2


def test_bad_input_exit_2():
    assert run_memory(str(FIX / "missing.sh"))[0] == 2
    rc, _, err = run_memory(str(FIX / "llama2_70b_no_gpu.sh"), "--gpu", "no-such-gpu")
    assert rc == 2 and "no-such-gpu" in err
    assert run_memory(str(FIX / "llama2_70b_no_gpu.sh"), "--assume", "TP")[0] == 2
    assert run_memory("--no-such-option")[0] == 2


def test_predicted_oom_fires_on_70b_tp1_a100(capsys):
    rc, diags = run_lint(capsys, "--select", "ML4", str(FIX / "llama2_70b_tp1_a100.sh"))
    assert rc == 1
    (d,) = diags
    assert d["code"] == "ML401" and d["name"] == "predicted-oom" and d["severity"] == "error"
    assert d["location"] == {"row": 35, "column": 34} and d["end_location"] == {"row": 35, "column": 35}
    assert "optimizer state" in d["message"] and "79.1 GiB" in d["message"]
    assert "--tensor-model-parallel-size 8" in d["help"]


def test_predicted_oom_with_gpu_option(capsys):
    rc, diags = run_lint(capsys, "--select", "ML4", str(FIX / "llama2_70b_no_gpu.sh"))
    assert rc == 0 and diags == []  # no GPU: nothing claimed
    rc, diags = run_lint(capsys, "--select", "ML4", "--gpu", "a100-80gb", str(FIX / "llama2_70b_no_gpu.sh"))
    assert rc == 1 and [d["code"] for d in diags] == ["ML401"]


def test_silent_on_70b_layout_that_fits(capsys):
    rc, diags = run_lint(capsys, "--select", "ML4", str(FIX / "llama2_70b_tp8_pp4_a100.sh"))
    assert rc == 0 and diags == []
