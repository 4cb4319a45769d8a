"""What a replay returns: the Run with its timeline, compressions, events and metrics.

Plain frozen values, so faces, sweeps and tests read results without knowing how the replay works; each metric's
words (``METRIC_SPECS``) beside them. ``replay.assemble`` builds them from what the loop recorded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import polars as pl

from workbench.briefing.base import BriefRecord
from workbench.knobs import Knobs
from workbench.policies.limits import Limits


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


class EventKind(StrEnum):
    """What an Event says happened; the values are the strings the timeline's events column and exports show."""

    COMPRESSION_STARTED = "compression-started"
    COMPRESSION_LANDED = "compression-landed"
    COMPRESSION_FAILED = "compression-failed"
    COMPRESSION_SUPERSEDED = "compression-superseded"
    COOLDOWN_SKIP = "cooldown-skip"
    MANUAL = "manual"  # a manual compaction started (it ignores the cooldown)
    REACTIVE = "reactive"  # a reactive compaction started at an overflow
    INEFFECTIVE = "ineffective"
    THRASH = "thrash"
    ELIDE = "elide"
    SKIP = "skip"
    OVERFLOW = "overflow"


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


@dataclass(frozen=True)
class MetricSpec:
    """How a person reads one ``Metrics`` field: its label (tables, axes, the CLI), its short label (the app's
    narrow cards), which way is better (None: neither), and one sentence of help."""

    label: str
    short: str
    lower_is_better: bool | None
    help: str


# The one home of each metric's words: every face derives its labels from here (tests/test_metric_specs.py).
METRIC_SPECS: dict[str, MetricSpec] = {
    "messages": MetricSpec("messages", "messages", None, "messages in the history"),
    "checks": MetricSpec("checks", "checks", None, "points where the agent looked at its context"),
    "window_tokens": MetricSpec("context window (tokens)", "window", None, "the model's context window"),
    "peak_tokens": MetricSpec("peak context (tokens)", "peak context", True, "tokens in context at the fullest check"),
    "peak_ratio": MetricSpec("peak / window", "peak / window", True, "peak context over the context window"),
    "baseline_peak_tokens": MetricSpec("peak context without compaction (tokens)", "peak, no compaction", True,
                                       "the fullest check if the agent never compacted"),
    "mean_context_tokens": MetricSpec("mean context (tokens)", "mean context", True,
                                      "tokens in context, averaged over the checks"),
    "compressions": MetricSpec("compressions", "compressions", True, "compactions that landed"),
    "failed_compressions": MetricSpec("failed compressions", "failed", True,
                                      "failed compactions: the briefer failed and the history stayed uncompressed"),
    "superseded_compressions": MetricSpec("superseded compressions", "superseded", True,
                                          "compactions replaced by a later one before they landed"),
    "skipped_checks": MetricSpec("skipped checks", "skipped", None,
                                 "checks where a compaction in flight kept the policy from looking"),
    "elisions": MetricSpec("elisions", "elisions", None, "times old tool outputs were cleared"),
    "elided_messages": MetricSpec("elided messages", "elided", None, "messages whose tool outputs were cleared"),
    "overflows": MetricSpec("overflows (checks above the window)", "overflows", True, "checks above the window"),
    "overflow_events": MetricSpec("overflow runs", "overflow runs", True, "separate runs of checks above the window"),
    "agent_calls": MetricSpec("agent calls", "agent calls", None, "model calls the agent made"),
    "agent_input_tokens": MetricSpec("agent input (tokens)", "agent in", True, "tokens the agent sent, all calls"),
    "agent_output_tokens": MetricSpec("agent output (tokens)", "agent out", None, "tokens the agent wrote"),
    "briefer_input_tokens": MetricSpec("briefer input (tokens)", "briefer in", True, "tokens the briefer read"),
    "briefer_output_tokens": MetricSpec("briefer output (tokens)", "briefer out", True, "tokens the briefer wrote"),
    "briefer_calls": MetricSpec("briefer calls", "briefer calls", True, "compactions that asked the briefer"),
    "briefer_cache_hits": MetricSpec("briefer cache hits", "cache hits", None,
                                     "briefer calls answered from the disk cache (no provider request)"),
    "briefer_requests": MetricSpec("briefer requests", "requests", None,
                                   "provider attempts made (0 for the simulated and extractive briefers)"),
    "tokens_per_task": MetricSpec("tokens per task", "tokens / task", True, "agent + briefer tokens, in and out"),
    "baseline_tokens_per_task": MetricSpec("tokens per task without compaction", "tokens / task, no compaction",
                                           True, "every call sees the whole history so far"),
    "dollars_per_task": MetricSpec("dollars per task", "$ / task", True, "agent + briefer at list price"),
    "dollars_per_task_cached": MetricSpec("dollars per task with prompt caching", "$ / task, cached", True,
                                          "agent + briefer, the agent's prompt-cache reads and writes priced"),
    "agent_dollars": MetricSpec("agent dollars", "agent $", True, "the agent's calls at list price"),
    "briefer_dollars": MetricSpec("briefer dollars", "briefer $", True, "the briefer's calls"),
    "cache_read_tokens": MetricSpec("cache reads (tokens)", "cache reads", None, "prompt-cache reads of the agent"),
    "cache_write_tokens": MetricSpec("cache writes (tokens)", "cache writes", True, "prompt-cache writes of the agent"),
    "max_briefing_chars": MetricSpec("largest briefing (chars)", "largest briefing", None,
                                     "the longest briefing of the chain: less context, but less carried over"),
    "final_briefing_chars": MetricSpec("last briefing (chars)", "last briefing", None, "the chain's last briefing"),
    "prices_known": MetricSpec("prices known", "prices known", None, "the model is in the price registry"),
    "reactive_compressions": MetricSpec("reactive compactions", "reactive", None,
                                        "landed because a check overflowed the window"),
    "manual_compressions": MetricSpec("manual compactions", "manual", None, "landed at a manual_compact_checks check"),
    "ineffective_compressions": MetricSpec("ineffective compactions", "ineffective", True,
                                           "compactions that freed less than min_savings_ratio of the context"),
    "thrash_events": MetricSpec("thrash (compactions right after another)", "thrash", True,
                                "compactions that landed within thrash_window_checks of the previous one: the context "
                                "refilled at once"),
    "cooldown_skips": MetricSpec("cooldown skips", "held by cooldown", None,
                                 "checks where a proactive compaction would have started but the cooldown held it"),
}


def metric_label(name: str) -> str:
    """A metric's label, or the name itself for a column that is no metric (a sweep's own columns)."""
    spec = METRIC_SPECS.get(name)
    return spec.label if spec is not None else name


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
