"""summarize: the threshold-summarize family most agents share (peers.md §1; seed 003 "fixed threshold").

When any trigger clause fires (ratio of the window with an absolute cap, window minus a reserve, a
message count), fold everything before the verbatim tail into the briefing. The tail comes from
``keep_rule`` and the briefing's shape from ``briefing_mode`` (anchored iterative, regenerative, opaque).
Presets for deepagents, LangChain, OpenCode, Gemini CLI, Codex CLI, Claude Code, Hermes, Pi, Cline,
Roo Code, Aider and OpenHands are this policy with their numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.knobs import Knobs
from workbench.policies.base import Action, ReplayState, policy
from workbench.policies.rules import WatchesTriggers, compact_action, select_tail


@dataclass(frozen=True)
class SummarizePolicy(WatchesTriggers):
    """Fold everything before the verbatim tail when a trigger clause fires."""

    knobs: Knobs
    name: str = "summarize"

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        return (compact_action(state, self.knobs, select_tail(state, self.knobs)),)


@policy("summarize")
def make_summarize(knobs: Knobs) -> SummarizePolicy:
    """summarize: any trigger clause fires -> fold all but the keep_rule tail, briefing per briefing_mode."""
    return SummarizePolicy(knobs)
