"""Skipping statements no launch depends on (megalint/shell/relevance.py) changes nothing a
launch sees: the same commands, arguments, environment and findings as evaluating every line.

Compared on every fixture, on generated launch scripts (the speed benchmark's generator) and on
mutated fixtures (hypothesis). Where the full evaluation had to join paths (too many), the two
may differ in precision, so those inputs are left out of the comparison.
"""

from __future__ import annotations

import re

import pytest

from megalint.errors import InputError
from megalint.shell.analyze import analyze_parsed
from megalint.shell.interp import Evaluator
from megalint.shell.parse import parse_text
from megalint.shell.relevance import names_read, skippable
from tests.shell.observe import FIXTURES, ROOT, generator, seen, write_generated


def _both(path: str, text: str):
    """(skipping, full) observations, or None when the full evaluation joined paths."""
    merged = []
    real_run = Evaluator.run

    def run(self, ps):
        out = real_run(self, ps)
        merged.append(self.merged or self.exhausted)
        return out

    try:
        ps = parse_text(path, text)
    except InputError:
        return None
    Evaluator.run = run
    try:
        full = analyze_parsed(ps, skip_unread=False)
        if any(merged):
            return None
        sliced = analyze_parsed(parse_text(path, text), skip_unread=True)
    finally:
        Evaluator.run = real_run
    return seen(sliced), seen(full)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixtures_see_the_same_launches(path):
    got = _both(str(path), path.read_text(encoding="utf-8", errors="replace"))
    if got is not None:
        assert got[0] == got[1]


@pytest.mark.slow
def test_generated_scripts_see_the_same_launches(tmp_path):
    gen = generator()
    compared = skipped_any = 0
    for seed in range(120):
        path, text = write_generated(gen, tmp_path, seed)
        got = _both(path, text)
        if got is None:
            continue
        compared += 1
        assert got[0] == got[1], f"seed {seed}"
        skipped_any += bool(skippable(parse_text(path, text)).statements)
    # The comparison must have run on most scripts, and skipping must have happened in many.
    assert compared >= 100 and skipped_any >= 50, (compared, skipped_any)


SNIPPETS = [
    "TP=2\n",
    "PP=4\n",
    "export NCCL_IB_TIMEOUT=22\n",
    "NAME=run-$TP\n",
    "echo $NAME\n",
    "[[ -d $OUT ]] || mkdir -p $OUT\n",
    'if [ -n "$W" ]; then LOG=--log; fi\n',
    "for i in a b; do echo $i; done\n",
    "LOG=${LOG:-x}\n",
    "OUT=/ckpt/$NAME\n",
    'let "PP=TP+1"\n',
    "[[ $TP -gt PP ]] && TP=1\n",
    'ARGS="--tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP $LOG"\n',
    "X=$((TP * 2))\n",
    "Y=$((TP / 0))\n",
    "unset LOG\n",
    "f() { echo $OUT; TP=8; }\n",
    "f\n",
    "exit 0\n",
    "TP=${TP:=3}\n",
    "bash -c 'echo $NAME'\n",
    "A=(--x $TP)\n",
    "A+=(--y)\n",
    "case $TP in 2) PP=1;; esac\n",
    "cat > cfg <<EOF\n$TP\nEOF\n",
    'CMD="torchrun pretrain_gpt.py $ARGS"\n',
    "torchrun --nproc-per-node 8 pretrain_gpt.py $ARGS ${A[@]}\n",
    "eval $CMD\n",
    "H=`hostname`\n",
]


def _launch_values(facts, flag):
    out = set()
    for p in facts.paths:
        for c in p.commands:
            texts = [w.text for w in c.words]
            if flag in texts:
                out.add(texts[texts.index(flag) + 1])
    return out


def test_a_sourced_file_that_reads_a_skipped_variable_restarts_with_it_read(tmp_path):
    (tmp_path / "cfg.sh").write_text('ARGS="--hidden-size $HIDDEN"\n')
    main = tmp_path / "train.sh"
    main.write_text("HIDDEN=4096\nsource ./cfg.sh\ntorchrun pretrain_gpt.py $ARGS\n")
    ps = parse_text(str(main), main.read_text())
    assert skippable(ps).names == {"HIDDEN"}  # nothing in train.sh itself reads it
    assert _launch_values(analyze_parsed(ps), "--hidden-size") == {"4096"}


def test_an_eval_string_that_builds_a_variable_name_restarts_with_it_read():
    text = (
        'P=TP\nTP_SIZE=8\neval "ARGS=\\"--tensor-model-parallel-size \\$${P}_SIZE\\""\ntorchrun pretrain_gpt.py $ARGS\n'
    )
    ps = parse_text("/nonexistent/t.sh", text)
    assert "TP_SIZE" in skippable(ps).names
    assert _launch_values(analyze_parsed(ps), "--tensor-model-parallel-size") == {"8"}


def test_indirection_keeps_every_assignment():
    text = "V=8\nN=V\necho hi\ntorchrun pretrain_gpt.py --num-layers ${!N}\n"
    skip = skippable(parse_text("/nonexistent/t.sh", text))
    assert skip.names == set() and len(skip.statements) == 1  # only `echo hi`


@pytest.mark.parametrize(
    "text",
    ["echo ${!x}", "declare -n r=x", "local -rn y", "typeset -n z", "set -a", "set -o allexport", "declare  -n\tq"],
)
def test_text_that_reads_names_it_does_not_spell_reads_anything(text):
    assert names_read(text) is None


@pytest.mark.parametrize("text", ["set -euo pipefail", "local x=1", "declare -A m", "dataset offset"])
def test_other_text_reads_the_names_it_spells(text):
    assert names_read(text) == set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
