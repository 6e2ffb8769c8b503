"""Small helpers for tests that read the launch model of a fixture."""

import os

from megalint.launch.extract import extract_launches
from megalint.launch.view import pair_flags
from megalint.shell.analyze import analyze_file, analyze_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")


def load(rel, **kw):
    path = os.path.join(FIXTURES, rel)
    facts = analyze_file(path, **kw)
    return facts, extract_launches(facts)


def load_text(text, name="t.sh", **kw):
    facts = analyze_text(name, text, **kw)
    return facts, extract_launches(facts)


def value(launch, flag):
    """The value word of the last occurrence of `flag` (None for a switch)."""
    found = None
    for f, v in pair_flags(launch.argv):
        if f.text == flag:
            found = (f, v)
    assert found is not None, f"{flag} not in launch"
    return found[1]


def has_flag(launch, flag):
    return any(f.text == flag for f, _ in pair_flags(launch.argv))


def pos(span):
    return f"{span.start_line}:{span.start_col}"


def text_at(facts, span):
    return facts.sources[span.path].text[span.start : span.end]
