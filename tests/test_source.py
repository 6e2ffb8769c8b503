"""Byte offsets (what tree-sitter reports) to character offsets (what megalint shows), and
spans that find their line and column on first use."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given
from hypothesis import strategies as st

from megalint.source import SourceFile, Span

_TEXT = st.text(alphabet=st.sampled_from(list("ab \n#=$\t") + ["每", "节", "é", "😀", "\u00a0"]), max_size=80)


@given(_TEXT, st.data())
def test_char_offset_counts_the_characters_before_the_byte(text, data):
    sf = SourceFile("t.sh", text)
    raw = text.encode("utf-8")
    b = data.draw(st.integers(min_value=0, max_value=len(raw)))
    assert sf.char_offset(b) == len(raw[:b].decode("utf-8", "ignore"))


@given(_TEXT, st.data())
def test_spans_find_the_line_and_column_the_text_has(text, data):
    sf = SourceFile("t.sh", text)
    a = data.draw(st.integers(min_value=0, max_value=len(text)))
    b = data.draw(st.integers(min_value=a, max_value=len(text)))
    span = sf.span(a, b)
    lines = text.split("\n")

    def position(offset):
        line = text[:offset].count("\n")
        return line + 1, offset - sum(len(x) + 1 for x in lines[:line]) + 1

    assert (span.start_line, span.start_col) == position(a)
    assert (span.end_line, span.end_col) == position(b)
    given_pos = Span("t.sh", *position(a), *position(b), a, b)
    assert span == given_pos and hash(span) == hash(given_pos) and not span < given_pos
    assert pickle.loads(pickle.dumps(span)) == span and repr(span) == repr(given_pos)


@given(_TEXT, st.data())
def test_a_file_sent_elsewhere_is_its_text_and_finds_the_same_places(text, data):
    sf = SourceFile("t.sh", text)
    raw = text.encode("utf-8")
    b = data.draw(st.integers(min_value=0, max_value=len(raw)))
    before = (sf.char_offset(b), sf.line_starts[:])
    sent = pickle.dumps(sf)
    assert len(sent) < len(raw) + 100  # the text only, not its bytes beside it
    back = pickle.loads(sent)
    assert (back.path, back.text, back.data) == (sf.path, sf.text, sf.data)
    assert (back.char_offset(b), back.line_starts) == before


def test_a_file_whose_bytes_are_not_its_texts_utf8_keeps_them():
    # The bytes a file was decoded from, when they are not its text's UTF-8, still give the
    # byte -> character offsets of the file as it was read.
    sf = SourceFile("t.sh", "ÿab", "ÿab".encode("latin-1"))
    back = pickle.loads(pickle.dumps(sf))
    assert back.data == b"\xffab" and back.char_offset(1) == sf.char_offset(1) == 1
