"""stagewise's trigger, boundary walk and budget hint as pure functions (stagewise.md sections 3, 4, 7).

Extracted the way the golden harness extracted them from ``base-agent.ts``: same statements, ``this``
turned into parameters, an ``outcome`` label for the exit taken. No I/O; token counts come from the
estimator or from ``token_of`` (the replay's cached counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from workbench.history.model import Message
from workbench.stagewise.estimate import estimate_message_tokens

DEFAULT_COMPACTION_THRESHOLD = 0.65
HISTORY_COMPRESSION_HARD_CAP_TOKENS = 100_000
KEPT_BUDGET_FRACTION = 0.2
KEPT_BUDGET_HARD_CAP_TOKENS = 40_000
DEFAULT_MIN_UNCOMPRESSED_MESSAGES = 10
MIN_FLOOR = 5
COMPRESSION_TARGET_CHARS = 30_000

Outcome = Literal["floor", "budget", "single-message-exceeds", "all-fit", "boundary-lt-1", "empty-id"]
Bucket = Literal["none", "lt60", "60to85", "gte85"]


@dataclass(frozen=True, kw_only=True)
class TriggerResult:
    """The trigger check of ``handlePostStep``; ``fractional`` is unfloored (0.65 x 131072 = 85196.8)."""

    threshold: float
    fractional: float
    effective: float
    fires: bool


def trigger(
    used_tokens: float,
    context_window: float,
    threshold: float | None,
    hard_cap: float = HISTORY_COMPRESSION_HARD_CAP_TOKENS,
) -> TriggerResult:
    """Return whether stagewise compresses: used > min(threshold x window, cap), strictly; -1 disables."""
    t = DEFAULT_COMPACTION_THRESHOLD if threshold is None else threshold
    fractional = t * context_window
    effective = min(fractional, hard_cap)
    return TriggerResult(
        threshold=t, fractional=fractional, effective=effective, fires=t >= 0 and used_tokens > effective
    )


@dataclass(frozen=True, kw_only=True)
class BoundaryResult:
    """Where ``compressHistoryInternal`` cuts, and which exit it took.

    ``raw_boundary_index`` is the walk's value before the n-1 and <1 fixes (None when everything fit);
    ``boundary_index`` is None whenever nothing is compressed. ``kept_count``/``kept_tokens`` describe
    ``history.slice(boundary)`` and are None when nothing is compressed.
    """

    kept_budget: int
    preferred_floor: float
    raw_boundary_index: int | None
    boundary_index: int | None
    boundary_message_id: object
    outcome: Outcome
    kept_count: int | None
    kept_tokens: int | None
    outcome_before_lt1_check: Outcome | None = None


def select_boundary(
    messages: Sequence[Message | None],
    *,
    context_window: float,
    min_uncompressed_messages: float | None,
    kept_fraction: float = KEPT_BUDGET_FRACTION,
    kept_cap: int = KEPT_BUDGET_HARD_CAP_TOKENS,
    token_of: Callable[[int], int] | None = None,
) -> BoundaryResult:
    """Walk back from the newest message and pick the first message kept verbatim (stagewise section 4).

    ``token_of(i)`` returns message i's estimate; by default the stagewise estimator is called.
    A None entry is skipped like a JS falsy entry: not counted, and it skips the ``i === 0`` check.
    """
    n = len(messages)
    kept_budget = min(math.floor(context_window * kept_fraction), kept_cap)
    preferred_floor = max(
        MIN_FLOOR, DEFAULT_MIN_UNCOMPRESSED_MESSAGES if min_uncompressed_messages is None else min_uncompressed_messages
    )

    def nothing(outcome: Outcome, raw: int | None, before: Outcome | None = None) -> BoundaryResult:
        return BoundaryResult(
            kept_budget=kept_budget,
            preferred_floor=preferred_floor,
            raw_boundary_index=raw,
            boundary_index=None,
            boundary_message_id=None,
            outcome=outcome,
            kept_count=None,
            kept_tokens=None,
            outcome_before_lt1_check=before,
        )

    tokens: dict[int, int] = {}
    boundary = n
    acc = 0
    outcome: Outcome = "single-message-exceeds"
    for i in range(n - 1, -1, -1):
        msg = messages[i]
        if not msg:
            continue
        t = token_of(i) if token_of is not None else estimate_message_tokens(msg)
        tokens[i] = t
        if acc + t > kept_budget:
            boundary, outcome = i + 1, "budget"
            break
        acc += t
        if n - i >= preferred_floor:
            boundary, outcome = i, "floor"
            break
        if i == 0:
            return nothing("all-fit", None)
    raw = boundary
    if boundary >= n:  # the last message alone exceeds the budget, or the loop never ran
        boundary, outcome = n - 1, "single-message-exceeds"
    if boundary < 1:
        return nothing("boundary-lt-1", raw, outcome)
    boundary_msg = messages[boundary]
    # stagewise reads history[boundary].id; a null entry there would throw, which we report as empty-id.
    boundary_id = boundary_msg.id if boundary_msg else None
    if not boundary_id:
        return nothing("empty-id", raw)

    def tok(i: int) -> int:
        if i in tokens:
            return tokens[i]
        msg = messages[i]
        if not msg:
            return 0
        return token_of(i) if token_of is not None else estimate_message_tokens(msg)

    return BoundaryResult(
        kept_budget=kept_budget,
        preferred_floor=preferred_floor,
        raw_boundary_index=raw,
        boundary_index=boundary,
        boundary_message_id=boundary_id,
        outcome=outcome,
        kept_count=n - boundary,
        kept_tokens=sum(tok(i) for i in range(boundary, n)),
    )


def js_round(x: float) -> int:
    """Return JavaScript ``Math.round(x)``: halves go up (150 chars -> 0.5% -> 1%), unlike ``round``."""
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def budget_bucket(previous_chars: int, target: int = COMPRESSION_TARGET_CHARS) -> tuple[float, int, Bucket]:
    """Return (ratio, printed percent, bucket) of the budget hint for a previous briefing's length."""
    ratio = previous_chars / target
    percent = js_round(ratio * 100)
    bucket: Bucket
    if previous_chars == 0:
        bucket = "none"
    elif ratio < 0.6:
        bucket = "lt60"
    elif ratio < 0.85:
        bucket = "60to85"
    else:
        bucket = "gte85"
    return ratio, percent, bucket
