"""From a finished walk to the frozen Run: the timeline frame, the metrics and the notes every face shows.

The loop hands over what it recorded (the timeline rows, the call log, the compressions, the final state);
the accounting (``agent_calls``, ``briefer_calls``, ``baseline_tokens``) is derived here, after the walk,
from that record rather than kept in step inside the loop.
"""

from __future__ import annotations

import numpy as np

from workbench.briefing.base import Briefer
from workbench.counting.billed import billed_counts, log_notes, uses_billed
from workbench.counting.prices import Prices
from workbench.counting.tokens import HistoryCounts
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.policies.limits import Limits
from workbench.replay.accounting import AgentCalls, BrieferCalls, CallLog, agent_calls, baseline_tokens, briefer_calls
from workbench.replay.context import ContextSums, InContext, assistant_indices, message_roles
from workbench.replay.results import Compression, Metrics, Run
from workbench.replay.timeline import TimelineRows


def assemble_run(
    *,
    history: History,
    knobs: Knobs,
    briefer: Briefer,
    counts: HistoryCounts,
    checks: np.ndarray,
    sums: ContextSums,
    state: InContext,
    timeline: TimelineRows,
    calls: CallLog,
    compressions: tuple[Compression, ...],
    prices: Prices,
    briefer_prices: Prices,
    skipped_checks: int,
    cooldown_skips: int,
    limits: Limits | None,
) -> Run:
    """The Run of a walk over ``history`` that has ended (nothing is in flight any more)."""
    kn, sys = knobs, state.system_tokens
    window = kn.context_window_tokens
    total, overflow_starts = timeline.finish(window)
    baseline = sys + sums.prefix_tokens[checks + 1] if len(checks) else np.zeros(0, dtype=np.int64)
    assistant = assistant_indices(counts)
    metrics = replay_metrics(
        messages=len(history.messages),
        window=window,
        system_tokens=sys,
        total=total,
        baseline=baseline,
        overflow_starts=overflow_starts,
        compressions=compressions,
        agent=agent_calls(calls, sums, assistant, sys, prices),
        briefer=briefer_calls(compressions, briefer_prices),
        baseline_tokens_per_task=baseline_tokens(sums, assistant, sys),
        skipped_checks=skipped_checks,
        elisions=sums.elisions,
        elided_messages=len(state.elided),
        final_briefing_chars=state.briefing_chars,
        cooldown_skips=cooldown_skips,
        prices_known=prices.known,
    )
    about_log = log_notes(counts, kn)
    billed = uses_billed(history, kn)
    notes = kn.warnings() + about_log + (
        "Counterfactual replay: assumes the agent would have sent the same messages after each compaction.",
    )
    return Run(
        history_id=history.id,
        knobs=kn,
        timeline=timeline.frame(total, baseline, message_roles(counts), window),
        compressions=compressions,
        events=tuple(timeline.events),
        metrics=metrics,
        briefer=getattr(briefer, "name", type(briefer).__name__),
        notes=notes,
        limits=limits,
        log_notes=about_log,
        billed=billed,
        billed_hidden_prefix=billed and not billed_counts(counts, kn).earlier_context,
    )


def replay_metrics(
    *,
    messages: int,
    window: int,
    system_tokens: int,
    total: np.ndarray,
    baseline: np.ndarray,
    overflow_starts: np.ndarray,
    compressions: tuple[Compression, ...],
    agent: AgentCalls,
    briefer: BrieferCalls,
    baseline_tokens_per_task: int,
    skipped_checks: int,
    elisions: int,
    elided_messages: int,
    final_briefing_chars: int,
    cooldown_skips: int,
    prices_known: bool,
) -> Metrics:
    """The Metrics of a run, from its per-check totals, its compressions and its accounting."""
    checks = len(total)
    landed = [c for c in compressions if c.status == "landed"]
    peak = int(total.max()) if checks else system_tokens
    return Metrics(
        messages=messages,
        checks=checks,
        window_tokens=window,
        peak_tokens=peak,
        peak_ratio=peak / window,
        baseline_peak_tokens=int(baseline.max()) if checks else system_tokens,
        mean_context_tokens=float(total.mean()) if checks else float(system_tokens),
        compressions=len(landed),
        failed_compressions=sum(c.status == "failed" for c in compressions),
        superseded_compressions=sum(c.status == "superseded" for c in compressions),
        skipped_checks=skipped_checks,
        elisions=elisions,
        elided_messages=elided_messages,
        overflows=int((total > window).sum()),
        overflow_events=len(overflow_starts),
        agent_calls=agent.calls,
        agent_input_tokens=agent.input_tokens,
        agent_output_tokens=agent.output_tokens,
        briefer_input_tokens=briefer.input_tokens,
        briefer_output_tokens=briefer.output_tokens,
        briefer_calls=briefer.calls,
        briefer_cache_hits=briefer.cache_hits,
        briefer_requests=briefer.requests,
        tokens_per_task=agent.input_tokens + agent.output_tokens + briefer.input_tokens + briefer.output_tokens,
        baseline_tokens_per_task=baseline_tokens_per_task,
        dollars_per_task=agent.dollars + briefer.dollars,
        dollars_per_task_cached=agent.dollars_cached + briefer.dollars,
        agent_dollars=agent.dollars,
        briefer_dollars=briefer.dollars,
        cache_read_tokens=agent.cache_read_tokens,
        cache_write_tokens=agent.cache_write_tokens,
        max_briefing_chars=max((c.briefing_chars for c in landed if c.summarize), default=0),
        final_briefing_chars=final_briefing_chars,
        prices_known=prices_known,
        reactive_compressions=sum(c.trigger == "reactive" for c in landed),
        manual_compressions=sum(c.trigger == "manual" for c in landed),
        ineffective_compressions=sum(c.ineffective for c in landed),
        thrash_events=sum(c.thrash for c in landed),
        cooldown_skips=cooldown_skips,
    )
