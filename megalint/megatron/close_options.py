"""`difflib.get_close_matches` over one fixed list of option strings, asked many times.

difflib screens every candidate with two bounds before its real ratio: `real_quick_ratio` (from
the lengths alone) and `quick_ratio` (from the characters both hold, counted). Both are worked out
again for each candidate on each call, which made "did you mean" a measurable part of checking a
corpus. Here each candidate's length and character counts are kept once per list (the candidates
grouped by length, so that the lengths whose bound fails are not visited), and the same bounds
are computed from them with difflib's arithmetic: the matches, and their order, are difflib's.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence


def _ratio(matches: int, length: int) -> float:
    # difflib's _calculate_ratio: the same float for the same integers.
    return 2.0 * matches / length if length else 1.0


class CloseOptions:
    """The candidates of `get_close_matches`, kept for many questions."""

    def __init__(self, candidates: Sequence[str]):
        by_length: dict[int, list[tuple[int, str, Counter[str]]]] = {}
        for place, text in enumerate(candidates):
            by_length.setdefault(len(text), []).append((place, text, Counter(text)))
        self._by_length = sorted(by_length.items())

    def matches(self, word: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """`difflib.get_close_matches(word, candidates, n, cutoff)`."""
        if not n > 0:
            raise ValueError(f"n must be > 0: {n!r}")
        if not 0.0 <= cutoff <= 1.0:
            raise ValueError(f"cutoff must be in [0.0, 1.0]: {cutoff!r}")
        lb = len(word)
        wanted = Counter(word).items()
        screened: list[tuple[int, str]] = []
        for la, entries in self._by_length:
            if _ratio(min(la, lb), la + lb) < cutoff:  # real_quick_ratio
                continue
            # quick_ratio counts the characters both strings hold, each as often as the rarer one
            # has it; `least` is the fewest shared whose ratio reaches the cutoff (as a float).
            least = next(c for c in range(min(la, lb) + 1) if _ratio(c, la + lb) >= cutoff)
            for place, text, counts in entries:
                shared = 0
                for ch, k in wanted:
                    have = counts.get(ch)
                    if have:
                        shared += have if have < k else k
                if shared >= least:
                    screened.append((place, text))
        # In the candidates' order, as difflib meets them (equal scores then keep its order).
        screened.sort()
        from difflib import SequenceMatcher  # imported once a flag is not known

        matcher = SequenceMatcher()
        matcher.set_seq2(word)
        result = []
        for _, text in screened:
            matcher.set_seq1(text)
            score = matcher.ratio()
            if score >= cutoff:
                result.append((score, text))
        return [text for _, text in heapq.nlargest(n, result)]
