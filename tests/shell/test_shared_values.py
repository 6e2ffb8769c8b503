"""Paths that assign alike hold one value object (interp/core.py `shared`): expansions reading it
are then worked out once for all paths, and paths are told apart by identity, not by value."""

from __future__ import annotations

from megalint.shell.interp.core import interpret
from megalint.shell.interp.state import State
from megalint.shell.parse import parse_text

FORKED = 'if [ "$MODE" = a ]; then\n  M=1\nelif [ "$MODE" = b ]; then\n  M=2\nelse\n  M=3\nfi\n'


def _paths(script: str) -> list[State]:
    _, states = interpret(parse_text("t.sh", script), skip_unread=False)
    live = [s for s in states if not s.stopped]
    assert len(live) == 3, "three undecided branches: three paths"
    return live


def test_a_value_assigned_alike_on_every_path_is_one_object() -> None:
    paths = _paths(FORKED + 'TP=8\nPP="${TP}"\nCP=${CP:-2}\nN=$((TP * 2))\nARGS="--tp $TP --pp $PP"\n')
    for name in ("TP", "PP", "CP", "N", "ARGS"):
        values = {id(p.vars[name]) for p in paths}
        assert len(values) == 1, f"{name} is one object on every path"
    assert {p.vars["M"].scalar[0].text for p in paths} == {"1", "2", "3"}


def test_values_that_differ_in_anything_tracked_stay_apart() -> None:
    script = FORKED + 'if [ "$M" = 1 ]; then export X=1; else X=1; fi\nY="$M"\n'
    paths = _paths(script)
    exported = {p.vars["X"].exported for p in paths}
    assert exported == {True, False}
    assert len({id(p.vars["Y"]) for p in paths}) == 3, "Y reads M, which differs"


def test_a_word_read_alike_on_every_path_is_expanded_once() -> None:
    script = FORKED + 'TP=8\nARGS="--tensor-model-parallel-size $TP --seed ${SEED:-1}"\n'
    ps = parse_text("t.sh", script)
    _, states = interpret(ps, skip_unread=False)
    assert len([s for s in states if not s.stopped]) == 3
    start = script.index("ARGS=")
    # The assignment is memoised on what it read: the same TP object on every path, one entry.
    entries = ps.memo_cache[("a", start, script.index("\n", start))]
    assert len(entries) == 1


def test_a_shared_value_shown_in_a_string_that_differs_is_one_object_on_every_path() -> None:
    # CMD reads M, which differs: it is worked out on each path, but the part it takes from the
    # value every path shares is shown at `$ARGS` once (splitting.shown_at), and so is cut into
    # fields and placed once when the string is read again (`eval $CMD`).
    paths = _paths(FORKED + 'ARGS="--tp 8 --pp 2"\nCMD="run $ARGS --m $M"\n')
    cmds = [p.vars["CMD"].scalar for p in paths]
    assert len({id(c) for c in cmds}) == 3
    shown = [next(s for s in c if s.text == "--tp 8 --pp 2") for c in cmds]
    assert shown[0] is shown[1] is shown[2]
    assert shown[0].site is not None and shown[0].origin, "shown at `$ARGS`, remembering where it was written"


def test_the_span_of_a_node_is_one_object() -> None:
    ps = parse_text("t.sh", 'X="$A ${B}"\n')
    node = ps.top_level()[0]
    assert ps.span(node) is ps.span(node)
    assert ps.span(node) == ps.source.span_bytes(node.start_byte, node.end_byte)


def test_what_an_undecided_chain_may_assign_is_found_once_and_made_unknown_where_it_falls_through() -> None:
    # Three paths reach the second chain and each falls through it: N is unknown on each,
    # and what the chain may assign was found once.
    script = FORKED + 'if [ "$K" = 1 ]; then N=1; elif [ "$K" = 2 ]; then N=2; fi\n'
    ev, states = interpret(parse_text("t.sh", script), skip_unread=False)
    live = [s for s in states if not s.stopped]
    fell = [s for s in live if s.vars["N"].unknown is not None]
    assert len(live) == 9 and len(fell) == 3
    assert all("no known value selects" in str(s.vars["N"].unknown) for s in fell)
    assert [names for _, names in ev.assigned_in.values()] == [("N",)]


def test_the_words_of_a_shared_value_cut_by_an_expansion_are_one_object_on_every_path() -> None:
    # `$CMD` differs (it reads M), but the words it takes from ARGS are cut once (fast_paths'
    # scalar_word), and the placeholder `eval` reads for an unknown part ARGS holds is made once:
    # the strings read again on each path share them, and so where each was written.
    script = FORKED + 'ARGS="--tp 8 --pp 2"\nCMD="run $ARGS --m $M"\nlaunch $CMD\n'
    script += 'EXTRA="--x $INPUT"\neval $CMD $EXTRA\n'
    ev, states = interpret(parse_text("t.sh", script), skip_unread=False)
    paths = [s for s in states if not s.stopped]
    assert len(paths) == 3
    launched = [next(c for c in p.commands if c.words[0].text == "launch") for p in paths]
    cut = [next(w for w in c.words if w.text == "--tp").segments[0] for c in launched]
    assert cut[0] is cut[1] is cut[2], "cut from the shared value once, at `$CMD`"
    evals = [next(c for c in p.commands if c.words[0].text == "run") for p in paths]
    tps = [next(w for w in c.words if w.text == "--tp") for c in evals]
    assert tps[0] is tps[1] is tps[2], "the word read again from the shared part, made once"
    assert [str(c.words[-1].unknown) for c in evals] == [
        "$INPUT is not set in the script; it comes from the environment"
    ] * 3
    assert len(ev.placeholder_of) == 1, "one placeholder for the unknown part, read on three paths"


def test_a_plain_assignment_keeps_whether_the_variable_was_exported_on_each_path() -> None:
    # `NAME=text` is made once per assignment for every path, once exported and once not.
    script = FORKED.replace("  M=1\n", "  export X=0\n") + "X=5\n"
    paths = _paths(script)
    xs = [p.vars["X"] for p in paths]
    assert [x.exported for x in xs] == [True, False, False]
    assert {x.scalar[0].text for x in xs} == {"5"}
    assert xs[1] is xs[2] and xs[0] is not xs[1]


def test_the_text_between_expansions_in_a_string_is_read_once_for_every_path() -> None:
    # The literal runs of `"…"` (line continuations kept out) are the same pieces on each path;
    # a stray `\` followed by blanks is still reported, once.
    script = FORKED + 'ARGS="--m $M \\\n  --tp 8 \\ \n  --pp 2"\n'
    ps = parse_text("t.sh", script)
    ev, states = interpret(ps, skip_unread=False)
    paths = [s for s in states if not s.stopped]
    runs = [[s for s in p.vars["ARGS"].scalar if s.text and "--tp" in s.text][0] for p in paths]
    assert runs[0] is runs[1] is runs[2]
    assert [f.kind.name for f in ev.findings] == ["STRAY_BACKSLASH_IN_STRING"]


def test_a_word_from_a_part_placed_nowhere_is_shown_at_its_own_string() -> None:
    # Such a word is shown at the whole string it was read from (the anchor), which differs
    # from one string to the next: it is not kept for the run.
    from megalint.shell.interp.reparse import MappedSource
    from megalint.shell.values import Segment
    from megalint.source import SourceFile

    src = SourceFile("t.sh", "eval $A\neval $B\n")
    words: dict = {}
    part = Segment("run", None)
    first, second = src.span(0, 7), src.span(8, 15)
    one = MappedSource("run", (part,), first, {"t.sh": src}, {}, words)
    two = MappedSource("run", (part,), second, {"t.sh": src}, {}, words)
    assert one.placed_word(0, 3, "run").segments[0].site == first
    assert two.placed_word(0, 3, "run").segments[0].site == second


def test_a_word_of_a_command_string_made_of_the_same_parts_is_expanded_once_for_every_path() -> None:
    # `$CMD` differs on each path (it reads M), so each path reads a string of its own; the word
    # `--save=$OUT/ckpt` holds an unknown part and a shared one, the same on every path, and is
    # expanded once: the second and third paths take what the first got (Evaluator.placed_memo).
    from megalint.shell.interp import expansion

    script = FORKED + 'CMD="run --m $M --save=$OUT/ckpt --tp 8"\neval $CMD\n'
    calls: list[str] = []
    expand = expansion._expand_word

    def counted(ev, node, t, st, frame):  # type: ignore[no-untyped-def]
        calls.append(frame.ps.text(node))
        return expand(ev, node, t, st, frame)

    expansion._expand_word = counted
    try:
        ev, states = interpret(parse_text("t.sh", script), skip_unread=False)
    finally:
        expansion._expand_word = expand
    paths = [s for s in states if not s.stopped]
    runs = [next(c for c in p.commands if c.words[0].text == "run") for p in paths]
    saves = [c.words[3] for c in runs]
    assert [w.partial_text for w in saves] == ["--save=…/ckpt"] * 3
    assert saves[0].segments[1].unknown is not None
    assert str(saves[0].segments[1].unknown) == "$OUT is not set in the script; it comes from the environment"
    assert sum(1 for t in calls if t.startswith("--save=")) == 1
    assert [c.words[2].text for c in runs] == ["1", "2", "3"]


def test_a_word_of_a_command_string_that_reads_a_variable_is_expanded_on_each_path_with_its_value() -> None:
    # The string is the same on every path (`$M` is read only when `eval` reads it again): the
    # word is made of the same parts, but what it reads differs, and each path gets its own.
    paths = _paths(FORKED + "CMD='run --m=$M'\neval $CMD\n")
    runs = [next(c for c in p.commands if c.words[0].text == "run") for p in paths]
    assert [c.words[1].text for c in runs] == ["--m=1", "--m=2", "--m=3"]


def test_an_expansion_in_a_string_made_again_on_each_path_is_read_once_where_its_value_is_shared() -> None:
    # ARGS reads M, which differs: the string is made on each path, but `${TP}` inside it reads
    # the value every path shares and is expanded once (expansion._dq_string).
    from megalint.shell.interp import parameters

    script = FORKED + 'TP=8\nARGS="--tp ${TP} --m ${M}"\n'
    read: list[str] = []
    expand = parameters.brace_expansion

    def counted(ev, node, st, frame, quoted, eid):  # type: ignore[no-untyped-def]
        read.append(frame.ps.text(node))
        return expand(ev, node, st, frame, quoted, eid)

    parameters.brace_expansion = counted
    try:
        paths = _paths(script)
    finally:
        parameters.brace_expansion = expand
    assert read.count("${TP}") == 1 and read.count("${M}") == 3
    assert [p.vars["ARGS"].scalar[-1].text for p in paths] == ["1", "2", "3"]


def test_a_value_split_alike_on_every_path_gives_the_same_words() -> None:
    # `$ARGS` unquoted on three paths that hold the same ARGS: split once, the same word objects
    # in each path's command (a launch's binding is then shared, pipeline/launches.py); `$M`
    # differs and is split on each path.
    paths = _paths(FORKED + 'ARGS="--tp 8 --pp $UNSET"\nrun $ARGS --m $M\n')
    words = [next(c for c in p.commands if c.words[0].text == "run").words for p in paths]
    for k in range(1, 5):  # --tp 8 --pp $UNSET
        assert words[0][k] is words[1][k] is words[2][k], k
    assert words[0][4].text is None, "the unset variable's word is unknown, and shared too"
    assert len({id(w[6]) for w in words}) == 3
    assert [w[6].text for w in words] == ["1", "2", "3"]


def test_values_are_looked_up_for_sharing_only_while_there_are_several_paths() -> None:
    ev, states = interpret(parse_text("t.sh", 'TP=8\nARGS="--tp $TP"\nX=8\n'), skip_unread=False)
    assert len(states) == 1 and ev.interned == {}, "one path: nothing to share a value with"
    ev, states = interpret(parse_text("t.sh", FORKED + 'ARGS="--tp 8"\n'), skip_unread=False)
    assert len([s for s in states if not s.stopped]) == 3
    assert [v.scalar[0].text for v in ev.interned] == ["--tp 8"]
