"""The evaluator's fast paths (interp/fast_paths.py) give exactly what the general code gives:
the same commands, words, segments with their sites and origins, environment, findings and
variable values, compared with the fast paths on and off.

Compared on every fixture, on generated launch scripts (the speed benchmark's generator) and on
generated mixes of the constructs the fast paths take or must refuse.
"""

from __future__ import annotations

import pytest

from megalint.errors import InputError
from megalint.shell.analyze import analyze_parsed
from megalint.shell.interp import fast_paths
from megalint.shell.parse import parse_text
from tests.shell.observe import FIXTURES, ROOT, generator, seen, word, write_generated


def _observe(path: str, text: str, fast: bool):
    saved = fast_paths.ENABLED
    fast_paths.ENABLED = fast
    try:
        facts = analyze_parsed(parse_text(path, text))
    finally:
        fast_paths.ENABLED = saved
    variables = set()
    for p in facts.paths:
        for name, v in p.variables.items():
            variables.add(
                (
                    name,
                    v.exported,
                    word(v.value) if v.value is not None else None,
                    tuple(word(x) for x in v.array) if v.array is not None else None,
                    v.unknown.reason if v.unknown else None,
                )
            )
    return seen(facts), variables, [p.condition for p in facts.paths], facts.notes


def _same(path: str, text: str) -> bool:
    try:
        parse_text(path, text)
    except InputError:
        return False
    assert _observe(path, text, True) == _observe(path, text, False)
    return True


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixtures_evaluate_the_same(path):
    _same(str(path), path.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.slow
def test_generated_scripts_evaluate_the_same(tmp_path):
    gen = generator()
    for seed in range(150):
        assert _same(*write_generated(gen, tmp_path, seed)), seed


# Each line is something a fast path takes, or a near miss it must leave to the general code.
SNIPPETS = [
    "torchrun --nproc_per_node 8 pretrain_gpt.py $ARGS\n",
    "python pretrain_gpt.py --lr=3e-4 --x:y,z/w@1%\n",
    "cmd\\ x --a\n",
    "echo ~/x *.sh [ab] a{b,c}\n",
    '"torchrun" --a\n',
    "'torchrun' --b\n",
    "$LAUNCHER --c\n",
    "set -ex\n",
    "export NCCL_IB_TIMEOUT=22\n",
    "TP=2\n",
    "PP=${PP:-1}\n",
    "PP=${PP:-$TP}\n",
    "N=${N-4}\n",
    "M=${M:-}\n",
    "A=${A:=3}\n",
    "B=${B:+--b}\n",
    'C="${C:-x y}"\n',
    'D=${D:-"q r"}\n',
    "E=${E:-'s'}\n",
    "F=${F:-a\\ b}\n",
    "G=${G:-<Specify path>}\n",
    "H=${H:-${TP:-1}}\n",
    "I=${1:-7}\n",
    "J=${#J}\n",
    'K="--tensor-model-parallel-size $TP --pipeline-model-parallel-size ${PP} \\\n    --num-layers 4"\n',
    'L="a \\"b\\" \\$c"\n',
    'O="x 中文 y"\n',
    'Q="$(date) $TP"\n',
    'R="${TP}x"\n',
    'S=""\n',
    'U="--data-path ${DATA:-/d/corpus} --split 9,1"\n',
    'ARGS="$K $U $B"\n',
    'if [ "$X" = 1 ]; then TP=4; fi\n',
    "case $TP in 2) PP=8;; esac\n",
    'torchrun pretrain_gpt.py $K "$U" ${B} --pp $PP --tp=$TP\n',
    'eval "torchrun pretrain_gpt.py $K"\n',
    'bash -c "python pretrain_gpt.py $U"\n',
    "A2=(--x $TP)\n",
    'torchrun pretrain_gpt.py "${A2[@]}"\n',
    'V="x ${TP:-2}"\n',
    'V2="${NN:-}"\n',
    'V3="$TP"\n',
    'V4="${TP}"\n',
    'V5="a\\ b $TP"\n',
    'V6="a \\  \n b"\n',
    'V7="$1 $# $@"\n',
    'V8="${TP}${PP}x${NN-3}"\n',
    'V9="$(hostname) $TP"\n',
    "W=$((TP * PP))\n",
    "W2=$((${TP}+$PP))\n",
    "W3=$(( TP / 0 ))\n",
    "W4=$((i++))\n",
    "W5=$(($1 + 1))\n",
    "W6=$((NOPE + 1))\n",
    "W7=$(( $K ))\n",
    "TP=$TP\n",
    "export K\n",
    'K+=" --more"\n',
    'torchrun x "$TP" "a b $PP" "" "${NN:-3}" "$NOPE" "$1" $NOPE $2 ${NOPE}\n',
    "NN=$UNSET_IN\n",
    'srun bash -c "torchrun pretrain_gpt.py --tp $TP $K"\n',
    # values holding unknown parts, expanded unquoted: several fields, one, an unknown alone
    'UK="--addr $MASTER --port 6000 ${NOPE}x --n $TP"\n',
    "torchrun pretrain_gpt.py $UK\n",
    'UK2="$NOPE"\n',
    "launch $UK2 $UK\n",
    'UK3="a${NOPE} "\n',
    "eval $UK3 $UK --x\n",
    'UK4=" $NOPE  b"\n',
    "torchrun $UK4\n",
]


def test_values_with_unknown_parts_split_the_same() -> None:
    # scalar_word takes a value with unknown parts when it makes several fields; one field
    # (or an unknown alone) goes to the general code.
    script = "".join(s for s in SNIPPETS if "UK" in s or s.startswith("TP="))
    assert script.count("UK") >= 8
    assert _same("unknown_parts.sh", script)


_FORK = 'if [ "$1" = a ]; then L=1; elif [ "$1" = b ]; then L=2; else L=3; fi\n'
EVALS = [
    # A launch string on three paths: plain words, a number, unknown parts alone and inside a
    # word, parts every path shares and parts that differ, words cut from several places.
    _FORK + 'A="--save=$OUT/ckpt-$L --load $IN"\nC="torchrun --nproc_per_node 8 pretrain_gpt.py '
    '--num-layers $L $A --x ${NOPE}y -1 0x10 ab$L"\neval $C\neval "$C"\neval $C --tail "$L"\n',
    # Strings the simple eval leaves to the parser: the first word a builtin, a function, an
    # assignment, a flag, a number, a reserved word, an inert or non-launch command, unknown;
    # `bash -c`, quotes, operators, a newline, a comment.
    _FORK
    + "f() { :; }\n"
    + "".join(
        f'C="{c} --n $L"\neval $C\n'
        for c in (
            "export X=1",
            "f",
            "X=1 torchrun",
            "--tp",
            "8",
            "if",
            "echo",
            "pip",
            "$NOPE",
            "bash -c run",
            "srun bash -c run",
        )
    ),
    _FORK + "C=\"run 'a b' --n $L\"\neval $C\nD='run a; run2 b'\neval $D\neval \"run a\nrun b $L\"\neval 'run #x'\n",
    _FORK + 'eval "  torchrun\t pretrain_gpt.py   --n $L  "\neval torchrun x "--n $L"\n',
    # Unknown parts: one every path shares, at another place of the string on one branch; one
    # that only the second branch has, alone (read in a string of its own) and in a word
    # (`--save=…/x`: the whole string is parsed).
    _FORK
    + 'P="--load $IN"\nif [ "$2" = x ]; then C="torchrun pretrain_gpt.py $P --n $L"; '
    + 'else C="torchrun pretrain_gpt.py --n $L --x 1 $P ${NOPE}"; fi\neval $C\n'
    + 'if [ "$3" = y ]; then D="torchrun pretrain_gpt.py --n $L $P"; else D="torchrun pretrain_gpt.py --save=$OUT/x $P"; fi\n'
    + "eval $D\n",
]


@pytest.mark.parametrize("script", EVALS)
def test_eval_of_a_simple_command_runs_as_the_parsed_string(script: str) -> None:
    from megalint.shell.interp import nested_scripts

    taken = []
    simple = nested_scripts._simple_eval

    def counted(*args):  # type: ignore[no-untyped-def]
        done = simple(*args)
        taken.append(done is not None)
        return done

    nested_scripts._simple_eval = counted
    try:
        assert _same("t.sh", script)
        assert _steps(script, True) == _steps(script, False)
    finally:
        nested_scripts._simple_eval = simple
    assert any(taken) == (script is not EVALS[1] and script is not EVALS[2])


def test_an_unknown_part_met_again_elsewhere_is_read_without_parsing_the_whole_string() -> None:
    from megalint.shell.interp import nested_scripts

    alone, whole, by_words = [], [], []
    alone_node, reparse, eval_words = nested_scripts._alone_node, nested_scripts.reparse, nested_scripts._eval_words

    def counted_alone(*args):  # type: ignore[no-untyped-def]
        done = alone_node(*args)
        alone.append(done is not None)
        return done

    def counted_reparse(ev, word, frame, source=None):  # type: ignore[no-untyped-def]
        whole.append(len(word.segments) > 1)
        return reparse(ev, word, frame, source)

    def counted_words(*args):  # type: ignore[no-untyped-def]
        done = eval_words(*args)
        by_words.append(done is not None)
        return done

    nested_scripts._alone_node, nested_scripts.reparse = counted_alone, counted_reparse
    nested_scripts._eval_words = counted_words
    try:
        # With the fast paths on (test_eval_of_a_simple_command_runs_as_the_parsed_string
        # compares the script's run with the parser's).
        _steps(EVALS[-1], True)
    finally:
        nested_scripts._alone_node, nested_scripts.reparse = alone_node, reparse
        nested_scripts._eval_words = eval_words
    # A string's words are remembered with the place of the whole string: new on the first path
    # of each branch are `$P`'s part (`eval $C`, twice: the second branch with `${NOPE}`, then
    # `eval $D` on its first branch), each read in a string of its own (four parts);
    # `--save=…/x` (`eval $D`, second branch) is not a part alone: the whole string is parsed,
    # that once, and it is the one string not read word by word. The other paths find every
    # word remembered.
    assert alone == [True] * 4
    assert whole.count(True) == 1
    assert by_words.count(False) == 1 and len(by_words) > 10


def test_a_string_of_words_is_read_word_by_word_on_every_path_after_the_first() -> None:
    # `eval $C`: the words of the value, each one word of the string. On the first path each
    # word is placed or expanded (and kept); on the others, whose strings share those words'
    # parts, the string is read word by word (_eval_words), as the parsed string is run.
    from megalint.shell.interp import nested_scripts

    script = (
        _FORK + 'C="torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers $L --save=$OUT/ckpt ${NOPE}"\neval $C\n'
    )
    by_words, simple = [], []
    eval_words, simple_eval = nested_scripts._eval_words, nested_scripts._simple_eval

    def counted_words(*args):  # type: ignore[no-untyped-def]
        done = eval_words(*args)
        by_words.append(done is not None)
        return done

    def counted_simple(*args):  # type: ignore[no-untyped-def]
        done = simple_eval(*args)
        simple.append(done is not None)
        return done

    assert _same("t.sh", script)
    assert _steps(script, True) == _steps(script, False)
    nested_scripts._eval_words, nested_scripts._simple_eval = counted_words, counted_simple
    try:
        _steps(script, True)
    finally:
        nested_scripts._eval_words, nested_scripts._simple_eval = eval_words, simple_eval
    paths = len(by_words)
    assert paths > 1
    assert by_words == [False] + [True] * (paths - 1)
    assert simple == [True]


def _run(script: str, fast: bool):  # type: ignore[no-untyped-def]
    """The run of a script's every statement (its Evaluator, its paths), fast paths on or off."""
    from megalint.shell.interp.core import interpret

    saved = fast_paths.ENABLED
    fast_paths.ENABLED = fast
    try:
        return interpret(parse_text("t.sh", script), skip_unread=False)
    finally:
        fast_paths.ENABLED = saved


def _steps(script: str, fast: bool) -> int:
    """The statements a run counted (its budget, MAX_STEPS)."""
    return int(_run(script, fast)[0].steps)


@pytest.mark.parametrize(
    "text", ["", " ", "a", " a", "a ", "  --tp 8 \\\n", "a\tb\n\nc", " \t\n ", "--x=1  --y", "ab  cd  "]
)
def test_blank_cuts_are_the_runs_and_blanks_ifs_finds(text: str) -> None:
    import re

    def expected(text: str) -> list[tuple[int, int] | None]:
        return [
            None if m.group()[0] in " \t\n" else (m.start(), m.end()) for m in re.finditer(r"[^ \t\n]+|[ \t\n]+", text)
        ]

    assert list(fast_paths._blank_cuts(text)) == expected(text)
    assert list(fast_paths._blank_cuts(text)) == expected(text)  # remembered
    long = (text + " ") * (fast_paths._CUTS_KEPT_CHARS // (len(text) + 1) + 1)  # not remembered
    assert len(long) > fast_paths._CUTS_KEPT_CHARS
    assert list(fast_paths._blank_cuts(long)) == expected(long)


def test_a_part_parsed_alone_is_kept_per_string_it_is_placed_in() -> None:
    # A part placed nowhere is shown at its string's anchor: parsed alone, it is kept by the
    # anchor too, never handed to another string.
    from megalint.shell.interp import nested_scripts
    from megalint.shell.interp.core import Evaluator
    from megalint.shell.values import Segment
    from megalint.source import SourceFile

    ev = Evaluator()
    src = SourceFile("t.sh", "eval $A\neval $B\n")
    ev.sources["t.sh"] = src
    part = Segment("${__megalint_unknown_0}", None)
    first, second = src.span(0, 7), src.span(8, 15)
    one = nested_scripts._parsed_alone(ev, part, first)
    assert one is not None and nested_scripts._parsed_alone(ev, part, first) is one
    other = nested_scripts._parsed_alone(ev, part, second)
    assert other is not None and other is not one
    assert one.source.span(0, 5) == first and other.source.span(0, 5) == second


# `if` chains on several paths (interp/grouped.py): run once per group of paths alike in what a
# chain reads, replayed on the others; or run on each path when they cannot be.
_PATHS = 'if [ "$1" = a ]; then L=1; elif [ "$1" = b ]; then L=2; else L=3; fi\nif [ "$2" = x ]; then F=on; fi\n'
CHAINS = [
    # assignments only, reading an input every path shares (one group), an export, a nested chain
    _PATHS + 'if [ "$SIZE" = 7B ]; then N=32; H=4096; export NVTE=1; elif [ "$SIZE" = 13B ]; then N=40;'
    ' if [ "$F" = on ]; then H=5120; fi; else echo "unknown $SIZE"; fi\ntorchrun x.py --n $N --h $H\n',
    # reading what differs between paths (a group per value), and a value assigned in a condition
    _PATHS + 'if [ "$L" = 1 ]; then M=small; else M=big; fi\nif X=$L; [ "$X" -gt 1 ]; then Y=$M; fi\n'
    "torchrun x.py --m $M --y ${Y:-0}\n",
    # the same test again on each path: decided by the way the path took it before
    _PATHS + 'if [ "$SIZE" = 7B ]; then N=32; fi\nif [ "$SIZE" != 7B ]; then N=40; fi\n'
    'if [ "$SIZE" = 7B ]; then H=1; else H=2; fi\ntorchrun x.py --n $N --h $H\n',
    # not replayed: a command recorded, a path stopped, an indirect expansion, a positional
    _PATHS + 'if [ "$SIZE" = 7B ]; then python prep.py; N=1; fi\nif [ "$SIZE" = 1B ]; then exit 1; fi\n'
    'R=N\nif [ -n "${!R}" ]; then Z=1; fi\nif [ "$3" = q ]; then Q=1; fi\ntorchrun x.py --n $N\n',
    # tests joined by && and ||
    _PATHS + 'if [ "$SP" = true ] && [ "$SIZE" != 1B ]; then S=1; elif [ "$TP" = 2 ] || [ "$SP" = x ]; then S=2; fi\n'
    "torchrun x.py --s ${S:-0}\n",
    # many paths: merged past MAX_STATES between the chains
    "".join(f'if [ "$U{i}" = 1 ]; then A{i}=1; else A{i}=2; fi\n' for i in range(6))
    + 'if [ "$SIZE" = 7B ]; then N=32; elif [ "$SIZE" = 13B ]; then N=40; fi\ntorchrun x.py --n $N\n',
]


def _paths_of(script: str, fast: bool):  # type: ignore[no-untyped-def]
    ev, states = _run(script, fast)
    paths = [
        (list(s.vars.items()), s.cond, _taken(s.taken), [c.span for c in s.commands], s.stopped, list(s.funcs))
        for s in states
    ]
    return paths, ev.steps, ev.notes, [(f.kind, f.span) for f in ev.findings], ev.assumptions


def _taken(taken: dict) -> list:  # type: ignore[type-arg]
    """The tests a path took, in order, each with the names it read (a key holds their objects' ids)."""
    return [(tuple(tuple(n for n, _ in x) if isinstance(x, tuple) else x for x in k), v[0]) for k, v in taken.items()]


@pytest.mark.parametrize("script", CHAINS)
def test_if_chains_on_several_paths_run_as_on_each_path(script: str) -> None:
    from megalint.shell.interp import grouped

    replayed = []
    replay = grouped._Group.replay

    def counted(self, ev, s):  # type: ignore[no-untyped-def]
        replayed.append(s)
        return replay(self, ev, s)

    grouped._Group.replay = counted  # type: ignore[method-assign]
    try:
        assert _paths_of(script, True) == _paths_of(script, False)
    finally:
        grouped._Group.replay = replay  # type: ignore[method-assign]
    assert _same("t.sh", script)
    # Replayed on some path in each script but the one whose chains each run a command, stop a
    # path, expand indirectly or read a positional parameter.
    assert bool(replayed) == (script is not CHAINS[3])


def test_a_string_made_again_on_each_path_is_made_of_the_same_parts() -> None:
    # `"--n $L …"` differs on each path in `$L` alone: its other parts (the literal runs, `$OUT`,
    # `$@`'s fields) are the segments made on the first path; the string is what the general
    # code makes (with the fast paths off, each path makes its own).
    script = _FORK + 'A="--n $L --save $OUT/x\\\\  --all $@ --tp 8"\nB=""\n'
    assert _same("t.sh", script)
    for fast in (True, False):
        ev, states = _run(script, fast)
        values = [s.vars["A"].scalar for s in states]
        assert len(values) == 3
        assert [v[1].text for v in values] == ["1", "2", "3"]
        others = [[seg for i, seg in enumerate(v) if i != 1] for v in values]
        shared = all(a is b for a, b in zip(others[0], others[1], strict=True))
        assert shared == fast
        assert all(s.vars["B"].scalar == () for s in states)
