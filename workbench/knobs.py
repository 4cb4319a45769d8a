"""Knobs: every tunable of a replay in one validated, frozen value, with YAML load/dump.

Each field carries its range, unit and help text in ``KNOB_SPECS`` so that the app, the CLI and
the docs describe a knob the same way. Out-of-range values and unknown keys are refused by name.
No I/O: YAML goes in and out as text.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

from workbench.history.warnings import cut, shown

YAML_VERSION = 1
# Limits of a knobs file: it is a flat mapping of ~60 scalars, so anything far bigger is a mistake or
# an attack (a 2 KB alias bomb expands to gigabytes; 1M keys take a minute): refused before building.
MAX_YAML_CHARS = 1_000_000
MAX_YAML_NODES = 5_000
MAX_YAML_DEPTH = 20
MAX_INT_DIGITS = 18  # a whole-number knob above 10^18 is refused before any float conversion can overflow
# A user regex (pin_pattern) runs with the `regex` module's timeout per message: a pattern that
# backtracks catastrophically ('^(a|a)*$' on 'a' * 34 + '!') stops with a clear error instead of hanging.
PIN_PATTERN_TIMEOUT_S = 0.25


@dataclass(frozen=True)
class KnobSpec:
    """What a knob means and which values it takes."""

    unit: str
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    group: str = "core"
    allow: tuple[float, ...] = ()  # single values allowed outside [low, high], e.g. -1 = disabled


COUNTERS = ("estimate", "cl100k_base", "o200k_base", "usage")
CHECK_POINTS = ("message", "step", "call")
IMAGE_TOKEN_RULES = ("serialized", "anthropic", "openai", "fixed")
AGENT_ESTIMATES = ("counter", "text")
# Old names still read from YAML (and --set), written under the new one.
KNOB_ALIASES = {"system_prompt_tokens": "hidden_prefix_tokens"}
KEEP_RULES = ("budget", "messages", "turns", "share", "user_messages", "none")
BRIEFING_MODES = ("incremental", "anchored", "regenerative", "opaque", "none")

KNOB_SPECS: dict[str, KnobSpec] = {
    "strategy": KnobSpec("", "Compaction policy (a registered strategy name).", group="core"),
    "context_window_tokens": KnobSpec("tokens", "The model's context window.", 1_000, 10_000_000),
    "trigger_ratio": KnobSpec(
        "× window",
        "Compress when used tokens exceed this fraction of the window (strict >). -1 disables.",
        0.0,
        1.0,
        allow=(-1.0,),
    ),
    "trigger_hard_cap_tokens": KnobSpec(
        "tokens", "Absolute cap on the trigger: min(ratio × window, cap). stagewise: 100,000.", 1, 10_000_000
    ),
    "kept_budget_ratio": KnobSpec("× window", "Recent history kept verbatim, as a fraction of the window.", 0.0, 1.0),
    "kept_budget_cap_tokens": KnobSpec("tokens", "Hard cap on the verbatim budget. stagewise: 40,000.", 0, 10_000_000),
    "min_kept_messages": KnobSpec(
        "messages", "Preferred minimum of verbatim messages (stagewise raises it to 5).", 0, 100_000
    ),
    "target_briefing_chars": KnobSpec("chars", "Soft target length of a briefing. stagewise: 30,000.", 100, 1_000_000),
    "overhead_chars_per_message": KnobSpec(
        "chars", "Estimator overhead added to every message (stagewise: 400 for metadata).", 0, 100_000
    ),
    "chars_per_token": KnobSpec("chars/token", "Estimator divisor: tokens = ceil(chars / this).", 0.5, 20.0),
    "trigger_counter": KnobSpec(
        "", "What measures context for the trigger (the provider's count). usage = the agent log's billed usage "
        "where it has it (each call's input + cache + output), the estimate for what came after.",
        choices=COUNTERS, group="counting",
    ),
    "boundary_counter": KnobSpec(
        "", "What the boundary walk uses (stagewise: its chars/4 estimate).", choices=COUNTERS, group="counting"
    ),
    "check_point": KnobSpec(
        "", "Check after every message, after every agent step (assistant + its tool results; stagewise's "
        "handlePostStep), or before every model call (after a user message or tool results: Claude Code, Codex).",
        choices=CHECK_POINTS, group="replay",
    ),
    "latency_steps": KnobSpec(
        "checks", "A compression lands this many checks after it starts (async agents).", 0, 10_000, group="replay"
    ),
    "hidden_prefix_tokens": KnobSpec(
        "tokens", "Tokens every call carries that the transcript lacks (system prompt, tool schemas, rules files, "
        "skills), always in context. Measured from a log by `workbench calibrate` (first call's billed input minus "
        "the counted messages). Formerly system_prompt_tokens.", 0, 1_000_000, group="counting",
    ),
    "token_ratio": KnobSpec(
        "× counted", "Billed tokens per counted token, for the trigger counter: the provider's tokenizer against the "
        "estimate (billed growth over counted growth in a log; `workbench calibrate` measures it). 1 = as counted.",
        0.1, 10.0, group="counting",
    ),
    "image_token_rule": KnobSpec(
        "", "How an image is counted: serialized = its base64 text (stagewise's estimator); anthropic = width x "
        "height / 750 after scaling to 1,568 px / 1,600 tokens; openai = 85 + 170 per 512-px tile; fixed = "
        "image_default_tokens each.", choices=IMAGE_TOKEN_RULES, group="counting",
    ),
    "count_added_since_call": KnobSpec(
        "", "With the usage counter: add an estimate of what was added since the last model call to its billed total "
        "(Claude Code from 2.1.2, Codex); off = the last call's billed total alone (Claude Code up to 2.1.1).",
        group="counting",
    ),
    "agent_estimate": KnobSpec(
        "", "With the usage counter: how the agent itself estimates what was added since its last call. counter = "
        "the trigger counter's tokens; text = round(characters / 4) of text and tool-result text, tool calls and "
        "reasoning 0, images by image_token_rule (Claude Code's rough count, 2.1.x cli.js).",
        choices=AGENT_ESTIMATES, group="counting",
    ),
    "reasoning_carry_ratio": KnobSpec(
        "× reasoning tokens", "With the usage counter: add this many tokens per reasoning token billed in earlier "
        "turns. Codex re-counts earlier turns' encrypted reasoning the provider no longer bills (codex-rs "
        "history.rs get_non_last_reasoning_items_tokens); 1.26 reproduces its estimate on ../shared/real_sessions. "
        "0 = off.", 0.0, 10.0, group="counting",
    ),
    "tool_output_max_tokens": KnobSpec(
        "tokens", "A tool result counts at most this many tokens: the agent truncates outputs before the model sees "
        "them (Codex: the model's truncation policy x 1.2, gpt-5.5 10,000 x 1.2 = 12,000). 0 = no limit.",
        1, 10_000_000, group="counting", allow=(0,),
    ),
    "compaction_restore_tokens": KnobSpec(
        "tokens", "Tokens the agent puts back into context after each compaction besides the briefing: re-read "
        "files, plans, rules (Claude Code restores up to 5 recent files, 5,000 tokens each, 50,000 in all). "
        "`workbench calibrate` measures it from a log.", 0, 1_000_000, group="counting",
    ),
    "restore_files": KnobSpec(
        "files", "After each compaction the agent re-reads its most recently read files, up to this many (Claude "
        "Code 5, each at most restore_file_tokens, 50,000 in all; 2.1.88 compact.ts). 0 = off.", 0, 100,
        group="counting",
    ),
    "restore_file_tokens": KnobSpec(
        "tokens", "Most tokens one restored file takes (Claude Code POST_COMPACT_MAX_TOKENS_PER_FILE 5,000).",
        0, 1_000_000, group="counting",
    ),
    "image_default_tokens": KnobSpec(
        "tokens", "Tokens of an image whose pixel size is unknown (and of every image under the fixed rule). Codex "
        "estimates a resized image at 7,373 bytes = 1,844 tokens.", 0, 100_000, group="counting",
    ),
    "keep_existing_briefings": KnobSpec(
        "", "Replay a history's stored briefings as they are instead of stripping them.", group="replay"
    ),
    "model": KnobSpec("", "The agent's model: prices (and window, in the app) from litellm's registry.",
                      group="cost"),
    "briefer_model": KnobSpec("", "The model that writes briefings (for cost).", group="cost"),
    "sim_new_chars_ratio": KnobSpec(
        "× chars", "Simulated briefer: briefing chars per char of newly folded transcript.", 0.0, 2.0,
        group="briefer",
    ),
    "sim_overshoot_ratio": KnobSpec(
        "× target", "Simulated briefer: longest briefing as a multiple of the target.", 0.1, 5.0, group="briefer"
    ),
    "sim_min_chars": KnobSpec("chars", "Simulated briefer: shortest briefing it writes.", 0, 100_000,
                              group="briefer"),
    # -- policies from real systems (docs/strategies.md, spec/peers.md); stagewise reads none of these --
    "trigger_at_equal": KnobSpec(
        "", "Fire at used >= trigger instead of strictly above it (msagent, OpenCode, Codex, Gemini CLI, Hermes and "
        "Claude Code compare with >=; stagewise and Pi with >). Not used by stagewise.", group="trigger",
    ),
    "trigger_reserve_tokens": KnobSpec(
        "tokens", "Also fire when used tokens reach window minus this reserve (OpenCode 20,000; Pi 16,384; Claude "
        "Code 20,000 + 13,000). 0 = off. Not used by stagewise.", 1, 10_000_000, group="trigger", allow=(0,),
    ),
    "trigger_max_messages": KnobSpec(
        "messages", "Also fire when the context holds more than this many messages, pinned and briefing included "
        "(OpenHands max_size 120 events). 0 = off. Not used by stagewise.", 1, 10_000_000, group="trigger",
        allow=(0,),
    ),
    "trigger_max_turns": KnobSpec(
        "turns", "Also fire when the verbatim span holds more than this many turns (this many with "
        "trigger_at_equal); a turn is a user message with its reply or one agent step (SWE-agent "
        "summarize_every_n_turns: n + keep_last_m_turns). 0 = off. Not used by stagewise.", 1, 10_000_000,
        group="trigger", allow=(0,),
    ),
    "proactive_compaction": KnobSpec(
        "", "Compact when a trigger fires before the window is full. Off leaves only reactive and manual compaction "
        "(OpenCode compaction.auto=false, Claude Code DISABLE_AUTO_COMPACT).", group="trigger",
    ),
    "reactive_compaction": KnobSpec(
        "", "Compact when a check overflows the window (the provider's context-length error), a switch separate "
        "from proactive compaction (deepagents, OpenCode, Pi, Claude Code, OpenHands). Lands at once and ignores "
        "the cooldown.", group="trigger",
    ),
    "manual_compact_checks": KnobSpec(
        "checks", "Checks (timeline steps) at which the user runs /compact or /offload, comma-separated, e.g. "
        "'40, 120'. Manual compactions land at once and ignore the cooldown.", group="trigger",
    ),
    "keep_rule": KnobSpec(
        "", "How the verbatim tail is chosen (not stagewise): budget = newest messages within the kept budget; "
        "messages = last keep_recent_messages non-system messages (msagent, LangChain); turns = last "
        "keep_recent_turns turns; share = newest keep_recent_share of the verbatim tokens (Gemini CLI); "
        "user_messages = no tail, but user messages newest-first within keep_user_messages_tokens stay (Codex); "
        "none = nothing verbatim (Claude Code, Roo Code).", choices=KEEP_RULES, group="keep",
    ),
    "keep_recent_messages": KnobSpec(
        "messages", "keep_rule=messages: how many of the newest non-system messages stay verbatim (msagent "
        "messages_to_keep 6, LangChain keep 20).", 0, 100_000, group="keep",
    ),
    "keep_recent_turns": KnobSpec(
        "turns", "keep_rule=turns and the sliding_window policy: turns kept verbatim. A turn is a user message with "
        "its reply, or one agent step (assistant message and its tool results).", 0, 100_000, group="keep",
    ),
    "keep_recent_share": KnobSpec(
        "× verbatim tokens", "keep_rule=share: the newest fraction of the verbatim span kept (Gemini CLI keeps the "
        "newest 30%).", 0.0, 1.0, group="keep",
    ),
    "keep_user_messages_tokens": KnobSpec(
        "tokens", "keep_rule=user_messages: user messages kept newest-first within this budget (Codex "
        "COMPACT_USER_MESSAGE_MAX_TOKENS 20,000).", 0, 10_000_000, group="keep",
    ),
    "kept_budget_floor_tokens": KnobSpec(
        "tokens", "keep_rule=budget: the kept budget is at least this (Hermes 10,000; OpenCode 2,000). Not used by "
        "stagewise.", 0, 10_000_000, group="keep",
    ),
    "keep_starts_at_user": KnobSpec(
        "", "The verbatim tail starts at a user message: the cut moves back to the nearest one (Aider keeps the "
        "head ending after an assistant message). Not used by stagewise.", group="keep",
    ),
    "keep_min_messages": KnobSpec(
        "messages", "Whatever the rule, at least this many newest messages stay verbatim (Hermes protect_last_n "
        "20). Not used by stagewise (see min_kept_messages).", 0, 100_000, group="keep",
    ),
    "pin_system_messages": KnobSpec(
        "", "System messages inside the history are never folded and stay counted in context (msagent keeps "
        "system messages; Codex keeps the initial context).", group="pinned",
    ),
    "pin_first_user_message": KnobSpec(
        "", "The first user message (the task) is never folded (Roo Code re-sends the original task; OpenHands "
        "conversation_window keeps it).", group="pinned",
    ),
    "pin_first_messages": KnobSpec(
        "messages", "The first N messages are never folded (OpenHands keep_first 4; Hermes protect_first_n 3).",
        0, 100_000, group="pinned",
    ),
    "pin_pattern": KnobSpec(
        "regex", "Messages whose text matches this regular expression are never folded: rules files such as "
        "AGENTS.md or CLAUDE.md (peers.md section 3, items 6, 11, 15). Empty = off.", group="pinned",
    ),
    "briefing_mode": KnobSpec(
        "", "How briefings are written (not stagewise): incremental = previous briefing + new span; anchored = "
        "the same into fixed sections (OpenCode, Pi, Hermes, Gemini CLI); regenerative = re-read the raw history "
        "each time (Claude Code); opaque = high-ratio unreadable (Codex remote compaction); none = drop without "
        "a briefing (sliding window).", choices=BRIEFING_MODES, group="briefing",
    ),
    "briefer_input_cap_tokens": KnobSpec(
        "tokens", "Only the newest this-many tokens of the span go to the briefer (LangChain "
        "trim_tokens_to_summarize 4,000). 0 = no cap.", 1, 10_000_000, group="briefing", allow=(0,),
    ),
    "soft_trigger_ratio": KnobSpec(
        "× window", "staged: past this, stub old tool outputs outside the kept tail (no LLM call); importance: "
        "elide down to this; task_boundary: compact at the next new user turn once above this.", 0.0, 1.0,
        group="staged",
    ),
    "cooldown_checks": KnobSpec(
        "checks", "After a compaction lands or fails, no proactive compaction for this many checks (hysteresis; "
        "Kilo Code #10888, Hermes failure cooldown). 0 = off.", 0, 1_000_000, group="guards",
    ),
    "thrash_window_checks": KnobSpec(
        "checks", "Flag thrash when a compaction lands within this many checks of the previous one (Codex "
        "#13279 death spiral). 0 = off. Report only.", 0, 1_000_000, group="guards",
    ),
    "min_savings_ratio": KnobSpec(
        "× context", "Flag a compaction as ineffective when it frees less than this share of the context "
        "(Gemini CLI #15225: 734K -> 707K). Report only.", 0.0, 1.0, group="guards",
    ),
    "mask_last_n_observations": KnobSpec(
        "observations", "observation_masking: every tool output but the newest N in context is replaced by a "
        "placeholder at each check (SWE-agent last_n_observations n: 5; The Complexity Trap: 10).", 1, 100_000,
        group="masking",
    ),
    "prune_tool_outputs": KnobSpec(
        "", "Tool-output pruning pre-pass, any policy: stub old tool outputs beyond the newest "
        "prune_protect_tokens of tool output when more than prune_minimum_tokens can be freed (OpenCode prune).",
        group="prune",
    ),
    "prune_protect_tokens": KnobSpec(
        "tokens", "Pruning: the newest tool-output tokens that are never stubbed (OpenCode PRUNE_PROTECT 40,000; "
        "Gemini CLI 50,000).", 0, 10_000_000, group="prune",
    ),
    "prune_minimum_tokens": KnobSpec(
        "tokens", "Pruning: stub only when more than this many tokens would be freed (OpenCode PRUNE_MINIMUM "
        "20,000; Gemini CLI 30,000).", 0, 10_000_000, group="prune",
    ),
    "prune_protect_user_turns": KnobSpec(
        "turns", "Pruning: the newest user turns (a user message and everything after it) are never pruned "
        "(OpenCode 2; Gemini CLI protects the latest turn: 1).", 0, 1_000, group="prune",
    ),
}


@dataclass(frozen=True, kw_only=True)
class Knobs:
    """All tunables of one replay. Defaults are stagewise's at commit 18ac8a27b18c."""

    strategy: str = "stagewise"
    context_window_tokens: int = 200_000
    trigger_ratio: float = 0.65
    trigger_hard_cap_tokens: int = 100_000
    kept_budget_ratio: float = 0.2
    kept_budget_cap_tokens: int = 40_000
    min_kept_messages: int = 10
    target_briefing_chars: int = 30_000
    overhead_chars_per_message: int = 400
    chars_per_token: float = 4.0
    trigger_counter: str = "estimate"
    boundary_counter: str = "estimate"
    check_point: str = "step"
    latency_steps: int = 0
    hidden_prefix_tokens: int = 0
    token_ratio: float = 1.0
    image_token_rule: str = "serialized"
    image_default_tokens: int = 1_600
    count_added_since_call: bool = True
    agent_estimate: str = "counter"
    reasoning_carry_ratio: float = 0.0
    tool_output_max_tokens: int = 0
    compaction_restore_tokens: int = 0
    restore_files: int = 0
    restore_file_tokens: int = 5_000
    keep_existing_briefings: bool = False
    model: str = "claude-sonnet-4-5"
    briefer_model: str = "gemini/gemini-2.5-flash-lite"
    sim_new_chars_ratio: float = 0.12
    sim_overshoot_ratio: float = 1.15
    sim_min_chars: int = 600
    # -- policies from real systems; the defaults leave stagewise's replay unchanged --
    trigger_at_equal: bool = False
    trigger_reserve_tokens: int = 0
    trigger_max_messages: int = 0
    trigger_max_turns: int = 0
    proactive_compaction: bool = True
    reactive_compaction: bool = False
    manual_compact_checks: str = ""
    keep_rule: str = "budget"
    keep_recent_messages: int = 6
    keep_recent_turns: int = 2
    keep_recent_share: float = 0.3
    keep_user_messages_tokens: int = 20_000
    kept_budget_floor_tokens: int = 0
    keep_starts_at_user: bool = False
    keep_min_messages: int = 1
    pin_system_messages: bool = False
    pin_first_user_message: bool = False
    pin_first_messages: int = 0
    pin_pattern: str = ""
    briefing_mode: str = "incremental"
    briefer_input_cap_tokens: int = 0
    soft_trigger_ratio: float = 0.6
    cooldown_checks: int = 0
    thrash_window_checks: int = 2
    min_savings_ratio: float = 0.1
    mask_last_n_observations: int = 5
    prune_tool_outputs: bool = False
    prune_protect_tokens: int = 40_000
    prune_minimum_tokens: int = 20_000
    prune_protect_user_turns: int = 2

    def __post_init__(self) -> None:
        # Every replay builds a few (``replace``): the fields' names, types and specs are looked up once.
        for name, type_name, spec in _field_checks():
            _check_value(name, getattr(self, name), type_name, spec)
        parse_check_list(self.manual_compact_checks)
        if self.pin_pattern:
            compile_pin_pattern(self.pin_pattern)

    def replace(self, **changes: Any) -> Knobs:
        """A copy with some knobs changed (validated)."""
        return dataclasses.replace(self, **changes)

    @property
    def effective_trigger_tokens(self) -> float:
        """stagewise's trigger: min(threshold × window, hard cap); may be fractional."""
        return min(self.trigger_ratio * self.context_window_tokens, self.trigger_hard_cap_tokens)

    @property
    def kept_budget_tokens(self) -> int:
        """stagewise's kept budget: min(floor(window × fraction), cap)."""
        return min(math.floor(self.context_window_tokens * self.kept_budget_ratio), self.kept_budget_cap_tokens)

    @property
    def manual_checks(self) -> tuple[int, ...]:
        """``manual_compact_checks`` as sorted check numbers."""
        return parse_check_list(self.manual_compact_checks)

    def warnings(self) -> tuple[str, ...]:
        """Settings that are legal but defeat compression (shown in the app and CLI)."""
        out = []
        budget_tail = self.strategy == "stagewise" or self.keep_rule == "budget"
        if budget_tail and self.trigger_ratio >= 0 and self.kept_budget_tokens >= self.effective_trigger_tokens:
            out.append(
                f"kept budget ({self.kept_budget_tokens:,} tokens) reaches the trigger "
                f"({self.effective_trigger_tokens:,.0f} tokens): compression would re-trigger at once "
                "or never free room"
            )
        if self.strategy != "stagewise" and self.trigger_reserve_tokens >= self.context_window_tokens:
            out.append(
                f"trigger_reserve_tokens ({self.trigger_reserve_tokens:,}) is not below the window "
                f"({self.context_window_tokens:,}): compaction fires at every check"
            )
        other_clauses = self.strategy != "stagewise" and (
            self.trigger_reserve_tokens or self.trigger_max_messages or self.trigger_max_turns
        )
        masking = self.strategy == "observation_masking"  # masks at every check, compaction or not
        if self.trigger_ratio < 0 and not other_clauses and not masking:
            out.append("trigger_ratio is -1: compression is disabled")
        if not self.proactive_compaction and not self.reactive_compaction and not self.manual_compact_checks:
            out.append("proactive and reactive compaction are both off and no manual checks are set: nothing compacts")
        return tuple(out)


# Convenient names for the six knobs of the mission, in the order the app shows them.
MISSION_KNOBS = (
    "trigger_ratio",
    "trigger_hard_cap_tokens",
    "kept_budget_ratio",
    "min_kept_messages",
    "target_briefing_chars",
    "overhead_chars_per_message",
)


_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")  # with none of these (no flags, classes, escapes) a pattern is text
_LITERAL_SEARCH_MAX = 1 << 24  # characters: a plain-text search of 16 M takes milliseconds, not the timeout


class PinPattern:
    """A compiled pin_pattern whose every search is bounded in time (``regex`` module, timeout per call)."""

    def __init__(self, pattern: str) -> None:
        import regex  # type: ignore[import-untyped]  # no stubs shipped

        self.pattern = pattern
        # A pattern of plain characters matches exactly where the text holds it: ``in`` finds it without the
        # regex engine (Claude Code's '# claudeMd' is searched in every message of every replayed window).
        self._literal = pattern if pattern and not any(c in _REGEX_SPECIAL for c in pattern) else None
        try:
            self._rx = regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            raise ValueError(f"pin_pattern must be a regular expression, got {shown(pattern)}: "
                             f"{cut(str(exc), 120)}") from None

    def search(self, text: str, *, where: str = "a message") -> bool:
        """Whether the pattern occurs in ``text``; a search past the timeout raises ValueError naming ``where``."""
        if self._literal is not None and len(text) <= _LITERAL_SEARCH_MAX:  # far below any timeout
            return self._literal in text
        try:
            return self._rx.search(text, timeout=PIN_PATTERN_TIMEOUT_S) is not None
        except TimeoutError:
            raise ValueError(f"pin_pattern {shown(self.pattern)} ran over {PIN_PATTERN_TIMEOUT_S:g}s on {where} "
                             f"({len(text):,} chars): it backtracks catastrophically; simplify it (e.g. no nested "
                             "or overlapping repeats)") from None


def compile_pin_pattern(pattern: str) -> PinPattern:
    return PinPattern(pattern)


@functools.cache
def _field_checks() -> tuple[tuple[str, str, KnobSpec | None], ...]:
    """(name, declared type's name, spec) of every knob, in field order."""
    return tuple((f.name, _type_name(f.type), KNOB_SPECS.get(f.name)) for f in dataclasses.fields(Knobs))


def _type_name(declared: Any) -> str:
    return declared if isinstance(declared, str) else getattr(declared, "__name__", str(declared))


def _check_knob(name: str, value: Any, declared: Any) -> None:
    _check_value(name, value, _type_name(declared), KNOB_SPECS.get(name))


def _check_value(name: str, value: Any, type_name: str, spec: KnobSpec | None) -> None:
    if type_name == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {shown(value)}")
        return
    if type_name == "str":
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {shown(value)}")
        if spec and spec.choices and value not in spec.choices:
            raise ValueError(f"{name} must be one of {', '.join(spec.choices)}, got {shown(value)}")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {shown(value)}")
    if isinstance(value, int) and abs(value) >= 10**MAX_INT_DIGITS:
        raise ValueError(f"{name} must be {_range_text(spec)}, got {shown(value)}")
    if type_name == "int" and isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a whole number, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {shown(value)}")
    if spec is None or spec.low is None or spec.high is None:
        return
    if value in spec.allow:
        return
    if not spec.low <= value <= spec.high:
        raise ValueError(f"{name} must be {_range_text(spec)}, got {shown(value)}")


def _range_text(spec: KnobSpec | None) -> str:
    if spec is None or spec.low is None or spec.high is None:
        return f"under 10^{MAX_INT_DIGITS}"
    extra = "".join(f" or {a:g}" for a in spec.allow)
    return f"in [{spec.low:g}, {spec.high:g}]{extra}"


def parse_check_list(text: str) -> tuple[int, ...]:
    """Parse ``"40, 120"`` (commas or spaces) into sorted, distinct check numbers; refuse anything else by name."""
    out: set[int] = set()
    for token in re.split(r"[,\s]+", text.strip()):
        if not token:
            continue
        if not (token.isascii() and token.isdigit()):
            raise ValueError(f"manual_compact_checks must list whole check numbers like '40, 120', got {shown(text)}")
        if len(token) > 9:
            raise ValueError(f"manual_compact_checks: a check number must be under 10^9, got {shown(token, 20)}")
        out.add(int(token))
    return tuple(sorted(out))


def knob_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Knobs))


def knobs_from_dict(data: dict[str, Any], *, base: Knobs | None = None, source: str = "knobs") -> Knobs:
    """Build Knobs from a mapping, refusing unknown keys by name and coercing ints given as floats."""
    names = {f.name: f for f in dataclasses.fields(Knobs)}
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise ValueError(f"{source}: knob names must be text, got {shown(bad_keys[0])}")
    data = {KNOB_ALIASES.get(k, k): v for k, v in data.items()}
    unknown = sorted(set(data) - set(names))
    if unknown:
        listed = ", ".join(cut(k, 40) for k in unknown[:5]) + (f" (and {len(unknown) - 5:,} more)" if len(unknown) > 5
                                                                else "")
        raise ValueError(f"{source}: unknown knob(s) {listed}; known: {', '.join(names)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        ftype = names[key].type
        tname = ftype if isinstance(ftype, str) else getattr(ftype, "__name__", "")
        if tname == "int" and isinstance(value, float) and value.is_integer():
            value = int(value)
        if (tname == "float" and isinstance(value, int) and not isinstance(value, bool)
                and abs(value) < 10**MAX_INT_DIGITS):
            value = float(value)
        values[key] = value
    try:
        return dataclasses.replace(base or Knobs(), **values)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


def parse_knob_assignment(text: str) -> tuple[str, Any]:
    """Parse ``name=value`` from the command line; the value is read as YAML (numbers, booleans, text)."""
    if "=" not in text:
        raise ValueError(f"--set {text!r}: expected knob=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    try:
        value = safe_yaml(raw, source="--set") if raw.strip() else ""
    except (yaml.YAMLError, ValueError):
        value = raw
    return key, value


def dump_knobs(knobs: Knobs) -> str:
    """YAML text with a version field and keys in dataclass order."""
    body = {"version": YAML_VERSION, **dataclasses.asdict(knobs)}
    return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


class _KnobsLoader(yaml.SafeLoader):
    """SafeLoader that refuses, before building anything, what no knobs file needs: aliases (so an alias
    bomb cannot expand), nesting past MAX_YAML_DEPTH (no RecursionError), more than MAX_YAML_NODES nodes,
    keys that are not text, and duplicate keys (PyYAML lets the last one win silently)."""

    def __init__(self, stream: str, source: str) -> None:
        super().__init__(stream)
        self.source = source
        self.nodes = 0
        self.depth = 0

    def _where(self, mark: Any) -> str:
        return f"{self.source}:{mark.line + 1}" if mark is not None else self.source

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ValueError(f"{self._where(event.start_mark)}: aliases (*{cut(str(event.anchor), 40)}) are not "
                             "allowed in a knobs file")
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise ValueError(f"{self._where(self.peek_event().start_mark)}: more than {MAX_YAML_NODES:,} YAML "
                             "values: a knobs file is a flat mapping of knobs")
        self.depth += 1
        try:
            if self.depth > MAX_YAML_DEPTH:
                raise ValueError(f"{self._where(self.peek_event().start_mark)}: nested more than "
                                 f"{MAX_YAML_DEPTH} levels deep: a knob's value is a number, text or true/false")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            line = key_node.start_mark.line + 1
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise ValueError(f"{self.source}:{line}: knob names must be text, got {shown(key, 40)}")
            if key in seen:
                raise ValueError(f"{self.source}:{line}: duplicate knob {shown(key, 40)} (also on line {seen[key]}): "
                                 "give each knob once")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


    def construct_yaml_int(self, node: Any) -> Any:
        # Python refuses to read an integer of more than 4,300 digits (a ValueError naming no line); no knob
        # holds one, so a long one is refused here, where its line is known.
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_YAML_INT_DIGITS:
            raise ValueError(f"{self._where(node.start_mark)}: a {digits:,}-digit number: no knob takes one")
        return super().construct_yaml_int(node)


_KnobsLoader.add_constructor("tag:yaml.org,2002:int", _KnobsLoader.construct_yaml_int)
MAX_YAML_INT_DIGITS = 4_000  # under Python's 4,300, so the range check names the value


def safe_yaml(text: str, *, source: str = "<yaml>") -> Any:
    """Parse YAML with the knobs file's limits (see ``_KnobsLoader``); limit errors are ValueErrors naming the line."""
    if len(text) > MAX_YAML_CHARS:
        raise ValueError(f"{source}: {len(text):,} characters, over the {MAX_YAML_CHARS:,} of a knobs file")
    loader = _KnobsLoader(text, source)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def decode_knobs_file(data: bytes, *, source: str) -> str:
    """A knobs file's bytes as text; not UTF-8 is an error naming the file and line (UTF-16 is said so)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        raise ValueError(f"{source}:1: not UTF-8 text: looks like UTF-16 or UTF-32; save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{source}:{line}: not UTF-8 text (byte {exc.start})") from None


def key_line(text: str, key: str) -> int | None:
    """The line where ``key`` is set in a knobs YAML text (top-level ``key:``), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.split(":", 1)[0].strip().strip("'\"") == key:
            return number
    return None


def _did_you_mean(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, knob_names(), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def read_knobs_yaml(text: str, *, source: str = "<yaml>") -> dict[str, Any]:
    """The knobs a YAML text names, checked: errors name the source, the line and the key.

    A key given twice, an unknown knob ("did you mean ..."), a wrong version or an invalid value is refused;
    ``version`` is dropped. Knobs the text does not name are simply absent, so callers decide what they keep.
    The text goes through ``safe_yaml``: aliases, deep nesting, huge files and non-text keys are refused
    before anything is built.
    """
    try:
        data = safe_yaml(text, source=source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: invalid YAML: {cut(str(problem), 200)}") from None
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply") from None
    if data is None:
        raise ValueError(f"{source}: empty YAML, expected a mapping of knobs")
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of knobs, got {type(data).__name__}")
    data = dict(data)
    version = data.pop("version", YAML_VERSION)
    if version != YAML_VERSION:
        raise ValueError(f"{source}: unsupported version {shown(version)} (this workbench reads version "
                         f"{YAML_VERSION})")
    known = set(knob_names())
    for key in data:
        if key not in known:
            raise ValueError(f"{_where(text, str(key), source)}: unknown knob {shown(key, 60)}"
                             f"{_did_you_mean(str(key)[:100])}")
    try:
        knobs_from_dict(data, source=source)
    except ValueError as exc:
        message = str(exc)
        detail = message[len(source) + 2 :] if message.startswith(source + ": ") else message
        raise ValueError(f"{_where(text, detail.split(' ', 1)[0], source)}: {detail}") from None
    return data


def _where(text: str, key: str, source: str) -> str:
    """``source:line`` of the line that sets ``key``, or just ``source``."""
    line = key_line(text, key)
    return f"{source}:{line}" if line is not None else source


def load_knobs(text: str, *, source: str = "<yaml>", base: Knobs | None = None) -> Knobs:
    """Parse knobs YAML (``dump_knobs`` writes all of them); errors name the source, the line and the key.

    A partial YAML changes only the knobs it names: the others come from ``base`` (the defaults when None).
    """
    return knobs_from_dict(read_knobs_yaml(text, source=source), base=base, source=source)


def knobs_markdown() -> str:
    """The knobs table of the README (name, group, unit, default, meaning), generated so it cannot drift."""
    default = Knobs()
    rows = ["| knob | group | unit | default | meaning |", "|---|---|---|---|---|"]
    for f in dataclasses.fields(Knobs):
        spec = KNOB_SPECS[f.name]
        value = getattr(default, f.name)
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        meaning = spec.help.replace("|", "\\|")
        if spec.choices:
            meaning += f" One of: {', '.join(spec.choices)}."
        rows.append(f"| `{f.name}` | {spec.group} | {spec.unit} | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"
