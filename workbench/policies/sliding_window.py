"""sliding_window: keep the last N turns and drop the rest with no summary (seed 003 "sliding window").

The cheapest family: no LLM call, predictable size, and whatever left the window is gone (OpenHands'
``recent`` and ``amortized`` condensers, Roo Code's truncation fallback). Triggers as ``summarize``;
the tail is always ``keep_recent_turns`` turns, and ``Compact(summarize=False)`` drops the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.knobs import Knobs
from workbench.policies.base import Action, ReplayState, policy
from workbench.policies.rules import WatchesTriggers, compact_action, select_tail


@dataclass(frozen=True)
class SlidingWindowPolicy(WatchesTriggers):
    """Drop all but the last ``keep_recent_turns`` turns when a trigger clause fires."""

    knobs: Knobs
    name: str = "sliding_window"
    tail_rule = "turns"  # the tail is always keep_recent_turns turns

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        tail = select_tail(state, self.knobs, rule="turns")
        return (compact_action(state, self.knobs, tail, mode="none"),)


@policy("sliding_window")
def make_sliding_window(knobs: Knobs) -> SlidingWindowPolicy:
    """sliding_window: a trigger clause fires -> drop all but the last keep_recent_turns turns, no summary."""
    return SlidingWindowPolicy(knobs)
