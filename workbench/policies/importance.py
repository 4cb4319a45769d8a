"""importance: when a trigger fires, elide the largest, oldest tool outputs first (seed 003 "importance-based").

"Compress low-relevance first": with no LLM to rank relevance, size and age stand in for it, the way
the Hermes request in peers.md §3 item 22 measured that 1.5% of tool results carry 28% of tool-output
volume. Outside the protected tail (``keep_rule``), stub tool outputs largest first (ties: oldest
first) until the context is back under ``soft_trigger_ratio`` of the window. If stubbing everything
eligible is not enough, fold the prefix into a briefing as ``summarize`` would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.knobs import Knobs
from workbench.policies.base import Action, Elide, ReplayState, Skip, policy
from workbench.policies.rules import (
    WatchesTriggers,
    compact_action,
    elision_candidates,
    must_compact,
    select_tail,
)


@dataclass(frozen=True)
class ImportancePolicy(WatchesTriggers):
    """Stub the biggest old tool outputs down to the soft target; summarize only if that cannot reach it."""

    knobs: Knobs
    name: str = "importance"
    soft = "stub the largest old tool outputs down to"
    soft_watch = False  # the soft ratio is the target of the elision, not a watch

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        k = self.knobs
        if not must_compact(state, k):
            return (Skip(reason="below the trigger"),)
        tail = select_tail(state, k)
        candidates = elision_candidates(state, state.boundary, tail.start)
        need = state.context_tokens - k.soft_trigger_ratio * k.context_window_tokens
        if len(candidates):
            freed = state.elidable_tokens()[candidates]
            order = np.lexsort((candidates, -freed))  # largest first, then oldest
            running = np.cumsum(freed[order])
            if running[-1] >= need:
                take = int(np.searchsorted(running, need, side="left")) + 1
                chosen = np.sort(candidates[order[:take]])
                return (Elide(indices=tuple(int(j) for j in chosen), reason="largest oldest first"),)
            elide: tuple[Action, ...] = (Elide(indices=tuple(int(j) for j in candidates), reason="all eligible"),)
        else:
            elide = ()
        return (*elide, compact_action(state, k, tail))


@policy("importance")
def make_importance(knobs: Knobs) -> ImportancePolicy:
    """importance: stub the largest, oldest tool outputs first; summarize only when that is not enough."""
    return ImportancePolicy(knobs)
