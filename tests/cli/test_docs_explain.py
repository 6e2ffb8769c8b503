"""`megalint rule`, `megalint rules`, `megalint explain`, and the memory hook."""

from __future__ import annotations

import json
import re

from megalint import cli

from .conftest import FIXTURES, REPO

UNDECIDED = (
    "#SBATCH --constraint=v100\n"
    "torchrun --nnodes $NNODES --nproc_per_node 8 pretrain_gpt.py --num-layers 2 "
    "--tensor-model-parallel-size 3 --fp8-format hybrid\n"
    "python pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size 1\n"
)


def test_rule_by_code_and_name(megalint):
    by_code = megalint("rule", "ML201")
    by_name = megalint("rule", "fp8-requires-hopper")
    lower = megalint("rule", "ml201")
    assert by_code.rc == 0 and by_code.out == by_name.out == lower.out
    text = by_code.out
    # The page docs/rules/fp8-requires-hopper.md as plain text.
    assert text.startswith("fp8-requires-hopper (ML201)\n\nCode: `ML201`\nName: `fp8-requires-hopper`\n")
    assert "\nDefault severity: error\nCategory: hardware\n" in text
    assert "\nFix: unsafe (applied by `--fix --unsafe-fixes`)\n" in text
    order = [
        text.index(f"\n{h}\n")
        for h in (
            "What it does",
            "Why is this bad?",
            "Example",
            "Use instead",
            "Fix safety",
            "Sources",
            "References",
            "Selecting and suppressing",
        )
    ]
    assert order == sorted(order)
    assert "    #SBATCH --constraint=a100\n    torchrun pretrain_gpt.py --fp8-format hybrid" in text
    assert "- `megatron/training/arguments.py:1100@d98e8a64`" in text


def test_rule_for_a_suppression_code(megalint):
    r = megalint("rule", "ML001")
    assert r.out.startswith("unused-suppression (ML001)\n\nCode: `ML001`\nName: `unused-suppression`\n")
    assert "\nFix: safe (applied by `--fix`)\n" in r.out


def test_rule_unknown(megalint):
    r = megalint("rule", "fp8-requires-hoper")
    assert (r.rc, r.err) == (2, "megalint: unknown rule `fp8-requires-hoper`; did you mean `fp8-requires-hopper`?\n")


def test_rule_json(megalint):
    data = json.loads(megalint("rule", "--json", "ML101").out)
    assert data["code"] == "ML101" and data["name"] == "world-size-divisibility"
    assert data["docs"]["why"] and data["url"].endswith("/docs/rules/world-size-divisibility.md")


def test_rules_lists_every_rule(megalint):
    r = megalint("rules")
    rows, _, legend = r.out.partition("\n\n")
    lines = rows.splitlines()
    codes = [line.split()[0] for line in lines]
    assert legend.startswith("[*] safe fix")
    assert codes == sorted(codes)
    assert {"ML001", "ML002", "ML003", "ML011", "ML101", "ML201", "ML301"} <= set(codes)
    assert any(line.startswith("ML012  [*] backslash-trailing-blank") for line in lines)


def test_rules_json_with_extra_rule_dir(megalint):
    data = json.loads(megalint("rules", "--json", "--rule-dir", str(FIXTURES / "rules")).out)
    by_code = {d["code"]: d for d in data}
    assert by_code["ML991"]["fix"]["applicability"] == "safe"
    assert by_code["ML002"]["category"] == "suppression"
    assert all({"code", "name", "severity", "summary", "docs", "url"} <= set(d) for d in data)


def test_explain_multi(megalint):
    r = megalint("explain", "--isolated", "fixtures/cli/multi.sh", cwd=REPO)
    assert r.rc == 0
    out = r.out
    assert "launch 1 at line 16: torchrun pretrain_gpt.py, world size 16" in out
    assert "GPU: NVIDIA A100, taken from `#SBATCH --constraint=a100`" in out
    # Other rules may fire on this fixture too (it has no CUDA_DEVICE_MAX_CONNECTIONS, for one).
    fired = re.split(r"fired \(\d+\):", out)[1].split("passed")[0]
    assert "ML101 world-size-divisibility" in fired and "ML201 fp8-requires-hopper" in fired
    assert "14:78: world size 16 is not divisible" in fired
    assert "ML202 overlap-param-gather-on-volta" in re.split(r"passed \(\d+\):", out)[1]
    script = out.split("script (shell rules)")[1]
    assert "ML011 flag-run-as-command" in script and "ML014 unfilled-placeholder" in script


def test_explain_undecided_inputs_and_reasons(megalint, scripts):
    p = scripts("job.sh", UNDECIDED)
    data = json.loads(megalint("explain", "--isolated", "--json", str(p)).out)[0]
    first, second = data["launches"]
    assert first["world_size"] is None and "NNODES" in first["world_size_unknown"]
    undecided = {u["code"]: u for u in first["rules"]["undecided"]}
    assert "ML101" in undecided
    missing = undecided["ML101"]["missing"]
    assert [m["input"] for m in missing] == ["launch.world_size"]
    assert "NNODES" in missing[0]["reason"]
    fired = [f["code"] for f in first["rules"]["fired"]]
    assert "ML201" in fired and "ML101" not in fired
    # The second launch is a single process: its world size is known and the rule passes.
    assert second["world_size"] == 1
    assert "ML101" in [e["code"] for e in second["rules"]["passed"]]


def test_explain_with_assume_decides(megalint, scripts):
    p = scripts("job.sh", UNDECIDED)
    data = json.loads(megalint("explain", "--isolated", "--json", "--assume", "NNODES=2", str(p)).out)[0]
    first = data["launches"][0]
    assert first["world_size"] == 16
    assert "ML101" in [e["code"] for e in first["rules"]["fired"]]


def test_explain_text_names_missing_inputs(megalint, scripts):
    p = scripts("job.sh", UNDECIDED)
    out = megalint("explain", "--isolated", str(p)).out
    block = out.split("could not decide")[1]
    assert "ML101 world-size-divisibility" in block
    assert "needs launch.world_size: " in block and "NNODES" in block


def test_explain_marks_suppressed_findings(megalint, scripts):
    p = scripts(
        "job.sh",
        "TP=3\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 "
        "--tensor-model-parallel-size $TP  # megalint: ignore[ML101]\n",
    )
    out = megalint("explain", "--isolated", str(p)).out
    assert "world size 8 is not divisible by TP×PP×CP = 3×1×1 = 3 (suppressed)" in out


def test_explain_missing_file(megalint, tmp_path):
    r = megalint("explain", str(tmp_path / "nope.sh"))
    assert r.rc == 2 and "no such file" in r.err


def test_memory_hook(megalint, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == cli.MEMORY_MODULE else real(name, *a)
    )
    r = megalint("memory", "x.sh")
    assert (r.rc, r.err) == (2, "megalint: `megalint memory` is not available in this build\n")
    assert "memory" in cli.SUBCOMMANDS
