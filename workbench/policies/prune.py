"""Tool-output pruning, a pre-pass any policy can switch on (``prune_tool_outputs``).

OpenCode ``SessionCompaction.prune`` (sst/opencode @ 3df4a25, spec/peers.md §2.3): walk back from the
newest message, skip the newest ``prune_protect_user_turns`` user turns (2), stop at the previous
summary or at an output already cleared; the newest ``prune_protect_tokens`` (40,000) of tool output
are protected, older outputs are candidates, and they are cleared only when together they free more
than ``prune_minimum_tokens`` (20,000). Gemini CLI masks tool output the same way with 50,000 / 30,000
and the latest turn protected. Cleared outputs become stubs; no LLM call. The wrapper prunes before
its policy's own compaction and also wakes on its own when enough becomes prunable.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from workbench.knobs import Knobs
from workbench.policies.base import (
    Action,
    Elide,
    Forwarding,
    Policy,
    ReplayState,
    Skip,
    Trigger,
    Watch,
)
from workbench.policies.limits import Limits
from workbench.policies.rules import first_index_where


def prune_candidates(state: ReplayState, knobs: Knobs, index: int | None = None) -> np.ndarray | None:
    """Messages whose tool outputs OpenCode's prune would clear at message ``index``; None below the minimum."""
    i = state.index if index is None else index
    users = state.layout.user_idx
    protect_turns = knobs.prune_protect_user_turns
    if protect_turns > 0:
        seen = int(np.searchsorted(users, i, side="right"))
        if seen < protect_turns:
            return None
        end = int(users[seen - protect_turns])
    else:
        end = i + 1
    lo = state.boundary
    if end <= lo:
        return None
    cleared = np.flatnonzero(state.elided_savings[lo:end] > 0)
    if len(cleared):  # the walk back stops at an output already cleared
        lo += int(cleared[-1]) + 1
    freed = np.where(state.pinned_mask(lo, end), 0, state.elidable_tokens()[lo:end])
    newest_first = np.cumsum(freed[::-1])
    over = (newest_first > knobs.prune_protect_tokens) & (freed[::-1] > 0)
    if not over.any() or int(freed[::-1][over].sum()) <= knobs.prune_minimum_tokens:
        return None
    return np.sort(end - 1 - np.flatnonzero(over))


@dataclass(frozen=True)
class Pruned(Forwarding):
    """Any policy with OpenCode-style pruning in front of it."""

    inner: Policy
    knobs: Knobs

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        out = self.inner.watches(state)
        start = first_index_where(
            max(state.index, 0),
            len(state.history.messages),
            lambda i: prune_candidates(state, self.knobs, i) is not None,
        )
        if start is not None:
            out = (*out, Watch(tokens=-math.inf, from_index=start, reason=Trigger.PRUNE, cooldown=False))
        return out

    def limits(self) -> Limits | None:
        """The inner policy's limits with the pruning pre-pass named among the clauses."""
        found = self.inner.limits()
        if found is None:
            return None
        k = self.knobs
        clause = (f"prune tool outputs beyond the newest {k.prune_protect_tokens:,} tokens when more than "
                  f"{k.prune_minimum_tokens:,} can be freed")
        return dataclasses.replace(found, clauses=(clause, *found.clauses))

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        if state.trigger not in (Trigger.MANUAL, Trigger.REACTIVE):
            candidates = prune_candidates(state, self.knobs)
            if candidates is not None:
                return (Elide(indices=tuple(int(j) for j in candidates), reason="prune"),)
        if state.trigger == Trigger.PRUNE:
            return (Skip(reason="nothing to prune"),)
        return self.inner.decide(state)
