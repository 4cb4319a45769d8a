"""What is in the agent's context at a check, and the arithmetic that makes asking cheap.

Context at check k (message i) = hidden prefix + current briefing + pinned messages + every message
from the current boundary to i, minus the tokens freed by tool outputs elided to stubs. The first three
change only at events (a compression landing, an elision), so they live in :class:`InContext`; the
messages since the boundary are a difference of prefix sums (:class:`ContextSums`). Between two events
the context only grows, so "the first check above a threshold" is a binary search, not a walk.
No I/O; the per-message token counts come from the caller's ``HistoryCounts``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from workbench.counting.tokens import HistoryCounts


def derived(counts: HistoryCounts, key: Any, make: Callable[[], np.ndarray]) -> np.ndarray:
    """A per-history array that no knob enters, kept with the history's counts (read-only: every replay shares it).
    Arrays made from knobs are keyed by their view (``counting.counters.knob_keyed``)."""
    value = counts.derived.get(key)
    if value is None:
        value = make()
        value.flags.writeable = False
        counts.derived[key] = value
    return value


def message_roles(counts: HistoryCounts) -> np.ndarray:
    """Each message's role, as an array of str objects."""
    return derived(counts, "roles", lambda: np.array([m.role for m in counts.history.messages], dtype=object))


def assistant_indices(counts: HistoryCounts) -> np.ndarray:
    """Indices of the assistant messages: each is one LLM call of the agent."""
    return derived(counts, "assistant_idx", lambda: np.flatnonzero(message_roles(counts) == "assistant"))


@dataclass
class InContext:
    """What the context holds besides the messages since the boundary; it changes only at events."""

    system_tokens: int = 0
    boundary: int = 0  # first verbatim message
    briefing_chars: int = 0
    briefing_tokens: int = 0
    pinned: set[int] = field(default_factory=set)  # messages before the boundary kept verbatim
    pinned_tokens: int = 0
    restored_tokens: int = 0  # what the agent puts back after a compaction besides the briefing (re-read files)
    briefing_at: dict[int, int] = field(default_factory=dict)  # boundary -> chars of the briefing landed there
    briefing_texts: dict[int, str | None] = field(default_factory=dict)
    elided: set[int] = field(default_factory=set)  # messages whose tool outputs are stubs
    landed: int = 0  # compressions landed so far

    @property
    def base_tokens(self) -> int:
        """Hidden prefix + briefing + restored + pinned messages: the part of the context that is not a message span."""
        return self.system_tokens + self.briefing_tokens + self.restored_tokens + self.pinned_tokens


_INT_LIMIT = 2**62  # a threshold beyond any sum of tokens, well inside int64


class ContextSums:
    """Per-message tokens (trigger counter) and their prefix sums, net of the tool outputs stubbed so far.

    ``in_context_prefix[i]`` is the tokens of messages [0, i) as they are in context now (stubs
    counted as stubs), so any span of messages costs one subtraction. ``in_context_at_checks[k]`` is
    the same prefix through check k's message, the sorted array the threshold search runs on.
    """

    def __init__(self, tokens: np.ndarray, checks: np.ndarray, lag: np.ndarray | None = None) -> None:
        self.tokens = tokens
        self.checks = checks
        self.lag = lag  # per check: what the agent's own measure is short of the context (``trigger_lag``)
        n = len(tokens)
        self.prefix_tokens = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(tokens, out=self.prefix_tokens[1:])
        self.savings = np.zeros(n, dtype=np.int64)  # tokens freed per message by stubbing its tool outputs
        self.stubbed: list[list[int]] = []  # the messages each elision stubbed, in order
        self.saved_prefix = np.zeros(n + 1, dtype=np.int64)
        self.in_context_prefix = self.prefix_tokens.copy()
        self.in_context_at_checks = self._at_checks()
        self.measured_at_checks = self._measured()

    @property
    def elisions(self) -> int:
        """Elisions so far that stubbed something (each changed the sums)."""
        return len(self.stubbed)

    def _at_checks(self) -> np.ndarray:
        if len(self.checks):
            return self.in_context_prefix[self.checks + 1]
        return np.zeros(0, dtype=np.int64)

    def _measured(self) -> np.ndarray:
        """The prefix at each check as the agent measures it: ``in_context_at_checks`` less the lag, as its
        running maximum (the threshold search needs it non-decreasing: a check is found where the measure first
        reached the threshold)."""
        if self.lag is None or not len(self.checks):
            return self.in_context_at_checks
        return np.maximum.accumulate(self.in_context_at_checks - self.lag)

    def measured_lag(self, k: int) -> int:
        """Tokens the agent's measure at check k is short of the context held there (0 without a lag)."""
        if self.lag is None:
            return 0
        return int(self.in_context_at_checks[k] - self.measured_at_checks[k])

    # -- reading -------------------------------------------------------------------------------
    def verbatim(self, boundary: int, i: int) -> int:
        """Tokens of messages [boundary, i] as they are in context now."""
        return int(self.in_context_prefix[i + 1] - self.in_context_prefix[boundary])

    def between(self, lo: int, hi: int) -> int:
        """Tokens of messages [lo, hi) as they are in context now."""
        return int(self.in_context_prefix[hi] - self.in_context_prefix[lo])

    def in_context_tokens(self, indices: Collection[int]) -> int:
        """Tokens of the given messages as they are in context now (pinned messages)."""
        idx = np.fromiter(indices, dtype=np.int64, count=len(indices))
        return int((self.tokens[idx] - self.savings[idx]).sum())

    def verbatim_at(self, boundary: int, k0: int, k1: int) -> np.ndarray:
        """Verbatim tokens (from ``boundary``) at each check k0..k1, inclusive."""
        idx = self.checks[k0 : k1 + 1]
        return self.in_context_prefix[idx + 1] - self.in_context_prefix[boundary]

    def saved_at(self, boundary: int, k0: int, k1: int) -> np.ndarray:
        """Tokens freed by stubs among the verbatim messages at each check k0..k1, inclusive."""
        idx = self.checks[k0 : k1 + 1]
        return self.saved_prefix[idx + 1] - self.saved_prefix[boundary]

    def first_above(self, start: int, end: int, tokens: float, base: int, boundary: int, strict: bool,
                    measured: bool = False) -> int:
        """The first check in [start, end) whose context (``base`` + verbatim) is above ``tokens``.

        ">=" instead of ">" when not ``strict``; ``len(checks)`` if there is none. ``measured``: the context as
        the agent measures it (less the lag), for its own threshold.
        """
        none = len(self.checks)
        end = min(end, none)
        if start >= end:
            return none
        if tokens == -math.inf:
            return start
        if tokens == math.inf:
            return none
        target = tokens - base + float(self.in_context_prefix[boundary])
        side: Literal["left", "right"] = "right" if strict else "left"
        sums = self.measured_at_checks if measured else self.in_context_at_checks
        # The sums are integers: "> target" is "> floor(target)" and ">= target" is ">= ceil(target)". An integer
        # keeps the search O(log n); a float made numpy convert the whole array first (O(n) at every event).
        whole = min(max(math.floor(target) if strict else math.ceil(target), -_INT_LIMIT), _INT_LIMIT)
        found = start + int(np.searchsorted(sums[start:end], whole, side=side))
        return found if found < end else none

    # -- changing --------------------------------------------------------------------------------
    def stub(self, indices: list[int], freeable: np.ndarray) -> int:
        """Count the tool outputs of ``indices`` as stubs from now on; returns the tokens freed."""
        self.stubbed.append(list(indices))
        saved = 0
        for j in indices:
            s = int(freeable[j])
            self.savings[j] = s  # in place: the policies' view holds this array
            saved += s
        np.cumsum(self.savings, out=self.saved_prefix[1:])
        self.in_context_prefix = self.prefix_tokens - self.saved_prefix
        self.in_context_at_checks = self._at_checks()
        self.measured_at_checks = self._measured()
        return saved


class PrefixAsOf:
    """``in_context_prefix`` as it stood after a given number of elisions, for accounting after the loop.

    Rebuilt forward from the record of what each elision stubbed (asked for in nondecreasing order),
    so the loop keeps no copy of past sums.
    """

    def __init__(self, sums: ContextSums) -> None:
        self.sums = sums
        self.elisions = 0
        self.savings = np.zeros(len(sums.savings), dtype=np.int64)
        self.prefix = sums.prefix_tokens

    def __call__(self, elisions: int) -> np.ndarray:
        sums = self.sums
        if elisions == sums.elisions:
            return sums.in_context_prefix
        if elisions < self.elisions:
            raise ValueError(f"elisions must not go back: asked for {elisions} after {self.elisions}")
        if elisions > self.elisions:
            for indices in sums.stubbed[self.elisions : elisions]:
                self.savings[indices] = sums.savings[indices]
            saved = np.zeros(len(self.savings) + 1, dtype=np.int64)
            np.cumsum(self.savings, out=saved[1:])
            self.prefix = sums.prefix_tokens - saved
            self.elisions = elisions
        return self.prefix
