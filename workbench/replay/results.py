"""What a replay returns: the Run with its timeline, compressions, events and metrics.

Plain frozen values, so faces, sweeps and tests read results without knowing how the replay works;
``replay_metrics`` assembles the Metrics from what the loop recorded and the accounting derived.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from workbench.briefing.base import BriefRecord
from workbench.knobs import Knobs
from workbench.policies.limits import Limits

if TYPE_CHECKING:  # accounting imports Compression from here
    from workbench.replay.accounting import AgentCalls, BrieferCalls


@dataclass(frozen=True, kw_only=True)
class Compression:
    """One compression of a run: where it started, where the boundary fell, what the briefing cost."""

    chain_index: int
    status: str  # landed | failed | superseded | in-flight
    check_started: int
    index_started: int
    check_landed: int | None
    index_landed: int | None
    boundary: int  # first kept message
    folded_from: int  # previous boundary: messages [folded_from, boundary) are newly folded
    messages_folded: int
    kept: int  # verbatim messages at the start (index_started + 1 - boundary)
    kept_tokens: int | None  # the walk's estimate of what it kept
    outcome: str
    reason: str
    summarize: bool
    tokens_before: int
    tokens_after: int | None
    previous_chars: int
    bucket: str
    ratio: float
    percent: int
    new_material_chars: int
    compact_history_chars: int
    briefing_chars: int
    briefing_tokens: int
    record: BriefRecord
    trigger: str = "threshold"  # which watch started it: threshold, count, manual, reactive, task-boundary, ...
    freed_tokens: int | None = None  # context at landing without it minus with it
    ineffective: bool = False  # freed less than min_savings_ratio of the context
    thrash: bool = False  # landed within thrash_window_checks of the previous landing
    pinned: tuple[int, ...] = ()  # messages before the boundary kept in context (never folded)
    style: str = "incremental"  # briefing family: incremental, anchored, regenerative, opaque, none
    # What bound (``workbench.policies.limits``): the effective trigger of the watch that started it and
    # which term set it, the kept budget and its binding term, and why the boundary stopped where it did.
    trigger_tokens: float | None = None  # None for a count, manual or prune trigger
    trigger_binds: str = ""  # ratio | cap | reserve | window | soft | count | manual | ...
    kept_budget_tokens: float | None = None  # None when the tail is not a token budget
    budget_binds: str = ""  # ratio | cap | floor
    stop: str = ""  # budget | floor | single-message | boundary | count | min-messages | tool-pair | ...
    floor_tokens: int | None = None  # the walk's tokens of the newest floor messages (budget binds iff above it)
    fit_messages: int | None = None  # newest messages the kept budget holds, floor aside

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        rec = out.pop("record")
        out["briefer_model"] = rec["model"]
        out["briefer_cache_hit"] = rec["cache_hit"]
        out["briefer_cost_usd"] = rec["cost_usd"]
        out["briefer_attempts"] = [a["outcome"] + ":" + a["model"] for a in rec["attempts"]]
        out["briefing_text"] = rec["text"]
        out["leak_previous_tag"] = rec["leak_previous_tag"]
        return out


@dataclass(frozen=True, kw_only=True)
class Event:
    """Something that happened at a check: a compression started/landed/failed, an elision, an overflow."""

    check: int
    index: int
    kind: str
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class Metrics:
    """What a run cost and how close it came to the window."""

    messages: int
    checks: int
    window_tokens: int
    peak_tokens: int
    peak_ratio: float
    baseline_peak_tokens: int
    mean_context_tokens: float
    compressions: int
    failed_compressions: int
    superseded_compressions: int
    skipped_checks: int
    elisions: int
    elided_messages: int
    overflows: int  # checks above the window
    overflow_events: int  # separate runs of checks above the window
    agent_calls: int
    agent_input_tokens: int
    agent_output_tokens: int
    briefer_input_tokens: int
    briefer_output_tokens: int
    briefer_calls: int  # compressions that asked the briefer
    briefer_cache_hits: int  # of those, answered from the disk cache (no provider request)
    briefer_requests: int  # provider attempts made (0 for the simulated and extractive briefers)
    tokens_per_task: int
    baseline_tokens_per_task: int
    dollars_per_task: float
    dollars_per_task_cached: float
    agent_dollars: float
    briefer_dollars: float
    cache_read_tokens: int
    cache_write_tokens: int
    max_briefing_chars: int
    final_briefing_chars: int
    prices_known: bool
    reactive_compressions: int = 0  # landed because a check overflowed the window
    manual_compressions: int = 0  # landed at a manual_compact_checks check
    ineffective_compressions: int = 0  # landed but freed less than min_savings_ratio of the context
    thrash_events: int = 0  # landed within thrash_window_checks of the previous landing
    cooldown_skips: int = 0  # checks where a proactive compaction would have started but the cooldown held it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class Run:
    """The result of one replay: per-check timeline, compressions, events and metrics."""

    history_id: str
    knobs: Knobs
    timeline: pl.DataFrame
    compressions: tuple[Compression, ...]
    events: tuple[Event, ...]
    metrics: Metrics
    briefer: str = "simulated"
    notes: tuple[str, ...] = ()
    limits: Limits | None = None  # the policy's effective trigger and kept budget, and which terms bind
    log_notes: tuple[str, ...] = ()  # those of ``notes`` about an agent log: where it starts, which counter ran
    billed: bool = False  # counted as the provider billed each message (``log_counter: billed`` on a log)
    billed_hidden_prefix: bool = False  # and its hidden prefix is the log's own (``hidden_prefix_tokens`` unused)

    def stops(self) -> dict[str, int]:
        """Why each landed boundary stopped: stop reason → compressions (e.g. {"floor": 19})."""
        out: dict[str, int] = {}
        for c in self.compressions:
            if c.status == "landed" and c.stop:
                out[c.stop] = out.get(c.stop, 0) + 1
        return out

    def compressions_frame(self) -> pl.DataFrame:
        """One row per compression (the briefing text left out)."""
        rows = [{k: v for k, v in c.to_dict().items() if k != "briefing_text"} for c in self.compressions]
        if not rows:
            return pl.DataFrame(schema={"chain_index": pl.Int64, "status": pl.Utf8})
        return pl.DataFrame(rows)

    def to_json_dict(self, *, timeline: bool = True) -> dict[str, Any]:
        import yaml

        from workbench.knobs import dump_knobs

        out: dict[str, Any] = {
            "history": self.history_id,
            "knobs": yaml.safe_load(dump_knobs(self.knobs)),
            "metrics": self.metrics.to_dict(),
            "compressions": [c.to_dict() for c in self.compressions],
            "events": [asdict(e) for e in self.events],
            "notes": list(self.notes),
        }
        if self.limits is not None:
            out["limits"] = asdict(self.limits)
        if timeline:
            out["timeline"] = self.timeline.to_dicts()
        return out


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
