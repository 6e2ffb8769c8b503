"""Values keep their hash once computed (paths are compared by it, interp/algebra.py); a value sent
to another process or read from the cache must not carry a hash made under another hash seed."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from megalint.shell.interp.state import Var
from megalint.shell.values import Segment, Unknown, Word
from megalint.source import SourceFile


def _word() -> Word:
    src = SourceFile("t.sh", "TP=8\n")
    return Word((Segment("8", src.span(3, 4), (), None), Segment(None, None, (), Unknown("unknown"))))


def test_hash_is_kept_and_agrees_with_equality() -> None:
    w, again = _word(), _word()
    assert w == again and hash(w) == hash(again)
    assert w._hash == hash(w)  # kept
    assert Word(w.segments[:1]) != w


def test_a_pickled_value_leaves_its_hash_behind() -> None:
    w = _word()
    hash(w)
    back = pickle.loads(pickle.dumps(w))
    assert back == w and back._hash == 0 and back.segments[0]._hash == 0


def test_hash_seeds_of_two_processes_do_not_leak_through_pickles() -> None:
    # The child pickles a hashed word under another seed; here it must hash as it would here.
    code = (
        "import pickle, sys; from megalint.shell.values import Segment, Word;"
        "w = Word((Segment('--tp', None),)); hash(w); sys.stdout.buffer.write(pickle.dumps(w))"
    )
    env = dict(os.environ, PYTHONHASHSEED="123")
    data = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env).stdout
    back = pickle.loads(data)  # noqa: S301 - our own child's output
    assert hash(back) == hash(Word((Segment("--tp", None),)))


def test_variable_mark_is_kept_and_equal_for_equal_values() -> None:
    a = Var(array={"0": (Segment("1", None),)})
    b = Var(array={"0": (Segment("1", None),)})
    assert a.mark() == b.mark() and a._mark == a.mark()
    assert Var(array={"0": (Segment("2", None),)}).mark() != a.mark()


def test_a_words_text_is_its_parts_joined_or_none_with_an_unknown_part() -> None:
    known, other, unknown = Segment("--tp", None), Segment(" 8", None), Segment(None, None, (), Unknown("x"))
    assert Word(()).text == ""
    assert Word((known,)).text == "--tp"
    assert Word((known, other, known)).text == "--tp 8--tp"
    assert Word((unknown,)).text is None
    assert Word((known, unknown)).text is None
    assert Word((unknown, known)).text is None
    assert Word((known,), splat=Unknown("all")).text is None
