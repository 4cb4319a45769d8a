"""staged: elide stale tool outputs first, summarize into anchored sections only when that is not enough.

Fan et al., "An Empirical Study of Harness Design for Coding Agents", Sep 2026, §2.3 Algorithm 1,
tier T4: past a soft threshold (``soft_trigger_ratio``, about 0.6 of the window) replace the tool
outputs of messages outside the protected recent tail with short stubs, no LLM call; only past the hard
trigger (``trigger_ratio``, about 0.85) fold the oldest turns into an anchored summary with fixed
sections (goal, files touched, done, pending, errors, next step; ``briefing_mode: anchored``) updated
incrementally: only the newly folded span goes to the briefer. The tail (``keep_rule``, the kept budget
by default) stays verbatim in both stages.

The soft watch is armed only from the message index at which some tool output has left the tail, so
the replay does not call ``decide`` at every check while there is nothing to elide.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.knobs import Knobs
from workbench.policies.base import Action, Elide, ReplayState, Skip, Trigger, Watch, policy
from workbench.policies.rules import (
    WatchesTriggers,
    compact_action,
    elision_candidates,
    first_index_where,
    must_compact,
    select_tail,
    trigger_tokens,
    trigger_watches,
)


@dataclass(frozen=True)
class StagedPolicy(WatchesTriggers):
    """Soft threshold: stub old tool outputs outside the tail. Hard threshold: anchored summary."""

    knobs: Knobs
    name: str = "staged"
    soft = "stub old tool outputs above"  # what the soft threshold does (Limits.clauses)

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        k = self.knobs
        out = trigger_watches(state, k)
        soft = k.soft_trigger_ratio * k.context_window_tokens
        hard = trigger_tokens(k)
        if hard is None or soft < hard:
            start = self.next_elision_index(state)
            if start is not None:
                out.append(
                    Watch(tokens=soft, strict=not k.trigger_at_equal, from_index=start, reason=Trigger.ELIDE, cooldown=False)
                )
        return tuple(out)

    def next_elision_index(self, state: ReplayState) -> int | None:
        """The first message index from now on at which a tool output sits outside the protected tail."""

        def has_candidates(i: int) -> bool:
            start = select_tail(state, self.knobs, index=i).start
            return len(elision_candidates(state, state.boundary, start)) > 0

        return first_index_where(max(state.index, 0), len(state.history.messages), has_candidates)

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        k = self.knobs
        tail = select_tail(state, k)
        if must_compact(state, k):
            return (compact_action(state, k, tail),)
        candidates = elision_candidates(state, state.boundary, tail.start)
        if len(candidates) == 0:
            return (Skip(reason="nothing to elide outside the tail"),)
        return (Elide(indices=tuple(int(j) for j in candidates), reason="soft threshold"),)


@policy("staged")
def make_staged(knobs: Knobs) -> StagedPolicy:
    """staged: stub old tool outputs past the soft threshold; anchored summary past the hard one."""
    return StagedPolicy(knobs)
