"""The naive replay the engine is measured against: the same replay without prefix sums.

It drives the engine's own event logic (policy, briefer, landing, metrics), so its results must be
identical, but every context size is re-summed from the per-message counts at every check: the
search for the next check above a threshold walks check by check, and each timeline row adds up the
messages in context again. The counts themselves are given (already counted, as for the engine),
as a Python list, the fastest form for such sums, so the comparison is the strictest fair one.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.policies import get_policy
from workbench.replay.context import ContextSums
from workbench.replay.loop import _Replay
from workbench.replay.results import Run


class NaiveSums(ContextSums):
    """The replay's context arithmetic with every span re-summed from the per-message counts."""

    def _lists(self) -> tuple[list[int], list[int]]:
        """In-context tokens per message (counts minus elision savings) and the savings, as lists."""
        if getattr(self, "_lists_at", None) != self.elisions:  # savings change only when something is elided
            self._naive_lists = (self.tokens - self.savings).tolist(), self.savings.tolist()
            self._lists_at = self.elisions
        return self._naive_lists

    def _checks_list(self) -> list[int]:
        if getattr(self, "_naive_checks", None) is None:
            self._naive_checks = self.checks.tolist()
        return self._naive_checks

    def verbatim(self, boundary: int, i: int) -> int:
        inside, _ = self._lists()
        return sum(inside[boundary : i + 1])

    def first_above(self, start: int, end: int, tokens: float, base: int, boundary: int, strict: bool,
                    measured: bool = False) -> int:
        none = len(self.checks)
        end = min(end, none)
        if start >= end:
            return none
        if tokens == -math.inf:
            return start
        checks = self._checks_list()
        for kk in range(start, end):
            ctx = base + self.verbatim(boundary, checks[kk]) - (self.measured_lag(kk) if measured else 0)
            if ctx > tokens or (not strict and ctx >= tokens):
                return kk
        return none

    def verbatim_at(self, boundary: int, k0: int, k1: int) -> np.ndarray:
        inside, _ = self._lists()
        checks = self._checks_list()
        return np.array([sum(inside[boundary : checks[kk] + 1]) for kk in range(k0, k1 + 1)], dtype=np.int64)

    def saved_at(self, boundary: int, k0: int, k1: int) -> np.ndarray:
        _, saved = self._lists()
        checks = self._checks_list()
        return np.array([sum(saved[boundary : checks[kk] + 1]) for kk in range(k0, k1 + 1)], dtype=np.int64)


class NaiveReplay(_Replay):
    """``simulate``'s replay with every context re-summed at every check (O(checks × context))."""

    sums_type = NaiveSums


def naive_simulate(history: History, knobs: Knobs, *, cache: CountCache) -> Run:
    """``simulate(history, knobs, cache=cache)`` computed the naive way (same result, slower)."""
    if not knobs.keep_existing_briefings:
        history = history.without_briefings()
    counts = cache.counts_for(history)
    replay = NaiveReplay(history, knobs, SimulatedBriefer(), get_policy(knobs), counts, None, None, None)
    return replay.run()


def same_run(a: Run, b: Run) -> bool:
    """Whether two runs agree on the timeline, every compression and the metrics."""
    if a.metrics != b.metrics or len(a.compressions) != len(b.compressions):
        return False
    if any(x.to_dict() != y.to_dict() for x, y in zip(a.compressions, b.compressions, strict=True)):
        return False
    ta, tb = a.timeline, b.timeline
    if ta.columns != tb.columns:
        return False
    for col in ta.columns:
        x, y = ta[col].to_numpy(), tb[col].to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif list(x) != list(y):
            return False
    return True
