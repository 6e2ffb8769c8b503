"""Renderers never fail, whatever spans and text they are given."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from megalint.diagnostics import Applicability, Diagnostic, Edit, Fix, Label, Severity
from megalint.output import FORMATS, RenderOptions
from megalint.source import SourceFile, Span

SCHEMA = Path("/work/shared/schemas/sarif-2.1.0.json")
VALIDATOR = jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())) if SCHEMA.exists() else None

chars = st.sampled_from(list("ab -=$\\\"'#\t") + ["\n", "\r\n", "数", "😀", "\x1b", "é", "\u0301"])


@st.composite
def case(draw):
    text = "".join(draw(st.lists(chars, max_size=80)))
    sf = SourceFile(draw(st.sampled_from(["t.sh", "dir/a b%,:.sh"])), text)

    def span():
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, len(text)))
        return sf.span(a, b)

    diags = []
    for i in range(draw(st.integers(0, 4))):
        labels = tuple(Label(span(), draw(st.text(max_size=10))) for _ in range(draw(st.integers(0, 2))))
        fix = None
        if draw(st.booleans()):
            s = span()
            fix = Fix("f", draw(st.sampled_from(list(Applicability))), (Edit(s, draw(st.text(max_size=6))),))
        diags.append(
            Diagnostic(
                f"ML{i:03d}",
                "r",
                draw(st.sampled_from(list(Severity))),
                draw(st.text(min_size=1, max_size=30)),
                span(),
                labels,
                help=draw(st.none() | st.text(max_size=30)),
                fix=fix,
                condition=draw(st.none() | st.text(max_size=10)),
            )
        )
    # a finding in a file whose text is not available, and one whose span lies past the end
    if draw(st.booleans()):
        diags.append(Diagnostic("ML900", "r", Severity.ERROR, "elsewhere", Span("missing.sh", 3, 2, 3, 5)))
    if draw(st.booleans()):
        diags.append(Diagnostic("ML901", "r", Severity.WARNING, "stale", Span(sf.path, 99, 1, 120, 4)))
    return diags, {sf.path: sf}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case(), st.integers(20, 120))
def test_every_format_renders_anything(c, width):
    diags, sources = c
    for name, fn in FORMATS.items():
        out = fn(diags, sources, {}, RenderOptions(width=width, root="/r"))
        assert isinstance(out, str)
        if name == "sarif" and VALIDATOR is not None:
            VALIDATOR.validate(json.loads(out))
        if name == "github":
            for line in out.splitlines():
                if line.startswith("::"):
                    assert "\r" not in line
        if name == "full":
            assert "\x1b" not in out
