"""Which facts a text mentions, in time that grows with the text: the same answers as ``fact_found``.

Checking every fact against every message is quadratic (100k messages × thousands of facts took
minutes). ``fact_found`` has two halves, and each gets its own shortcut:

- exact needles (a path, an error line, a URL): each needle is anchored on its longest *exact run*,
  a maximal run of alphanumeric characters (``str.isalnum``) that, wherever the needle occurs, is
  also a maximal run of the text. Runs inside the needle (non-alphanumeric on both sides) always
  are; a path needle's first and last runs are too, because a path only counts on path boundaries.
  A text is checked only against the needles whose anchor it holds; a needle with no exact run
  (one bare word, rare) is checked against every text;
- word share (a paraphrased decision, request or plan: ``ceil(WORD_SHARE × n)`` of its ``n`` words):
  counted for all facts at once from an inverted index word → facts, so the cost is the number of
  (word of the text, fact holding that word) pairs, in numpy.

Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from workbench.analysis.fact_probes.fact_rules import _contains_path, word_set
from workbench.analysis.fact_probes.facts import WORD_SHARE, Fact

_RUN_RE = re.compile(r"[^\W_]+")  # maximal runs of str.isalnum characters
_EMPTY = np.zeros(0, dtype=np.int64)
_SMALL = 64  # hits sorted in Python up to this many, by a mask above it
_LINE_CACHE_MAX = 200_000  # distinct briefing lines remembered per matcher (then it starts afresh)


def runs_of(text_lower: str) -> set[str]:
    """The distinct maximal alphanumeric runs of a (lowercased) text."""
    return set(_RUN_RE.findall(text_lower))


def _needle_anchor(needle: str, *, path_like: bool) -> str | None:
    """The longest run of ``needle`` that is a maximal run of any text the needle is found in."""
    spans = [(m.start(), m.end()) for m in _RUN_RE.finditer(needle)]
    exact = [needle[a:b] for a, b in spans if path_like or (a > 0 and b < len(needle))]
    return max(exact, key=len) if exact else None


def _needle_found(fact: Fact, text_lower: str) -> bool:
    """The needle half of ``fact_found``."""
    if fact.path_like:
        return any(_contains_path(text_lower, n) for n in fact.needles)
    return any(n in text_lower for n in fact.needles)


class FactMatcher:
    """Anchors and a word index for a tuple of facts; ``found_in(text)`` is ``fact_found`` for all of them."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self.facts = tuple(facts)
        self.first = np.array([f.index for f in self.facts], dtype=np.int64)
        self.by_run: dict[str, list[int]] = {}
        self.unanchored: list[int] = []
        postings: dict[str, list[int]] = {}
        self.need = np.zeros(len(self.facts), dtype=np.int64)
        for k, fact in enumerate(self.facts):
            if fact.needles:
                anchors = [_needle_anchor(n, path_like=fact.path_like) for n in fact.needles]
                if any(a is None for a in anchors):
                    self.unanchored.append(k)
                else:
                    for run in dict.fromkeys(a for a in anchors if a is not None):
                        self.by_run.setdefault(run, []).append(k)
            if fact.words:
                # hit >= WORD_SHARE * n, hit a whole number: the same as hit >= ceil(WORD_SHARE * n)
                self.need[k] = math.ceil(WORD_SHARE * len(fact.words))
                for word in fact.words:
                    postings.setdefault(word, []).append(k)
        self.by_word = {w: np.array(ks, dtype=np.int64) for w, ks in postings.items()}
        self._run_keys = frozenset(self.by_run)
        self._word_keys = frozenset(self.by_word)
        self._lines: dict[str, tuple[frozenset[int], frozenset[str]]] = {}

    def found_in(self, text_lower: str, words: frozenset[str], *, max_index: int | None = None) -> np.ndarray:
        """Sorted indices of the facts found in ``text_lower`` (``words``: its ``word_set``); with
        ``max_index``, only facts first met at or before that message."""
        needle_hits = self._needle_hits(text_lower, runs_of(text_lower), max_index)
        word_hits = self._word_hits(words, max_index)
        return self._union(word_hits, needle_hits)

    def found_in_lines(self, text_lower: str) -> np.ndarray:
        """``found_in`` of a text read line by line, each distinct line matched once per matcher.

        Chained briefings repeat most of their lines (the previous briefing's sections are merged in: 2,336
        distinct lines in 96,681 over 278 briefings of a 30k history). Exact: no needle holds a newline (facts
        keep single-spaced keys and paths without one), a path boundary at a line's end is one at a newline,
        and neither a word nor a run crosses one, so the text's hits are the union of its lines' hits.
        """
        needles: set[int] = set()
        words: set[str] = set()
        cache = self._lines
        for line in text_lower.split("\n"):
            hit = cache.get(line)
            if hit is None:
                if len(cache) >= _LINE_CACHE_MAX:
                    cache.clear()
                hit = cache[line] = (frozenset(self._needle_hits(line, runs_of(line), None)), word_set(line))
            needles |= hit[0]
            words |= hit[1]
        return self._union(self._word_hits(words, None), needles)

    def _union(self, word_hits: np.ndarray, needle_hits: set[int]) -> np.ndarray:
        """Sorted union of both halves' hits (a mask: ``np.union1d`` sorts and hashes, ~2 ms a briefing)."""
        if not needle_hits:
            return word_hits
        if len(needle_hits) + len(word_hits) <= _SMALL:
            return np.array(sorted(needle_hits.union(word_hits.tolist())), dtype=np.int64)
        mask = np.zeros(len(self.facts), dtype=bool)
        mask[word_hits] = True
        mask[np.fromiter(needle_hits, dtype=np.int64, count=len(needle_hits))] = True
        return np.flatnonzero(mask)

    def _needle_hits(self, text_lower: str, runs: set[str], max_index: int | None) -> set[int]:
        facts = self.facts
        cands = set(self.unanchored)
        for run in runs & self._run_keys:
            cands.update(self.by_run[run])
        return {k for k in cands
                if (max_index is None or facts[k].index <= max_index) and _needle_found(facts[k], text_lower)}

    def _word_hits(self, words: frozenset[str] | set[str], max_index: int | None) -> np.ndarray:
        shared = words & self._word_keys
        if not shared:
            return _EMPTY
        counts = np.bincount(np.concatenate([self.by_word[w] for w in shared]), minlength=len(self.facts))
        hits = np.flatnonzero((counts >= self.need) & (counts > 0))
        return hits[self.first[hits] <= max_index] if max_index is not None else hits
