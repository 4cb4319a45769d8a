"""Words for what the faces show: table columns, budget-hint buckets, stop reasons; knob titles from their specs.

Identifiers (``trigger_ratio``, ``chain_index``, ``lt60``) stay in YAML, frames and the CLI; a person
reads these instead, with the identifier one hover away. No streamlit import, so a notebook can use it.
"""

from __future__ import annotations

from workbench.knobs import KNOB_SPECS
from workbench.policies.limits import STOP_WORDS
from workbench.replay.results import METRIC_SPECS

BUCKETS = {"none": "no previous briefing", "lt60": "under 60% of target", "60to85": "60–85% of target",
           "gte85": "85% of target or more"}

# Compression table columns (``Run.compressions_frame``) in words.
COLUMNS = {
    "chain_index": "compression #", "status": "status", "index_started": "started at message",
    "index_landed": "landed at message", "boundary": "first kept message", "messages_folded": "messages folded",
    "kept": "messages kept", "kept_tokens": "kept tokens", "tokens_before": "context before",
    "tokens_after": "context after", "previous_chars": "previous briefing (chars)", "bucket": "budget hint",
    "briefing_chars": "briefing (chars)", "briefer_model": "briefer model", "briefer_cache_hit": "from cache",
    "briefer_cost_usd": "briefer cost", "outcome": "walk exit", "stop": "boundary stopped because",
    "trigger": "started by", "trigger_binds": "trigger set by", "kept_budget_tokens": "kept budget",
    "freed_tokens": "tokens freed", "ineffective": "ineffective", "thrash": "thrash",
    "briefer_attempts": "attempts (outcome: model)",
}

# Sweep and tune frames (``workbench.explore``) in words: a metric's column by its label in ``METRIC_SPECS``.
_FRAME_METRICS = ("compressions", "tokens_per_task", "dollars_per_task", "overflows", "peak_ratio", "thrash_events",
                  "max_briefing_chars")
SWEEP_COLUMNS = {
    "history": "history", **{name: METRIC_SPECS[name].label for name in _FRAME_METRICS},
    "retention": "fact retention", "facts_checked": "facts checked", "briefer": "briefer",
    "max_compressions": f"max {METRIC_SPECS['compressions'].label}",
    "max_peak_ratio": f"max {METRIC_SPECS['peak_ratio'].label}",
    "sidebar_tokens_per_task": f"sidebar: {METRIC_SPECS['tokens_per_task'].label}",
    "sidebar_retention": "sidebar: fact retention", "config": "config",
}

# The same columns in a per-history table that must fit beside nine others at 1280 px: METRIC_SPECS' short labels.
SWEEP_COLUMNS_SHORT = {
    **SWEEP_COLUMNS, **{name: METRIC_SPECS[name].short for name in _FRAME_METRICS},
    "sidebar_tokens_per_task": f"sidebar: {METRIC_SPECS['tokens_per_task'].short}",
}

TRIGGER_TERMS = {"ratio": "share of window", "cap": "hard cap", "reserve": "window − reserve", "window": "window",
                 "soft": "soft threshold", "count": "message count", "manual": "manual", "prune": "pruning"}


def knob_title(name: str) -> str:
    """A knob's title (its spec's), or the name itself for a column that is no knob."""
    spec = KNOB_SPECS.get(name)
    return spec.title if spec is not None else name


def knob_help(name: str) -> str:
    """The knob's help text, led by its identifier (what YAML and ``--set`` use)."""
    spec = KNOB_SPECS.get(name)
    unit = f" ({spec.unit})" if spec is not None and spec.unit else ""
    return f"`{name}`{unit}: {spec.help}" if spec is not None else f"`{name}`"


def stop_words(stop: str) -> str:
    return STOP_WORDS.get(stop, stop)


def bucket_words(bucket: str) -> str:
    return BUCKETS.get(bucket, bucket)
