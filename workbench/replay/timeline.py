"""The Run's timeline: one row per check of what the context held, and the events beside it.

The loop writes rows a stretch of checks at a time, under the state in effect for that stretch; a
stretch is rewritten when the same check is looked at again (after an elision). Overflow events are
derived from the finished rows, not kept by the loop.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.replay.context import ContextSums, InContext
from workbench.replay.results import Event, EventKind


class TimelineRows:
    """The timeline's columns while the replay runs, and the events so far."""

    def __init__(self, checks: np.ndarray, system_tokens: int) -> None:
        m = len(checks)
        self.checks = checks
        self.system_tokens = system_tokens
        self.briefing = np.zeros(m, dtype=np.int64)
        self.restored = np.zeros(m, dtype=np.int64)
        self.pinned = np.zeros(m, dtype=np.int64)
        self.verbatim = np.zeros(m, dtype=np.int64)
        self.elided_saved = np.zeros(m, dtype=np.int64)
        self.boundary = np.zeros(m, dtype=np.int64)
        self.trigger = np.full(m, np.nan)  # the policy's watch threshold where it showed one
        self.events: list[Event] = []
        self.kinds_at: dict[int, list[str]] = {}  # check -> kinds of its events, in order

    def write(self, k0: int, k1: int, state: InContext, sums: ContextSums, threshold: float | None) -> None:
        """Rows for checks k0..k1 (inclusive) under ``state``."""
        if k1 < k0:
            return
        b = state.boundary
        self.briefing[k0 : k1 + 1] = state.briefing_tokens
        self.restored[k0 : k1 + 1] = state.restored_tokens
        self.pinned[k0 : k1 + 1] = state.pinned_tokens
        self.verbatim[k0 : k1 + 1] = sums.verbatim_at(b, k0, k1)
        self.elided_saved[k0 : k1 + 1] = sums.saved_at(b, k0, k1)
        self.boundary[k0 : k1 + 1] = b
        if threshold is not None:
            self.trigger[k0 : k1 + 1] = threshold

    def event(self, k: int, kind: EventKind, detail: str = "") -> None:
        """Something happened at check k (recorded by the kind's string: what the Run and its exports show)."""
        name = str(kind)
        self.events.append(Event(check=k, index=int(self.checks[k]), kind=name, detail=detail))
        self.kinds_at.setdefault(k, []).append(name)

    def total(self) -> np.ndarray:
        """Context tokens at each check."""
        return self.system_tokens + self.briefing + self.restored + self.pinned + self.verbatim

    def overflow_starts(self, total: np.ndarray, window: int) -> np.ndarray:
        """Checks where the context goes above the window (the first of each run above it)."""
        if not len(total):
            return np.zeros(0, dtype=np.int64)
        over = total > window
        return np.flatnonzero(over & ~np.concatenate(([False], over[:-1])))

    def finish(self, window: int) -> tuple[np.ndarray, np.ndarray]:
        """Add the overflow events and order all events; returns (total per check, overflow starts)."""
        total = self.total()
        starts = self.overflow_starts(total, window)
        for k in starts:
            self.event(int(k), EventKind.OVERFLOW, f"{int(total[k]):,} > window {window:,}")
        self.events.sort(key=lambda e: (e.check, e.kind != EventKind.COMPRESSION_STARTED))
        return total, starts

    def frame(self, total: np.ndarray, baseline: np.ndarray, roles: np.ndarray, window: int) -> pl.DataFrame:
        """The timeline as the Run shows it."""
        m = len(self.checks)
        events_col = [""] * m
        for k, kinds in self.kinds_at.items():
            events_col[k] = ",".join(kinds)
        return pl.DataFrame(
            {
                "step": np.arange(m, dtype=np.int64),
                "index": self.checks,
                "role": roles[self.checks].tolist(),
                "system": np.full(m, self.system_tokens, dtype=np.int64),
                "briefing": self.briefing,
                "restored": self.restored,
                "pinned": self.pinned,
                "verbatim": self.verbatim,
                "elided_saved": self.elided_saved,
                "total": total,
                "baseline": baseline,
                "boundary": self.boundary,
                "trigger": self.trigger,
                "overflow": total > window,
                "events": events_col,
            }
        )
