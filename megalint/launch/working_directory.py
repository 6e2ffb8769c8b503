"""Whether a launch's entry point is found through a guess of the working directory (`pwd`,
`$PWD`, read as the script's folder): such a path may name any project's script."""

from __future__ import annotations

from megalint import lazy_re
from megalint.shell.facts import ASSUME_PWD, ASSUME_PWD_VAR, ScriptFacts
from megalint.shell.values import Word

# The segments of a string re-read as shell (`eval "$CMD"`) no longer carry the assumption: the
# text where the word, or a value it came through, is written is looked at too.
_WORKING_DIRECTORY_ASSUMED = frozenset({ASSUME_PWD, ASSUME_PWD_VAR})
_WORKING_DIRECTORY = lazy_re.compile(r"(`\s*pwd\s*`|\$\(\s*pwd\s*\)|\$\{?PWD\}?)")


def through_working_directory(word: Word | None, facts: ScriptFacts) -> bool:
    """Whether a word's text comes from `pwd` or $PWD: where it, or a value it came through, is written."""
    if word is None:
        return False
    for seg in word.segments:
        if seg.assumed in _WORKING_DIRECTORY_ASSUMED:
            return True
        for span in ((seg.site,) if seg.site is not None else ()) + seg.origin:
            src = facts.sources.get(span.path)
            if src is not None and _WORKING_DIRECTORY.fullmatch(src.text[span.start : span.end].strip()):
                return True
    return False
