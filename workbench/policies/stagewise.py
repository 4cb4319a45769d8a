"""stagewise (stagewise-io/stagewise @ 18ac8a27b18c, spec/stagewise.md §3–§4).

Trigger: used tokens > min(threshold × window, 100,000), strict, threshold −1 disables.
Boundary: walk back from the newest message with the chars/4 estimate, keeping messages while they
fit min(floor(window × 0.2), 40,000) tokens, stopping early once max(5, minUncompressedMessages)
are kept. Everything before the boundary plus the previous briefing becomes the next briefing.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.knobs import Knobs
from workbench.policies.base import Action, Compact, ReplayState, Skip, policy
from workbench.policies.stagewise_core import select_boundary


@dataclass(frozen=True)
class StagewisePolicy:
    """stagewise: fraction-of-window trigger with a hard cap, budgeted backward walk, chained briefings."""

    knobs: Knobs
    name: str = "stagewise"

    def watch_threshold(self, state: ReplayState) -> tuple[float, bool] | None:
        k = self.knobs
        if k.trigger_ratio < 0:
            return None
        return (k.effective_trigger_tokens, True)

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        k = self.knobs
        messages = state.history.messages[: state.index + 1]
        result = select_boundary(
            messages,
            context_window=k.context_window_tokens,
            min_uncompressed_messages=k.min_kept_messages,
            kept_fraction=k.kept_budget_ratio,
            kept_cap=k.kept_budget_cap_tokens,
            token_of=state.estimate_of,
        )
        if result.boundary_index is None:
            return (Skip(reason=result.outcome),)
        return (
            Compact(
                boundary=result.boundary_index,
                outcome=result.outcome,
                kept_count=result.kept_count,
                kept_tokens=result.kept_tokens,
            ),
        )


@policy("stagewise")
def make_stagewise(knobs: Knobs) -> StagewisePolicy:
    """stagewise: fraction-of-window trigger with a hard cap, budgeted backward walk, chained briefings."""
    return StagewisePolicy(knobs)
