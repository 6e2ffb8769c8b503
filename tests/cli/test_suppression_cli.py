"""Inline suppression comments, end to end through the command."""

from __future__ import annotations

import json

from megalint.cli.check import main as lint_main

# ML101 at line 5 (the TP value), ML301 at the --nnodes value, ML014 at line 1.
BODY = """\
CKPT=<Specify path>
torchrun --nnodes 2 --nproc_per_node 8 \\
    pretrain_gpt.py \\
    --num-layers 2 \\
    --tensor-model-parallel-size 3 \\
    --save $CKPT
"""


def findings(megalint, scripts, text, *opts):
    p = scripts("job.sh", text)
    r = megalint("--isolated", "--output-format", "json", *opts, str(p))
    return r, [(d["code"], d["location"]["row"]) for d in json.loads(r.out)]


def test_without_suppression(megalint, scripts):
    _, found = findings(megalint, scripts, BODY)
    assert sorted(found) == [("ML014", 1), ("ML101", 5), ("ML301", 2)]


def test_trailing_ignore_covers_its_line(megalint, scripts):
    text = BODY.replace("CKPT=<Specify path>", "CKPT=<Specify path>  # megalint: ignore[ML014] -- filled by CI")
    _, found = findings(megalint, scripts, text)
    assert sorted(found) == [("ML101", 5), ("ML301", 2)]


def test_own_line_ignore_covers_every_continuation_line(megalint, scripts):
    text = BODY.replace("torchrun", "# megalint: ignore[world-size-divisibility, ML3] -- TP 3 on purpose\ntorchrun")
    _, found = findings(megalint, scripts, text)
    assert found == [("ML014", 1)]


def test_own_line_ignore_covers_the_next_command_only(megalint, scripts):
    text = "# megalint: ignore[ML014]\nA=1\n" + BODY
    r, found = findings(megalint, scripts, text)
    # Not the placeholder a command later, and the suppression is reported unused.
    assert ("ML014", 3) in found and ("ML001", 1) in found


def test_disable_enable_range(megalint, scripts):
    text = "# megalint: disable[ML0]\n" + BODY.replace("torchrun", "# megalint: enable[ML0]\ntorchrun")
    _, found = findings(megalint, scripts, text)
    assert sorted(found) == [("ML101", 7), ("ML301", 4)]


def test_disable_without_enable_runs_to_the_end(megalint, scripts):
    _, found = findings(megalint, scripts, "# megalint: disable[ML1]\n" + BODY)
    assert sorted(found) == [("ML014", 2), ("ML301", 3)]


def test_file_ignore_anywhere(megalint, scripts):
    text = BODY + "# megalint: file-ignore[ML301, ML014] -- single-node cluster\n"
    _, found = findings(megalint, scripts, text)
    assert found == [("ML101", 5)]


def test_unused_and_unknown_suppressions(megalint, scripts):
    text = ("TP=2  # megalint: ignore[ML014]\nX=1  # megalint: ignore[ML0014]\nY=1  # megalint: ignore ML014\n") + BODY
    p = scripts("job.sh", text)
    r = megalint("--isolated", "--output-format", "concise", str(p))
    lines = [line for line in r.out.splitlines() if ": ML00" in line]
    assert lines == [
        # ML014 fires on BODY's placeholder: the comment was written for it, so --fix keeps it.
        f"{p}:1:26: ML001 unused suppression of `ML014`: nothing here to suppress",
        f"{p}:2:25: ML002 `ML0014` is not a megalint rule; did you mean `ML014`?",
        f"{p}:3:6: ML003 " + lines[2].split("ML003 ", 1)[1],
    ]
    assert r.rc == 1


def test_suppression_of_an_undecided_rule_is_not_unused(megalint, scripts):
    # The world size needs $NNODES: ML101 cannot decide, so its suppression proves nothing.
    text = (
        "# megalint: ignore[ML101]\ntorchrun --nnodes $NNODES --nproc_per_node 8 pretrain_gpt.py "
        "--num-layers 2 --tensor-model-parallel-size 3\n"
    )
    _, found = findings(megalint, scripts, text)
    assert found == []


def test_suppression_of_an_unselected_rule_is_not_unused(megalint, scripts):
    text = "TP=2  # megalint: ignore[ML014]\n" + BODY.replace("<Specify path>", "/ckpt")
    _, found = findings(megalint, scripts, text, "--ignore", "ML014")
    assert "ML001" not in [c for c, _ in found]
    _, found = findings(megalint, scripts, text)
    assert ("ML001", 1) in found


def test_unused_suppression_fix_removes_the_comment(megalint, scripts):
    p = scripts("job.sh", "TP=2  # megalint: ignore[ML014]\n" + BODY.replace("<Specify path>", "/ckpt"))
    r = megalint("--isolated", "--fix", "--output-format", "concise", str(p))
    assert p.read_text().startswith("TP=2\nCKPT=/ckpt\ntorchrun")
    assert "ML001" not in r.out


def test_through_lint_main(scripts, capsys):
    p = scripts("job.sh", BODY.replace("CKPT=<Specify path>", "CKPT=<Specify path>  # megalint: ignore[ML014]"))
    rc = lint_main(["--isolated", "--select", "ML0", "--output-format", "concise", str(p)])
    assert rc == 0 and "All checks passed." in capsys.readouterr().out
