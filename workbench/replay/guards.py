"""The guards around compaction (spec/peers.md §3), in one place: the loop asks this module where the next decision
falls (``schedule``) and whether a compaction may start there (``admit``); a new guard changes only this module.

- cooldown: after a compaction lands or fails, no proactive compaction for ``cooldown_checks`` checks;
  the checks where one would have started are counted (``cooldown-skip`` events).
- manual: compactions at the checks ``manual_compact_checks`` names; they land at once.
- reactive: a compaction when a check overflows the window (``reactive_compaction``, a switch separate
  from proactive compaction); it lands at once. A compaction in flight blocks it until it lands.
- ineffective and thrash, report-only: a landing that freed less than ``min_savings_ratio`` of the
  context, or landed within ``thrash_window_checks`` of the previous one.

Each shows on the timeline's events column and in Metrics. The loop asks and writes the events; this module keeps
the state and decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from workbench.history.words import counted
from workbench.knobs import Knobs
from workbench.policies.base import Trigger, Watch
from workbench.replay.results import EventKind

# Triggers that start at once and ignore the cooldown: the user (or the call) waits.
FORCED = frozenset({Trigger.MANUAL, Trigger.REACTIVE})


class Search(Protocol):
    """The replay's search: the first check in [start, end) whose context is above ``tokens`` (the number of
    checks if none); ``measured``: as the agent measures it."""

    def __call__(self, start: int, tokens: float, strict: bool, end: int | None = None, *,
                 measured: bool = False) -> int: ...


@dataclass(frozen=True)
class Slot:
    """Where the next decision falls: its check (the number of checks if none), what fires there, and the checks
    the cooldown held before it, as the event to write ((check, detail) or None)."""

    check: int
    trigger: Trigger
    held: tuple[int, str] | None = None


@dataclass
class Guards:
    """Where the guards stand during one replay."""

    knobs: Knobs
    manual: list[int] = field(default_factory=list)  # manual checks not reached yet, ascending
    cool_until: int = 0  # first check where a proactive compaction may start again
    last_landing: int | None = None  # check of the previous landed compaction
    cooldown_skips: int = 0

    @classmethod
    def of(cls, knobs: Knobs) -> Guards:
        return cls(knobs=knobs, manual=list(knobs.manual_checks))

    # -- scheduling ------------------------------------------------------------------------------
    def schedule(self, k: int, watches: Sequence[Watch] | None, search: Search, checks: np.ndarray) -> Slot:
        """The next decision from check k on, given the policy's ``watches`` (None: proactive compaction off).

        Ties go to a manual check first, then the watches in order, then reactive compaction. Proactive watches
        wait out the cooldown; the checks they would have fired at are counted and returned as ``held``.
        """
        count = len(checks)
        best, reason, held_event = count, Trigger.THRESHOLD, None
        manual = self.next_manual(k)
        if manual is not None:
            best, reason = manual, Trigger.MANUAL
        if watches is not None:
            held = count  # the first check the cooldown held, if any
            for w in watches:
                start = max(k, int(np.searchsorted(checks, w.from_index, side="left")))
                if w.cooldown and self.cooling(start):
                    held = min(held, search(start, w.tokens, w.strict, self.cool_until, measured=True))
                    start = self.cool_until
                found = search(start, w.tokens, w.strict, measured=True)
                if found < best:
                    best, reason = found, w.reason
            stop = min(self.cool_until, best)
            if held < stop:
                held_event = (held, self.hold(stop - held))
        if self.knobs.reactive_compaction:
            overflow = search(k, self.knobs.context_window_tokens, True)
            if overflow < best:
                best, reason = overflow, Trigger.REACTIVE
        return Slot(best, reason, held_event)

    def taken(self, k: int, trigger: Trigger) -> None:
        """The decision at check k is being taken (a manual one is then done)."""
        if trigger == Trigger.MANUAL:
            self.manual_done(k)

    # -- admitting -------------------------------------------------------------------------------
    @staticmethod
    def forced(trigger: Trigger) -> bool:
        """Whether ``trigger`` starts a compaction at once, whatever the cooldown (manual, reactive)."""
        return trigger in FORCED

    def admit(self, k: int, trigger: Trigger) -> str | None:
        """Whether a compaction may start at check k: None if it may, else the held check's event detail (counted
        as a cooldown skip)."""
        if self.forced(trigger) or not self.cooling(k):
            return None
        return self.hold(1)

    def land_check(self, k: int, trigger: Trigger) -> int:
        """Where a compaction started at check k lands: at once when forced, else ``latency_steps`` later."""
        return k if self.forced(trigger) else k + self.knobs.latency_steps

    # -- manual ----------------------------------------------------------------------------------
    def next_manual(self, k: int) -> int | None:
        """The check of the next manual compaction from check k on (an overdue one fires at k)."""
        return max(k, self.manual[0]) if self.manual else None

    def manual_done(self, k: int) -> None:
        """A manual compaction was taken at check k: drop it and any it overtook."""
        self.manual = [c for c in self.manual if c > k]

    # -- cooldown --------------------------------------------------------------------------------
    def cooling(self, k: int) -> bool:
        """Whether check k is inside the cooldown (proactive compaction held)."""
        return k < self.cool_until

    def hold(self, count: int) -> str:
        """Count ``count`` checks held by the cooldown; returns the event's detail."""
        self.cooldown_skips += count
        return f"{counted(count, 'check')} held until check {self.cool_until}"

    def failed(self, k: int) -> None:
        """A compaction failed at check k: the cooldown starts as after a landing."""
        self.cool_until = k + 1 + self.knobs.cooldown_checks

    # -- landing -----------------------------------------------------------------------------------
    def landed(self, k: int, freed: int, context_before: int) -> tuple[bool, bool, list[tuple[EventKind, str]]]:
        """A compaction landed at check k, freeing ``freed`` of ``context_before`` tokens.

        Returns (ineffective, thrash, events as (kind, detail)) and starts the cooldown.
        """
        kn = self.knobs
        events = []
        ineffective = freed < kn.min_savings_ratio * context_before
        if ineffective:
            detail = f"freed {freed:,} of {context_before:,} tokens (< {kn.min_savings_ratio:.0%})"
            events.append((EventKind.INEFFECTIVE, detail))
        gap = None if self.last_landing is None else k - self.last_landing
        thrash = gap is not None and kn.thrash_window_checks > 0 and gap <= kn.thrash_window_checks
        if thrash:
            events.append((EventKind.THRASH, f"{counted(gap or 0, 'check')} after the previous compaction"))
        self.last_landing = k
        self.cool_until = k + 1 + kn.cooldown_checks
        return ineffective, thrash, events
