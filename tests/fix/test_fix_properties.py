"""Property: applying edits never changes a character outside them (needs hypothesis, the test extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given, settings
from hypothesis import strategies as st

from megalint.diagnostics import Edit
from megalint.fix import apply_edits, resolve_edits
from megalint.source import SourceFile

# --- property: nothing outside the edits changes -------------------------------------------

text_chars = st.sampled_from(list("ab \t\\'\"#$\n") + ["\r\n", "数", "é", "\U0001f600"])


@st.composite
def text_and_edits(draw):
    text = "".join(draw(st.lists(text_chars, max_size=60)))
    n = len(text)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    pairs = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        pairs.append((a, b))
    # drop a second insertion at the same point, which is a conflict by design
    clean = []
    for a, b in pairs:
        if clean and a == b == clean[-1][0] == clean[-1][1]:
            continue
        if clean and a < clean[-1][1]:
            continue
        clean.append((a, b))
    contents = [draw(st.text(alphabet="xyz\n\\ ", max_size=5)) for _ in clean]
    return text, clean, contents


@settings(max_examples=300, deadline=None)
@given(text_and_edits())
def test_applying_edits_never_changes_a_character_outside_them(case):
    text, ranges, contents = case
    sf = SourceFile("t.sh", text)
    edits = [Edit(sf.span(a, b), c) for (a, b), c in zip(ranges, contents, strict=False)]
    resolved = resolve_edits(text, edits)
    out = apply_edits(text, edits)
    # walk the output: every gap between edits is the original text, byte for byte
    pos_in, pos_out = 0, 0
    for a, b, content in resolved:
        gap = text[pos_in:a]
        assert out[pos_out : pos_out + len(gap)] == gap
        pos_out += len(gap)
        assert out[pos_out : pos_out + len(content)] == content
        pos_out += len(content)
        pos_in = b
    assert out[pos_out:] == text[pos_in:]
    # and the content is the edit's own, up to the file's line ending
    for (_a, _b, content), e in zip(resolved, sorted(edits, key=lambda e: (e.span.start, e.span.end)), strict=False):
        assert content.replace("\r\n", "\n") == e.content.replace("\r\n", "\n")
    assert len(out) == len(text) + sum(len(c) - (b - a) for a, b, c in resolved)
