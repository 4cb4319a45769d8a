"""stagewise (stagewise-io/stagewise @ 18ac8a27b18c, spec/stagewise.md §3–§4).

Trigger: used tokens > min(threshold × window, 100,000), strict, threshold −1 disables.
Boundary: walk back from the newest message with the chars/4 estimate, keeping messages while they
fit min(floor(window × 0.2), 40,000) tokens, stopping early once max(5, minUncompressedMessages)
are kept. Everything before the boundary plus the previous briefing becomes the next briefing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from workbench.history.model import Message
from workbench.knobs import Knobs
from workbench.policies.base import Action, Compact, Policy, ReplayState, Skip, policy
from workbench.policies.limits import RULES_ONLY, STAGEWISE_STOPS, Limits, kept_limit, trigger_limit, watch_clauses
from workbench.stagewise.core import MIN_FLOOR, select_boundary


class _Prefix(Sequence[Message]):
    """``messages[:n]`` without copying: the walk reads a few messages from the end, and copying the
    whole prefix at every compression made long replays quadratic (100k messages: +70 ms a replay)."""

    __slots__ = ("_items", "_n")

    def __init__(self, items: Sequence[Message], n: int) -> None:
        self._items, self._n = items, min(max(n, 0), len(items))

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Message]: ...
    def __getitem__(self, i: int | slice) -> Message | Sequence[Message]:
        if isinstance(i, slice):
            return self._items[: self._n][i]
        j = i + self._n if i < 0 else i
        if not 0 <= j < self._n:
            raise IndexError(i)
        return self._items[j]


@dataclass(frozen=True)
class StagewisePolicy(Policy):
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
        messages = _Prefix(state.history.messages, state.index + 1)
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
        n = state.index + 1
        floor = int(min(result.preferred_floor, n))
        return (
            Compact(
                boundary=result.boundary_index,
                outcome=result.outcome,
                kept_count=result.kept_count,
                kept_tokens=result.kept_tokens,
                stop=STAGEWISE_STOPS.get(result.outcome, result.outcome),
                floor_tokens=int(_newest_tokens(state, n, floor).sum()),
                fit_messages=_fit_count(state, n, result.kept_budget),
            ),
        )

    def limits(self) -> Limits:
        """min(ratio × window, hard cap) fires it; min(floor(window × ratio), kept cap) or the floor stops the walk."""
        k = self.knobs
        floor = int(max(MIN_FLOOR, k.min_kept_messages))
        return Limits(
            trigger=trigger_limit(k, reserve=False),
            strict=True,
            clauses=watch_clauses(k, count=False),
            kept=kept_limit(k, floor=False),
            tail=f"newest messages within the kept budget, stopping once {floor} are kept "
                 f"(max({MIN_FLOOR}, min_kept_messages))",
            floor_messages=floor,
            unused=RULES_ONLY,
        )


def _newest_tokens(state: ReplayState, n: int, count: int) -> np.ndarray:
    """The walk's estimates of the newest ``count`` of messages [0, n), newest first (briefing overlays counted)."""
    lo = max(0, n - count)
    tokens = np.array(state.estimate_tokens[lo:n], dtype=np.int64)
    # Landed boundaries only go forward, so the keys ascend: read from the newest until one is below the span
    # (all of them at every compaction made long replays quadratic).
    for j in reversed(state.briefing_at):
        if j < lo:
            break
        if j < n:
            tokens[j - lo] = state.estimate_of(j)
    return tokens[::-1]


def _fit_count(state: ReplayState, n: int, budget: int) -> int:
    """How many of the newest messages fit the kept budget together, whatever the floor (explains a floor stop)."""
    count = 64
    while True:
        sums = np.cumsum(_newest_tokens(state, n, count))
        fit = int(np.searchsorted(sums, budget, side="right"))
        if fit < len(sums) or count >= n:
            return fit
        count *= 4


@policy("stagewise")
def make_stagewise(knobs: Knobs) -> StagewisePolicy:
    """stagewise: fraction-of-window trigger with a hard cap, budgeted backward walk, chained briefings."""
    return StagewisePolicy(knobs)
