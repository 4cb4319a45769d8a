"""msagent (Ascend/msagent @ ecd6474; seed 001; spec/peers.md §2.1): summarize and offload.

Trigger: current input tokens / context window >= ``auto_compress_threshold`` (0.85), i.e.
``trigger_ratio`` with ``trigger_at_equal``. Keep the last ``messages_to_keep`` non-system messages
(``keep_recent_messages``, 6, at least 1); everything earlier becomes one summary message, rolling
(the previous summary is re-read with the newly folded span). A cut that would separate a tool result
from its call moves back to the AI message (deepagents keeps AI/Tool pairs). Manual ``/offload`` is
``manual_compact_checks``. The offloaded originals and the ``_summarization_event`` records are built
from the Run by ``workbench.analysis.offload``; writing the log is the caller's business.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.knobs import Knobs
from workbench.policies.base import Action, ReplayState, Skip, policy
from workbench.policies.rules import WatchesTriggers, compact_action, select_tail


@dataclass(frozen=True)
class MsagentPolicy(WatchesTriggers):
    """Ratio trigger, keep the last N non-system messages, summarize the rest, offload the originals."""

    knobs: Knobs
    name: str = "msagent"
    tail_rule = "messages"  # the last keep_recent_messages non-system messages

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        keep = max(1, self.knobs.keep_recent_messages)  # upstream validates ge=1 and migrates 0 to 6
        tail = select_tail(state, self.knobs, rule="messages", count=keep)
        if tail.start <= state.boundary:
            return (Skip(reason="conversation too short to offload"),)
        return (compact_action(state, self.knobs, tail),)


@policy("msagent")
def make_msagent(knobs: Knobs) -> MsagentPolicy:
    """msagent: ratio trigger (>= 0.85), keep the last 6 non-system messages, summary + offload log."""
    return MsagentPolicy(knobs)
