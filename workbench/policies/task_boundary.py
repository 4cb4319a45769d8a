"""task_boundary: compact where a finished task meets a new user request (seed 003 "task-boundary").

"Compress at logical completions: clean summaries". Once the context is above ``soft_trigger_ratio``
of the window, the next user turn that starts new work (a user message after the first) folds
everything before it, keeping ``keep_min_messages``; the briefing then describes finished work. The
usual trigger clauses stay as a safety net for a single task that outgrows the window; they fold to
the ``keep_rule`` tail. An agent asking for compaction at a natural cleanup point (Codex #21777) is
the same idea.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.knobs import Knobs
from workbench.policies.base import Action, ReplayState, Skip, Trigger, Watch, policy
from workbench.policies.rules import (
    WatchesTriggers,
    compact_action,
    must_compact,
    select_tail,
    trigger_watches,
)


@dataclass(frozen=True)
class TaskBoundaryPolicy(WatchesTriggers):
    """Above the soft ratio, compact at the next new user turn; the trigger clauses are the safety net."""

    knobs: Knobs
    name: str = "task_boundary"
    soft = "compact at the next new user turn above"

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        k = self.knobs
        out = trigger_watches(state, k)
        users = state.layout.user_idx
        later = users[1:][users[1:] > state.index] if len(users) > 1 else users[:0]
        if len(later):
            arm = k.soft_trigger_ratio * k.context_window_tokens
            out.append(
                Watch(tokens=arm, strict=not k.trigger_at_equal, from_index=int(later[0]) - 1, reason=Trigger.TASK_BOUNDARY)
            )
        return tuple(out)

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        k = self.knobs
        if must_compact(state, k):
            return (compact_action(state, k, select_tail(state, k)),)
        i = state.index
        users = state.layout.user_idx
        at_boundary = (
            i + 1 < len(state.history.messages) and state.layout.roles[i + 1] == 1 and bool(np.any(users[1:] == i + 1))
        )
        if not at_boundary:
            return (Skip(reason="not at a task boundary"),)
        return (compact_action(state, k, select_tail(state, k, rule="none"), reason="task-boundary"),)


@policy("task_boundary")
def make_task_boundary(knobs: Knobs) -> TaskBoundaryPolicy:
    """task_boundary: above the soft ratio, fold the finished task when the next user request arrives."""
    return TaskBoundaryPolicy(knobs)
