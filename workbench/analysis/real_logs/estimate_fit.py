"""Fit the estimate a replay without usage runs on: how a transcript's messages grow the provider's bill.

Between two consecutive calls of an agent log the billed context (input + cache reads + writes) grows by what the
provider counted for the messages in between, the first call's answer included. Least squares over every such interval of an agent's
logs gives the token ratio of the counted text and the weights of what the messages' structure adds
(``counting.structure``: tool calls, user turns, reasoning blocks and their encrypted forms). An interval whose
bill falls with no compaction logged (context edited by the agent or the provider) says nothing about the messages
in it and is left out; so is one a compaction cuts, and, for a model that drops earlier turns' reasoning at a new
user turn (``reasoning_dropped_at_turn``), one with a user turn in it. The hidden prefix is then measured as the knob defines it, the
first call's billed context minus the estimate of the messages before it, with those weights (the median over the
logs that do not start mid-session), and the restore after a compaction as the median of what the first call
after it billed beyond the prefix, the estimate and what ``counting.restore`` works out. Pure: histories in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.counting.counters import trigger_tokens
from workbench.counting.restore import restore_args, restored_tokens
from workbench.counting.structure import replaced_tokens, structure_matrix, unbilled_tokens
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import Knobs

# The estimate's weights, in the order of the fit's columns after the counted text (``structure_matrix``'s).
STRUCTURE_KNOBS = ("tool_call_tokens", "user_turn_tokens", "reasoning_block_tokens", "reasoning_encrypted_ratio")
NO_STRUCTURE = dict.fromkeys(STRUCTURE_KNOBS, 0)


@dataclass(frozen=True)
class GrowthRows:
    """What one log gives the fit: per call interval the features of its messages and the billed growth."""

    x: np.ndarray  # (intervals x 5): counted tokens, tool calls, user turns, reasoning blocks, encrypted chars
    y: np.ndarray  # billed growth of each interval
    first: tuple[int, np.ndarray] | None  # (first call's billed context, features before it); None mid-session
    afters: tuple[tuple[int, np.ndarray, int], ...]  # per compaction: (first call's context after it, features of
    # the messages from the compaction to that call, tokens counting.restore works out)


def counted_knobs(knobs: Knobs) -> Knobs:
    """The knobs that count a log's text for the fit: the trigger counter as is, no ratio, prefix or structure."""
    counter = knobs.trigger_counter if knobs.trigger_counter != "usage" else "o200k_base"
    return knobs.replace(trigger_counter=counter, token_ratio=1.0, hidden_prefix_tokens=0, log_counter="estimate",
                         count_added_since_call=True, **NO_STRUCTURE)


def features(history: History, knobs: Knobs, cache: CountCache) -> np.ndarray:
    """(messages x 5): each message's counted text (a reasoning text its encrypted form replaces, and text the provider
    never received, left out) and its structure."""
    counts = cache.counts_for(history)
    text = (trigger_tokens(counts, knobs) - replaced_tokens(counts, knobs.trigger_counter, knobs.chars_per_token)
            - unbilled_tokens(counts, knobs.trigger_counter, knobs.chars_per_token))
    return np.column_stack([np.maximum(0, text).astype(np.float64), structure_matrix(counts)])


def growth_rows(history: History, cache: CountCache) -> GrowthRows:
    """The call intervals of one log, its first call and the first call after each compaction."""
    log = history.log
    assert log is not None
    knobs = counted_knobs(agent_settings(history, dollars=False).knobs)
    msgs = history.messages
    feats = features(history, knobs, cache)
    calls = [i for i, m in enumerate(msgs) if m.role == "assistant" and m.usage is not None]
    cuts = sorted(c.index for c in log.compactions)
    context = {i: msgs[i].usage.context_tokens for i in calls}  # type: ignore[union-attr]
    turns = feats[:, 2] > 0
    x, y = [], []
    for a, b in zip(calls, calls[1:], strict=False):
        if any(a < c <= b for c in cuts):
            continue
        if knobs.reasoning_dropped_at_turn and turns[a:b].any():
            continue  # the bill lost the earlier turns' reasoning there: what it grew by is not the messages'
        grew = context[b] - context[a]
        if grew < 0:
            continue
        x.append(feats[a:b].sum(axis=0))
        y.append(grew)
    first = None
    if calls and not log.starts_mid_session and (not cuts or calls[0] < cuts[0]):
        first = (context[calls[0]], feats[: calls[0]].sum(axis=0))
    afters = []
    for c in cuts:
        after = next((i for i in calls if i >= c), None)
        if after is None or any(c < d <= after for d in cuts):
            continue
        restored = restored_tokens(msgs[:c], **restore_args(knobs), cache=cache)
        afters.append((context[after], feats[c:after].sum(axis=0), restored))
    return GrowthRows(x=np.asarray(x, dtype=np.float64).reshape(-1, 5), y=np.asarray(y, dtype=np.float64),
                      first=first, afters=tuple(afters))


@dataclass(frozen=True)
class GrowthFit:
    """The estimate's weights, the hidden prefix and restore they imply, and how well they explain the logs."""

    token_ratio: float
    structure: dict[str, float]  # STRUCTURE_KNOBS -> fitted weight
    hidden_prefix_tokens: float
    restore_tokens: float
    intervals: int
    residual_median: float  # |growth - fitted| over the intervals
    residual_p90: float

    def weights(self) -> np.ndarray:
        return np.array([self.token_ratio, *(self.structure[k] for k in STRUCTURE_KNOBS)], dtype=np.float64)


# The per-reasoning-block weight (column 3), beside the weight of the encrypted form's length (column 4), is the
# intercept of a block's tokens against that length (alone, it is a block's mean size, which stays): few logs cannot
# pin it (3 Claude Code logs of other repositories fit -271 tokens a block where 58 fit -64, and the
# growth of the 55 entireio/cli logs is then off by a median 7.4%, 2.2% without it). The fit keeps it only where the
# training logs, each left out in turn, predict their own growth better with it (``_leave_one_log_out``).
OPTIONAL_COLUMNS = ((3, 4),)  # (column, the column that makes it optional)


def _solve(xtx: np.ndarray, xty: np.ndarray, cols: list[int]) -> np.ndarray:
    """Least squares on the columns ``cols`` from the normal equations (X'X, X'y): summed over logs, one log's left
    out by a subtraction (``_leave_one_log_out``), so the fit and its checks are one solve."""
    coef = np.zeros(len(xty))
    if cols:
        coef[cols] = np.linalg.lstsq(xtx[np.ix_(cols, cols)], xty[cols], rcond=None)[0]
    return coef


def _leave_one_log_out(stats: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]], cols: list[int]) -> float:
    """The median over logs of |predicted / billed growth - 1| of each log, by the weights fitted on the others."""
    xtx = sum(s[0] for s in stats)
    xty = sum(s[1] for s in stats)
    errors = [abs(float(total @ _solve(xtx - a, xty - b, cols)) / grew - 1) for a, b, total, grew in stats if grew > 0]
    return float(np.median(errors)) if errors else 0.0


def fit_growth(rows: Sequence[GrowthRows]) -> GrowthFit:
    """Least squares of the billed growth on the features over every interval of ``rows``; the prefix and restore
    measured with the fitted weights. A feature no log has (say, no encrypted reasoning) keeps weight 0, and one
    of ``OPTIONAL_COLUMNS`` is dropped where the logs, each left out in turn, predict their growth better without it
    (a fit on 3 logs, not on 58)."""
    x = np.vstack([r.x for r in rows]) if rows else np.zeros((0, 5))
    y = np.concatenate([r.y for r in rows]) if rows else np.zeros(0)
    if not len(y):
        raise ValueError("no two consecutive model calls with billed usage to fit the estimate on")
    used = [j for j in range(x.shape[1]) if np.any(x[:, j])]
    stats = [(r.x.T @ r.x, r.x.T @ r.y, r.x.sum(axis=0), float(r.y.sum())) for r in rows if len(r.y)]
    if len(stats) > 2:
        for j, beside in OPTIONAL_COLUMNS:
            fewer = [c for c in used if c != j]
            if j in used and beside in used and _leave_one_log_out(stats, fewer) < _leave_one_log_out(stats, used):
                used = fewer
    coef = _solve(sum(s[0] for s in stats), sum(s[1] for s in stats), used)  # the logs' normal equations, summed
    residual = np.abs(y - x @ coef)
    firsts = [ctx - float(feat @ coef) for ctx, feat in (r.first for r in rows if r.first is not None)]
    prefix = float(np.median(firsts)) if firsts else 0.0
    left = [ctx - prefix - float(feat @ coef) - restored for r in rows for ctx, feat, restored in r.afters]
    return GrowthFit(token_ratio=float(coef[0]), structure=dict(zip(STRUCTURE_KNOBS, map(float, coef[1:]), strict=True)),
                     hidden_prefix_tokens=prefix, restore_tokens=float(np.median(left)) if left else 0.0,
                     intervals=len(y), residual_median=float(np.median(residual)),
                     residual_p90=float(np.percentile(residual, 90)))


def own_prefix(history: History, ratio: float, structure: dict[str, float], cache: CountCache) -> int | None:
    """The hidden prefix this log's own first call measures with the estimate's weights (None when the log starts
    mid-session or has no call): what a held-out check substitutes to show how much of its error the prefix makes."""
    first = growth_rows(history, cache).first
    if first is None:
        return None
    weights = np.array([ratio, *(structure.get(k, 0.0) for k in STRUCTURE_KNOBS)], dtype=np.float64)
    return max(0, round(first[0] - float(first[1] @ weights)))
