"""observation_masking: keep only the newest N tool outputs, the rest become placeholders (SWE-agent).

SWE-agent's ``LastNObservations`` history processor (SWE-agent/SWE-agent @ 3ea751c,
sweagent/agent/history_processors.py lines 85-178): before every model query, every observation but
the last ``n`` is replaced by "Old environment output: (N lines omitted)"; the reasoning and the
actions stay. Here an observation is a message that carries a tool output (a tool-role message or a
tool part with an output), and the placeholder is the engine's tool-output stub
(``history/elide.py``, 47 chars against SWE-agent's ~40). The task prompt is never masked: SWE-agent
spares the first observation because it is the instance template, which here is a user message and
never a tool output. Masked outputs stay masked; the check after each agent step is where the mask
moves, so the replay decides only when a new observation pushes an old one out of the newest N.

With a trigger clause on (``trigger_ratio``, ``trigger_max_turns``, ...) the same policy also folds
everything before the ``keep_rule`` tail into a briefing, as ``summarize`` does: the masking +
summarization hybrid of Lindenbauer et al., "The Complexity Trap" (arXiv 2508.21433), whose SWE-agent
fork runs ``summarize_every_n_turns`` then ``last_n_observations``. Observations written as plain user
text (SWE-agent 0.x's ACI without tool calls) cannot be told from a person's message and are not masked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.history.elide import has_tool_output
from workbench.knobs import Knobs
from workbench.policies.base import Action, Elide, ReplayState, Skip, Trigger, Watch, policy
from workbench.policies.rules import WatchesTriggers, compact_action, must_compact, select_tail, trigger_watches

_OBSERVATIONS: dict[str, np.ndarray] = {}


def observation_indices(state: ReplayState) -> np.ndarray:
    """Indices of the messages that carry a tool output, in order (cached per history digest)."""
    history = state.history
    found = _OBSERVATIONS.get(history.digest)
    if found is None:
        if len(_OBSERVATIONS) >= 64:
            _OBSERVATIONS.pop(next(iter(_OBSERVATIONS)))
        found = np.flatnonzero(np.fromiter((has_tool_output(m) for m in history.messages), dtype=bool,
                                           count=len(history.messages)))
        found.flags.writeable = False
        _OBSERVATIONS[history.digest] = found
    return found


def _open(state: ReplayState, obs: np.ndarray) -> np.ndarray:
    """Which of these observations could still be masked: not masked yet and not pinned."""
    if len(obs) == 0:
        return np.zeros(0, dtype=bool)
    masked = np.fromiter((int(j) in state.elided for j in obs), dtype=bool, count=len(obs))
    pinned = state.pinned_mask()[obs]
    return ~masked & ~pinned


def mask_candidates(state: ReplayState, keep: int, index: int | None = None) -> np.ndarray:
    """Observations in context at message ``index`` that fall outside the newest ``keep`` and are still open."""
    i = state.index if index is None else index
    obs = observation_indices(state)
    obs = obs[(obs >= state.boundary) & (obs <= i)]
    older = obs[: max(len(obs) - keep, 0)]
    return older[_open(state, older)]


def next_mask_index(state: ReplayState, keep: int) -> int | None:
    """The first message index from the boundary on at which some open observation leaves the newest ``keep``."""
    obs = observation_indices(state)
    obs = obs[obs >= state.boundary]
    open_ = np.flatnonzero(_open(state, obs))
    if len(open_) == 0:
        return None
    j = int(open_[0]) + keep  # the observation that pushes the oldest open one out of the newest ``keep``
    return int(obs[j]) if j < len(obs) else None


@dataclass(frozen=True)
class ObservationMaskingPolicy(WatchesTriggers):
    """Mask all but the newest tool outputs at every check; fold into a briefing only when a trigger fires."""

    knobs: Knobs
    name: str = "observation_masking"
    reads = ("mask_last_n_observations",)  # Limits: the one rules knob only this policy reads

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        out = trigger_watches(state, self.knobs)
        start = next_mask_index(state, self.knobs.mask_last_n_observations)
        if start is not None:  # masking is not a compaction: the cooldown does not hold it
            out.append(Watch(tokens=-math.inf, from_index=start, reason=Trigger.MASK, cooldown=False))
        return tuple(out)

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        k = self.knobs
        candidates = mask_candidates(state, k.mask_last_n_observations)
        mask: tuple[Action, ...] = ()
        if len(candidates):
            mask = (Elide(indices=tuple(int(j) for j in candidates), reason=f"mask all but the last "
                          f"{k.mask_last_n_observations} observations"),)
        if must_compact(state, k):  # the hybrid; the briefer reads the raw folded turns, as SWE-agent's does
            return (*mask, compact_action(state, k, select_tail(state, k)))
        return mask or (Skip(reason="no observation to mask"),)


@policy("observation_masking")
def make_observation_masking(knobs: Knobs) -> ObservationMaskingPolicy:
    """observation_masking: every tool output but the newest N becomes a placeholder; fold when a trigger fires."""
    return ObservationMaskingPolicy(knobs)
