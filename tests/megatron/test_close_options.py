"""CloseOptions gives what difflib.get_close_matches gives, over the same candidates."""

from __future__ import annotations

import difflib
import random

import pytest

from megalint.megatron.catalogue_choice import catalogue_for
from megalint.megatron.close_options import CloseOptions


def _misspelt(options: list[str], seed: int) -> list[str]:
    rnd = random.Random(seed)
    words = []
    for option in options:
        chars = list(option)
        for _ in range(rnd.randint(0, 4)):
            i = rnd.randrange(len(chars))
            edit = rnd.randint(0, 2)
            if edit == 0 and len(chars) > 1:
                del chars[i]
            elif edit == 1:
                chars.insert(i, rnd.choice("abcdefghijklmnopqrstuvwxyz-_0"))
            else:
                chars[i] = rnd.choice("abcdefghijklmnopqrstuvwxyz-_0")
        words.append("".join(chars))
    return words


def test_the_matches_of_difflib_on_a_catalogue():
    known = catalogue_for(None)[0].option_strings()
    close = CloseOptions(known)
    odd = ["", "-", "--", "--tp", "--TENSOR-MODEL-PARALLEL-SIZE", "x" * 300]
    # 0.75 is the cutoff megalint asks with; at lower ones most candidates pass the screens and
    # difflib's full ratio (slow) is worked out for each: a few words only.
    cases = [(w, n, c) for w in _misspelt(known, seed=3)[::8] + odd for n in (1, 4) for c in (0.75, 0.9)]
    cases += [(w, 3, c) for w in odd[:5] + known[:2] for c in (0.0, 0.6, 1.0)]
    for word, n, cutoff in cases:
        assert close.matches(word, n, cutoff) == difflib.get_close_matches(word, known, n, cutoff), (word, n, cutoff)


def test_repeated_and_empty_candidates_as_difflib():
    known = ["--lr", "--lr", "", "--seq-length", "--seq-len", "--seq-length"]
    close = CloseOptions(known)
    for word in ["--lr", "--seq-lenght", "", "--seq"]:
        for cutoff in (0.0, 0.5, 0.8):
            assert close.matches(word, 5, cutoff) == difflib.get_close_matches(word, known, 5, cutoff)


def test_bad_arguments_as_difflib():
    close = CloseOptions(["--lr"])
    with pytest.raises(ValueError, match="n must be > 0"):
        close.matches("--lr", 0)
    with pytest.raises(ValueError, match="cutoff must be in"):
        close.matches("--lr", 1, 1.5)
