"""Per-check cumulative cost of a run: tokens and dollars so far, next to the no-compaction baseline.

``Run.metrics`` gives the totals; the cost chart needs them step by step. This module re-derives the
agent's LLM calls from the timeline (one call per assistant message, whose input is the context just
before it) with the same arithmetic the replay uses, so the last row equals the run's metrics.
Briefer calls are charged at the check where their compression started. Pure: no I/O.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.counting.counters import trigger_tokens
from workbench.counting.prices import Prices, get_prices
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.replay import Run

# A segment of prompt-cache reuse ends where the replay changes the context under the agent.
_SEGMENT_EVENTS = ("compression-landed", "elide")


def cost_frame(
    run: Run,
    history: History,
    *,
    cache: CountCache | None = None,
    prices: Prices | None = None,
    briefer_prices: Prices | None = None,
) -> pl.DataFrame:
    """One row per check: calls, tokens and dollars in that step and cumulated, plus the baseline.

    Columns: step, index, calls, input_tokens, output_tokens, briefer_tokens, tokens, dollars,
    cum_tokens, cum_dollars, cum_dollars_cached, baseline_cum_tokens, baseline_cum_dollars.
    The last row's cum_tokens is ``run.metrics.tokens_per_task`` and cum_dollars its dollars_per_task.
    """
    from workbench.replay.loop import DEFAULT_CACHE

    k = run.knobs
    p = prices or get_prices(k.model)
    bp = briefer_prices or get_prices(k.briefer_model)
    replayed = history if k.keep_existing_briefings else history.without_briefings()
    counts = (cache or DEFAULT_CACHE).counts_for(replayed)
    c = trigger_tokens(counts, k)
    P = np.zeros(len(c) + 1, dtype=np.int64)
    np.cumsum(c, out=P[1:])

    tl = run.timeline
    m = tl.height
    checks = tl["index"].to_numpy().astype(np.int64)
    total = tl["total"].to_numpy().astype(np.int64)
    roles = np.array([msg.role for msg in replayed.messages], dtype=object)
    a = np.nonzero(roles == "assistant")[0].astype(np.int64) if len(roles) else np.zeros(0, dtype=np.int64)
    a = a[a <= (checks[-1] if m else -1)]
    step_of = np.searchsorted(checks, a, side="left")

    # The call for assistant message a sees the context up to a - 1 under the state of its check row:
    # row total minus the messages a..check index (none of them is elided yet when the call is made).
    inputs = total[step_of] - (P[checks[step_of] + 1] - P[a])
    outputs = c[a]

    event_steps = [i for i, ev in enumerate(tl["events"].to_list()) if any(e in ev for e in _SEGMENT_EVENTS)]
    segment = np.searchsorted(checks[event_steps], a, side="left") if event_steps else np.zeros(len(a), dtype=np.int64)
    first = np.ones(len(a), dtype=bool)
    first[1:] = segment[1:] != segment[:-1]
    reads = np.empty_like(inputs)
    reads[first] = np.minimum(k.hidden_prefix_tokens, inputs[first])
    if len(a) > 1:
        reads[1:][~first[1:]] = (inputs[:-1] + c[a[:-1]])[~first[1:]]
    reads = np.minimum(reads, inputs)
    writes = inputs - reads
    read_price = p.cache_read_per_token if p.cache_read_per_token is not None else p.input_per_token
    write_price = p.cache_write_per_token if p.cache_write_per_token is not None else p.input_per_token

    def per_step(values: np.ndarray) -> np.ndarray:
        return np.bincount(step_of, weights=values, minlength=m)[:m] if len(a) else np.zeros(m)

    calls = per_step(np.ones(len(a))).astype(np.int64)
    step_in = per_step(inputs.astype(float)).astype(np.int64)
    step_out = per_step(outputs.astype(float)).astype(np.int64)
    dollars = per_step(inputs * p.input_per_token + outputs * p.output_per_token)
    dollars_cached = per_step(reads * read_price + writes * write_price + outputs * p.output_per_token)

    brief_tokens = np.zeros(m, dtype=np.int64)
    brief_dollars = np.zeros(m)
    for comp in run.compressions:
        if not comp.summarize:
            continue
        rec = comp.record
        brief_tokens[comp.check_started] += rec.input_tokens + rec.output_tokens
        if rec.cost_usd or rec.cache_hit:
            brief_dollars[comp.check_started] += rec.cost_usd
        else:
            brief_dollars[comp.check_started] += rec.input_tokens * bp.input_per_token + rec.output_tokens * bp.output_per_token

    base_in = k.hidden_prefix_tokens + P[a]
    baseline_tokens = per_step((base_in + outputs).astype(float)).astype(np.int64)
    baseline_dollars = per_step(base_in * p.input_per_token + outputs * p.output_per_token)

    step_tokens = step_in + step_out + brief_tokens
    return pl.DataFrame(
        {
            "step": tl["step"],
            "index": tl["index"],
            "calls": calls,
            "input_tokens": step_in,
            "output_tokens": step_out,
            "briefer_tokens": brief_tokens,
            "tokens": step_tokens,
            "dollars": dollars + brief_dollars,
            "cum_tokens": np.cumsum(step_tokens),
            "cum_dollars": np.cumsum(dollars + brief_dollars),
            "cum_dollars_cached": np.cumsum(dollars_cached + brief_dollars),
            "baseline_cum_tokens": np.cumsum(baseline_tokens),
            "baseline_cum_dollars": np.cumsum(baseline_dollars),
        }
    )
