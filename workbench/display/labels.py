"""Words for what the faces show: knob titles, table columns, budget-hint buckets, stop reasons.

Identifiers (``trigger_ratio``, ``chain_index``, ``lt60``) stay in YAML, frames and the CLI; a person
reads these instead, with the identifier one hover away. No streamlit import, so a notebook can use it.
"""

from __future__ import annotations

from workbench.knobs import KNOB_SPECS
from workbench.policies.limits import STOP_WORDS

KNOB_TITLES: dict[str, str] = {
    "strategy": "Strategy",
    "context_window_tokens": "Context window (tokens)",
    "trigger_ratio": "Trigger at share of window",
    "trigger_hard_cap_tokens": "Trigger hard cap (tokens)",
    "kept_budget_ratio": "Kept budget, share of window",
    "kept_budget_cap_tokens": "Kept budget cap (tokens)",
    "min_kept_messages": "Min kept messages",
    "target_briefing_chars": "Briefing target (chars)",
    "overhead_chars_per_message": "Overhead per message (chars)",
    "chars_per_token": "Chars per token",
    "trigger_counter": "Trigger counts with",
    "boundary_counter": "Boundary walk counts with",
    "log_counter": "On a log with usage, count",
    "check_point": "Check after each",
    "latency_steps": "Landing delay (checks)",
    "system_prompt_tokens": "System prompt (tokens)",
    "keep_existing_briefings": "Keep stored briefings",
    "model": "Agent model",
    "briefer_model": "Briefer model",
    "sim_new_chars_ratio": "Briefing chars per folded char",
    "sim_overshoot_ratio": "Longest briefing, × target",
    "sim_min_chars": "Shortest briefing (chars)",
    "trigger_at_equal": "Fire at equal (≥, not >)",
    "trigger_reserve_tokens": "Reserve below the window (tokens)",
    "trigger_max_messages": "Max messages in context",
    "proactive_compaction": "Compact before the window is full",
    "reactive_compaction": "Compact on overflow",
    "manual_compact_checks": "Manual /compact at checks",
    "keep_rule": "What stays verbatim",
    "keep_recent_messages": "Keep the last messages",
    "keep_recent_turns": "Keep the last turns",
    "keep_recent_share": "Keep the newest share of tokens",
    "keep_user_messages_tokens": "User-message budget (tokens)",
    "kept_budget_floor_tokens": "Kept budget floor (tokens)",
    "keep_starts_at_user": "Tail starts at a user message",
    "keep_min_messages": "Keep at least (messages)",
    "pin_system_messages": "Pin system messages",
    "pin_first_user_message": "Pin the first user message",
    "pin_first_messages": "Pin the first messages",
    "pin_pattern": "Pin messages matching (regex)",
    "briefing_mode": "Briefing style",
    "briefer_input_cap_tokens": "Briefer reads at most (tokens)",
    "soft_trigger_ratio": "Soft threshold, share of window",
    "cooldown_checks": "Cooldown after a compaction (checks)",
    "thrash_window_checks": "Thrash window (checks)",
    "min_savings_ratio": "Min savings, share of context",
    "prune_tool_outputs": "Prune old tool outputs",
    "prune_protect_tokens": "Prune: protect the newest (tokens)",
    "prune_minimum_tokens": "Prune: only when freeing (tokens)",
    "prune_protect_user_turns": "Prune: protect the last user turns",
}

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
}

# Sweep and tune frames (``workbench.explore``) in words.
SWEEP_COLUMNS = {
    "history": "history", "compressions": "compressions", "tokens_per_task": "tokens per task",
    "dollars_per_task": "dollars per task", "overflows": "overflows", "peak_ratio": "peak / window",
    "retention": "fact retention", "facts_checked": "facts checked", "thrash_events": "thrash",
    "max_briefing_chars": "largest briefing (chars)", "briefer": "briefer", "max_compressions": "max compressions",
    "max_peak_ratio": "max peak / window", "sidebar_tokens_per_task": "sidebar: tokens per task",
    "sidebar_retention": "sidebar: fact retention",
}

TRIGGER_TERMS = {"ratio": "share of window", "cap": "hard cap", "reserve": "window − reserve", "window": "window",
                 "soft": "soft threshold", "count": "message count", "manual": "manual", "prune": "pruning"}


def knob_title(name: str) -> str:
    """A knob's title in words (new knobs fall back to their name with spaces)."""
    return KNOB_TITLES.get(name) or name.replace("_", " ").capitalize()


def knob_help(name: str) -> str:
    """The knob's help text, led by its identifier (what YAML and ``--set`` use)."""
    spec = KNOB_SPECS.get(name)
    unit = f" ({spec.unit})" if spec is not None and spec.unit else ""
    return f"`{name}`{unit}: {spec.help}" if spec is not None else f"`{name}`"


def stop_words(stop: str) -> str:
    return STOP_WORDS.get(stop, stop)


def bucket_words(bucket: str) -> str:
    return BUCKETS.get(bucket, bucket)
