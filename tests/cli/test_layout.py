"""`megalint rules`, `megalint rule`, `megalint explain` and `--help` fit the terminal: 80 columns
when the output is not one, unless $COLUMNS says otherwise; and `[*]` means one thing everywhere:
a fix that --fix applies in this run."""

from __future__ import annotations

import json

import pytest

from .conftest import REPO

HEADLINE = REPO / "fixtures" / "headline"
# Long lines in every part of the explanation: a GPU named by #SBATCH, findings, missing inputs.
EXPLAINED = [HEADLINE / "fp8-requires-hopper" / "array.sh", HEADLINE / "fp8_gpu_comment_disagrees.sh"]
COMMANDS = [
    ("--help",),
    ("rules",),
    ("rules", "--help"),
    ("rule", "ML101"),
    ("rule", "stray-backslash-in-string"),
    ("explain", "--help"),
    ("explain", "--isolated", *map(str, EXPLAINED)),
]


def too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if len(line) > width]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("columns", ["80", None])
def test_fits_80_columns(megalint, monkeypatch, argv, columns):
    if columns is None:
        monkeypatch.delenv("COLUMNS")  # not a terminal: 80 is assumed
    else:
        monkeypatch.setenv("COLUMNS", columns)
    r = megalint(*argv)
    assert r.rc == 0, r.err
    assert r.out.count("\n") > 3
    assert too_wide(r.out, 80) == []


def test_wider_terminal_is_used(megalint, monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")
    out = megalint("rules").out
    assert max(len(line) for line in out.splitlines()) > 80
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("ML")}
    for rule in json.loads(megalint("rules", "--json").out):
        assert rows[rule["code"]].endswith(" " + rule["summary"])


def test_rules_table_cuts_with_an_ellipsis(megalint, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rows = [line for line in megalint("rules").out.splitlines() if line.startswith("ML")]
    assert all(line.endswith("…") for line in rows if len(line) == 80)
    assert any(line.endswith("…") for line in rows)


def test_explain_wraps_instead_of_cutting(megalint, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = megalint("explain", "--isolated", str(EXPLAINED[1])).out
    text = " ".join(out.split())
    assert "needs compute capability 8.9 or newer (Ada, Hopper); NVIDIA A100 has 8.0" in text


# ML745 (safe fix) and ML201 (unsafe fix) in one script.
FIXES = (
    "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 64 --num-attention-heads 4 "
    "--tensor-model-parallel-size 2 --bf16 --fp8-format hybrid\n"
)


def marked(out: str) -> set[str]:
    """Codes that `concise` marks `[*]`."""
    return {line.split(": ", 1)[1].split()[0] for line in out.splitlines() if " [*] " in line}


def test_fix_mark_is_what_fix_applies(megalint, scripts):
    p = scripts("job.sh", FIXES)
    safe = megalint("--isolated", "--output-format", "concise", str(p))
    assert {"ML201", "ML745"} <= set(safe.codes)
    assert marked(safe.out) == {"ML745"}
    assert marked(megalint("--isolated", "--output-format", "concise", "--unsafe-fixes", str(p)).out) >= {
        "ML201",
        "ML745",
    }
    full = megalint("--isolated", "--select", "ML201", str(p)).out
    assert "fix [*]" not in full and "(unsafe: applied with --unsafe-fixes)" in full
    full = megalint("--isolated", "--select", "ML201", "--unsafe-fixes", str(p)).out
    assert "fix [*]: " in full


def test_rules_mark_safe_fixes_as_findings_do(megalint):
    out = megalint("rules").out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("ML")}
    assert " [*] " in rows["ML745"]  # a safe fix
    assert " [!] " in rows["ML201"] and "[*]" not in rows["ML201"]  # an unsafe one
    assert "[*]" not in rows["ML101"] and "[!]" not in rows["ML101"]
    assert "[*] safe fix: `megalint --fix` applies it" in out
    assert "[!] unsafe fix: applied with `--fix --unsafe-fixes`" in out
