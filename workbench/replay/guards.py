"""The guards users ask for around compaction (spec/peers.md §3), as the replay applies them.

- cooldown: after a compaction lands or fails, no proactive compaction for ``cooldown_checks`` checks;
  the checks where one would have started are counted (``cooldown-skip`` events).
- manual: compactions at the checks ``manual_compact_checks`` names; they land at once.
- reactive: a compaction when a check overflows the window (``reactive_compaction``, a switch separate
  from proactive compaction); it lands at once. A compaction in flight blocks it until it lands.
- ineffective and thrash, report-only: a landing that freed less than ``min_savings_ratio`` of the
  context, or landed within ``thrash_window_checks`` of the previous one.

Each shows on the timeline's events column and in Metrics. The loop asks; this module keeps the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.history.words import counted
from workbench.knobs import Knobs

FORCED = ("manual", "reactive")  # triggers that start at once and ignore the cooldown: the user (or the call) waits


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
    def landed(self, k: int, freed: int, context_before: int) -> tuple[bool, bool, list[tuple[str, str]]]:
        """A compaction landed at check k, freeing ``freed`` of ``context_before`` tokens.

        Returns (ineffective, thrash, events as (kind, detail)) and starts the cooldown.
        """
        kn = self.knobs
        events = []
        ineffective = freed < kn.min_savings_ratio * context_before
        if ineffective:
            detail = f"freed {freed:,} of {context_before:,} tokens (< {kn.min_savings_ratio:.0%})"
            events.append(("ineffective", detail))
        gap = None if self.last_landing is None else k - self.last_landing
        thrash = gap is not None and kn.thrash_window_checks > 0 and gap <= kn.thrash_window_checks
        if thrash:
            events.append(("thrash", f"{counted(gap or 0, 'check')} after the previous compaction"))
        self.last_landing = k
        self.cool_until = k + 1 + kn.cooldown_checks
        return ineffective, thrash, events
