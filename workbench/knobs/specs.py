"""What every knob means: its title, unit, range or choices, group and help text, in one table.

The app's sliders, the CLI's help, docs/knobs.md (scripts/knobs_doc.py) and the validation of ``Knobs`` all read
``KNOB_SPECS``, so a knob is described the same way everywhere. The table runs group by group (``KnobGroup``, in
the order of the flow), as the fields of ``Knobs`` do. Each number taken from another system is cited in its help.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from enum import StrEnum


class KnobGroup(StrEnum):
    """The concern a knob belongs to, in the order of the flow: the fields of ``Knobs`` follow this order, and
    ``Knobs.view(group)`` (``knobs.counting``, ``knobs.trigger``, ...) holds one group's knobs."""

    POLICY = "policy"
    MODEL = "model"
    REPLAY = "replay"
    COUNTING = "counting"
    TRIGGER = "trigger"
    KEEP = "keep"
    PINS = "pins"
    BRIEFING = "briefing"
    BRIEFER = "briefer"
    GUARDS = "guards"
    PRUNE = "prune"

    @property
    def heading(self) -> str:
        """The group's heading where the knobs are shown by group (the app's sidebar)."""
        return GROUP_TITLES[self]


G = KnobGroup
GROUP_TITLES: dict[KnobGroup, str] = {
    G.POLICY: "Strategy",
    G.MODEL: "Models, window and prices",
    G.REPLAY: "Replay",
    G.COUNTING: "Token counting",
    G.TRIGGER: "When to compact",
    G.KEEP: "What stays verbatim",
    G.PINS: "Pinned messages",
    G.BRIEFING: "Briefings",
    G.BRIEFER: "Simulated briefer",
    G.GUARDS: "Guards",
    G.PRUNE: "Tool-output pruning and masking",
}


@dataclass(frozen=True)
class KnobSpec:
    """What a knob means and which values it takes: its title (what a person reads: the app's labels, a sweep's axes,
    the A/B table; the knob's name stays its address in YAML, ``--set`` and sweep columns), unit, range, help."""

    title: str
    unit: str
    low: float | None = None
    high: float | None = None
    _: KW_ONLY
    help: str
    choices: tuple[str, ...] | None = None
    group: KnobGroup
    allow: tuple[float, ...] = ()  # single values allowed outside [low, high], e.g. -1 = disabled
    also_in: tuple[str, ...] = ()  # concerns besides its group whose results the knob changes (see ``concerns``)

    @property
    def concerns(self) -> tuple[str, ...]:
        """The concerns this knob is part of: its group, then ``also_in``. ``Knobs.view(concern)`` holds the knobs
        of one concern, and a cache of that concern's results is keyed by it: a knob added to the group joins the
        key by itself."""
        return (self.group, *self.also_in)


COUNTERS = ("estimate", "cl100k_base", "o200k_base", "usage")
LOG_COUNTERS = ("billed", "estimate")
CHECK_POINTS = ("message", "step", "call")
IMAGE_TOKEN_RULES = ("serialized", "anthropic", "openai", "fixed")
AGENT_ESTIMATES = ("counter", "text")
# Old names still read from YAML (and --set), written under the new one.
KNOB_ALIASES = {"system_prompt_tokens": "hidden_prefix_tokens"}
KEEP_RULES = ("budget", "messages", "turns", "share", "user_messages", "none")
BRIEFING_MODES = ("incremental", "anchored", "regenerative", "opaque", "none")

KNOB_SPECS: dict[str, KnobSpec] = {
    # -- policy: strategy --
    "strategy": KnobSpec(
        "Strategy", "", group=G.POLICY,
        help="Compaction policy (a registered strategy name).",
    ),
    # -- model: models, window and prices --
    "context_window_tokens": KnobSpec(
        "Context window (tokens)", "tokens", 1_000, 10_000_000, group=G.MODEL,
        help="The model's context window.",
    ),
    "model": KnobSpec(
        "Agent model", "", group=G.MODEL,
        help="The agent's model: prices (and window, in the app) from litellm's registry.",
    ),
    "briefer_model": KnobSpec(
        "Briefer model", "", group=G.MODEL,
        help="The model that writes briefings (for cost).",
    ),
    # -- replay: replay --
    "check_point": KnobSpec(
        "Check after each", "",
        choices=CHECK_POINTS, group=G.REPLAY, also_in=("counting",),  # the usage counter bills at the checks
        help="Check after every message, after every agent step (assistant + its tool results; stagewise's "
        "handlePostStep), or before every model call (after a user message or tool results: Claude Code, Codex).",
    ),
    "latency_steps": KnobSpec(
        "Landing delay (checks)", "checks", 0, 10_000, group=G.REPLAY,
        help="A compression lands this many checks after it starts (async agents).",
    ),
    "keep_existing_briefings": KnobSpec(
        "Keep stored briefings", "", group=G.REPLAY,
        help="Replay a history's stored briefings as they are instead of stripping them.",
    ),
    # -- counting: token counting --
    "trigger_counter": KnobSpec(
        "Trigger counts with", "", choices=COUNTERS, group=G.COUNTING,
        help="What measures context for the trigger (the provider's count). usage = the agent log's billed usage where "
        "it has it (each call's input + cache + output), the estimate for what came after.",
    ),
    "boundary_counter": KnobSpec(
        "Boundary walk counts with", "", choices=COUNTERS, group=G.COUNTING,
        help="What the boundary walk uses (stagewise: its chars/4 estimate).",
    ),
    "log_counter": KnobSpec(
        "On a log with usage, count", "", choices=LOG_COUNTERS, group=G.COUNTING,
        help="On an agent log with billed usage (Claude Code, Codex): billed = every message counts the tokens the "
        "provider billed for it, for the trigger and the boundary walk (the growth of the billed context between "
        "two model calls, spread over the messages added between them by their trigger_counter share; the first "
        "call gives the hidden prefix; messages no two calls bracket count trigger_counter x the log's own "
        "ratio); estimate = trigger_counter and boundary_counter as on any transcript. No effect on a history "
        "without usage, nor with trigger_counter usage (which follows the log).",
    ),
    "overhead_chars_per_message": KnobSpec(
        "Overhead per message (chars)", "chars", 0, 100_000, group=G.COUNTING,
        help="Estimator overhead added to every message (stagewise: 400 for metadata).",
    ),
    "chars_per_token": KnobSpec(
        "Chars per token", "chars/token", 0.5, 20.0, group=G.COUNTING,
        help="Estimator divisor: tokens = ceil(chars / this).",
    ),
    "hidden_prefix_tokens": KnobSpec(
        "Hidden prefix (tokens)", "tokens", 0, 1_000_000, group=G.COUNTING,
        help="Tokens every call carries that the transcript lacks (system prompt, tool schemas, rules files, skills), "
        "always in context. Measured from a log by `workbench calibrate` (first call's billed input minus the "
        "counted messages). Formerly system_prompt_tokens.",
    ),
    "token_ratio": KnobSpec(
        "Billed tokens per counted token", "× counted", 0.1, 10.0, group=G.COUNTING,
        help="Billed tokens per counted token, for the trigger counter: the provider's tokenizer against the estimate "
        "(billed growth over counted growth in a log; `workbench calibrate` measures it). 1 = as counted.",
    ),
    "tool_call_tokens": KnobSpec(
        "Per tool call (tokens)", "tokens", 0, 100_000, group=G.COUNTING,
        help="Tokens each tool call adds to the trigger counter's estimate beyond its counted text: the wrapping of "
        "the call and its result for the model, and what the agent appends to results (counting/structure.py). "
        "Fitted per agent by `workbench calibrate` (billed growth between calls in its logs). 0 = off.",
    ),
    "user_turn_tokens": KnobSpec(
        "Per user turn (tokens)", "tokens", 0, 100_000, group=G.COUNTING,
        help="Tokens each real user message adds to the estimate beyond its text (what the agent injects with a "
        "turn). Fitted by `workbench calibrate`. 0 = off.",
    ),
    "reasoning_block_tokens": KnobSpec(
        "Per reasoning block (tokens)", "tokens", -10_000, 100_000, group=G.COUNTING,
        help="Tokens each reasoning block adds to the estimate: with reasoning_encrypted_ratio, the intercept of its "
        "size against its encrypted form's length (negative: the envelope); alone, the mean size of a block whose "
        "text the log does not show (Codex's encrypted reasoning). Fitted by `workbench calibrate`. 0 = off.",
    ),
    "reasoning_encrypted_ratio": KnobSpec(
        "Reasoning per encrypted char (tokens)", "tokens / char", 0.0, 10.0, group=G.COUNTING,
        help="A reasoning block with an encrypted form (Anthropic's thinking signature or redacted data, OpenAI's "
        "encrypted_content) counts this many tokens per character of it instead of its text, which is a summary: the "
        "billed reasoning is the full one (Codex estimates its own as 3/4 byte per character, 650 bytes off, / 4: "
        "0.1875; codex-rs history.rs estimate_reasoning_length). Fitted by `workbench calibrate`. 0 = count the text.",
    ),
    "reasoning_dropped_at_turn": KnobSpec(
        "Earlier turns' reasoning dropped", "", group=G.COUNTING,
        help="With the structure's weights: a new user turn drops the reasoning blocks of the turns before it from the "
        "context (Anthropic: Claude Sonnet 4.5, Opus 4.1, Haiku 4.5 and earlier keep only the current turn's "
        "thinking; Opus 4.5+ and Sonnet 4.6+ keep all; platform.claude.com/docs/en/build-with-claude/extended-thinking; "
        "Codex: not billed again, as its rollouts show). Set by the log's model (analysis/real_logs/agent_settings.py).",
    ),
    "microcompact_tokens": KnobSpec(
        "Old tool results cleared from (tokens)", "tokens", 0, 10_000_000, group=G.COUNTING,
        help="With the structure's weights: Claude Code's microcompaction where its log does not record it (up to "
        "2.1.7; from 2.1.8 it logs microcompact_boundary and the log's record is used). Before a call whose measure "
        "(the last call's context and answer) is at least this, the results of its Read, Bash, Grep, Glob, WebSearch, "
        "WebFetch, Edit and Write calls, all but the newest 3, are cleared oldest first while more than 40,000 tokens "
        "(chars / 4) of them remain, when that frees 20,000 or more (cli.js 2.0.76 and 2.1.7). Its warning threshold: "
        "the auto-compact threshold - 20,000, set by the log's version (analysis/real_logs/agent_settings.py). 0 = off.",
    ),
    "image_token_rule": KnobSpec(
        "Images count as", "", choices=IMAGE_TOKEN_RULES, group=G.COUNTING,
        help="How an image is counted: serialized = its base64 text (stagewise's estimator); anthropic = width x "
        "height / 750 after scaling to 1,568 px / 1,600 tokens; openai = 85 + 170 per 512-px tile; fixed = "
        "image_default_tokens each.",
    ),
    "image_default_tokens": KnobSpec(
        "Image of unknown size (tokens)", "tokens", 0, 100_000, group=G.COUNTING,
        help="Tokens of an image whose pixel size is unknown (and of every image under the fixed rule). Codex "
        "estimates a resized image at 7,373 bytes = 1,844 tokens.",
    ),
    "tool_output_max_tokens": KnobSpec(
        "Tool output cap (tokens)", "tokens", 1, 10_000_000, allow=(0,), group=G.COUNTING,
        help="A tool result counts at most this many tokens: the agent truncates outputs before the model sees them "
        "(Codex: the model's truncation policy x 1.2, gpt-5.5 10,000 x 1.2 = 12,000). 0 = no limit.",
    ),
    "count_added_since_call": KnobSpec(
        "Add what came since the last call", "", group=G.COUNTING,
        help="With the usage counter: add an estimate of what was added since the last model call to its billed total "
        "(Claude Code from 2.1.2, Codex); off = the last call's billed total alone (Claude Code up to 2.1.1).",
    ),
    "agent_estimate": KnobSpec(
        "Agent estimates added text with", "", choices=AGENT_ESTIMATES, group=G.COUNTING,
        help="With the usage counter: how the agent itself estimates what was added since its last call. counter = the "
        "trigger counter's tokens; text = round(characters / 4) of text and tool-result text, tool calls and "
        "reasoning 0, images by image_token_rule (Claude Code's rough count, 2.1.x cli.js).",
    ),
    "reasoning_carry_ratio": KnobSpec(
        "Earlier reasoning carried (× tokens)", "× reasoning tokens", 0.0, 10.0, group=G.COUNTING,
        help="With the usage counter: add this many tokens per reasoning token billed in earlier turns (with the "
        "estimate and reasoning_dropped_at_turn: per reasoning token a new turn drops). Codex "
        "re-counts earlier turns' encrypted reasoning the provider no longer bills (codex-rs history.rs "
        "get_non_last_reasoning_items_tokens); 1.26 reproduces its estimate on ../shared/real_sessions. 0 = off.",
    ),
    "compaction_restore_tokens": KnobSpec(
        "Restored after a compaction (tokens)", "tokens", 0, 1_000_000, group=G.COUNTING,
        help="Tokens the agent puts back into context after each compaction besides the briefing and what "
        "restore_files works out from the transcript (Claude Code: files, skills, todo list, plan file). "
        "`workbench calibrate` measures it from a log.",
    ),
    "restore_files": KnobSpec(
        "Files re-read after a compaction", "files", 0, 100, group=G.COUNTING,
        help="After each compaction the agent re-reads this many files it read or changed, newest mtime first, whole; "
        "one over restore_file_tokens becomes a one-line note; 50,000 in all. With it, skills invoked with the "
        "Skill tool, the todo list and the plan file are re-attached (Claude Code 5: 2.1.1-2.1.39 bundles, 2.1.88 "
        "compact.ts; counting/restore.py). 0 = off.",
    ),
    "restore_file_tokens": KnobSpec(
        "Largest file restored (tokens)", "tokens", 0, 1_000_000, group=G.COUNTING,
        help="Largest file restored whole; a larger one is replaced by a reference note (Claude Code "
        "POST_COMPACT_MAX_TOKENS_PER_FILE 5,000).",
    ),
    # -- trigger: when to compact --
    "trigger_ratio": KnobSpec(
        "Trigger at share of window", "× window", 0.0, 1.0, allow=(-1.0,), group=G.TRIGGER,
        help="Compress when used tokens exceed this fraction of the window (strict >). -1 disables.",
    ),
    "trigger_hard_cap_tokens": KnobSpec(
        "Trigger hard cap (tokens)", "tokens", 1, 10_000_000, group=G.TRIGGER,
        help="Absolute cap on the trigger: min(ratio × window, cap). stagewise: 100,000.",
    ),
    "trigger_at_equal": KnobSpec(
        "Fire at equal (≥, not >)", "", group=G.TRIGGER,
        help="Fire at used >= trigger instead of strictly above it (msagent, OpenCode, Codex, Gemini CLI, Hermes and "
        "Claude Code compare with >=; stagewise and Pi with >). Not used by stagewise.",
    ),
    "trigger_reserve_tokens": KnobSpec(
        "Reserve below the window (tokens)", "tokens", 1, 10_000_000, allow=(0,), group=G.TRIGGER,
        help="Also fire when used tokens reach window minus this reserve (OpenCode 20,000; Pi 16,384; Claude Code "
        "20,000 + 13,000). 0 = off. Not used by stagewise.",
    ),
    "trigger_max_messages": KnobSpec(
        "Max messages in context", "messages", 1, 10_000_000, allow=(0,), group=G.TRIGGER,
        help="Also fire when the context holds more than this many messages, pinned and briefing included (OpenHands "
        "max_size 120 events). 0 = off. Not used by stagewise.",
    ),
    "trigger_max_turns": KnobSpec(
        "Max turns in context", "turns", 1, 10_000_000, allow=(0,), group=G.TRIGGER,
        help="Also fire when the verbatim span holds more than this many turns (this many with trigger_at_equal); a "
        "turn is a user message with its reply or one agent step (SWE-agent summarize_every_n_turns: n + "
        "keep_last_m_turns). 0 = off. Not used by stagewise.",
    ),
    "soft_trigger_ratio": KnobSpec(
        "Soft threshold, share of window", "× window", 0.0, 1.0, group=G.TRIGGER,
        help="staged: past this, stub old tool outputs outside the kept tail (no LLM call); importance: elide down to "
        "this; task_boundary: compact at the next new user turn once above this.",
    ),
    "proactive_compaction": KnobSpec(
        "Compact before the window is full", "", group=G.TRIGGER,
        help="Compact when a trigger fires before the window is full. Off leaves only reactive and manual compaction "
        "(OpenCode compaction.auto=false, Claude Code DISABLE_AUTO_COMPACT).",
    ),
    "reactive_compaction": KnobSpec(
        "Compact on overflow", "", group=G.TRIGGER,
        help="Compact when a check overflows the window (the provider's context-length error), a switch separate from "
        "proactive compaction (deepagents, OpenCode, Pi, Claude Code, OpenHands). Lands at once and ignores the "
        "cooldown.",
    ),
    "manual_compact_checks": KnobSpec(
        "Manual /compact at checks", "checks", group=G.TRIGGER,
        help="Checks (timeline steps) at which the user runs /compact or /offload, comma-separated, e.g. '40, 120'. "
        "Manual compactions land at once and ignore the cooldown.",
    ),
    # -- keep: what stays verbatim --
    "keep_rule": KnobSpec(
        "What stays verbatim", "", choices=KEEP_RULES, group=G.KEEP,
        help="How the verbatim tail is chosen (not stagewise): budget = newest messages within the kept budget; "
        "messages = last keep_recent_messages non-system messages (msagent, LangChain); turns = last "
        "keep_recent_turns turns; share = newest keep_recent_share of the verbatim tokens (Gemini CLI); "
        "user_messages = no tail, but user messages newest-first within keep_user_messages_tokens stay (Codex); "
        "none = nothing verbatim (Claude Code, Roo Code).",
    ),
    "kept_budget_ratio": KnobSpec(
        "Kept budget, share of window", "× window", 0.0, 1.0, group=G.KEEP,
        help="Recent history kept verbatim, as a fraction of the window.",
    ),
    "kept_budget_cap_tokens": KnobSpec(
        "Kept budget cap (tokens)", "tokens", 0, 10_000_000, group=G.KEEP,
        help="Hard cap on the verbatim budget. stagewise: 40,000.",
    ),
    "kept_budget_floor_tokens": KnobSpec(
        "Kept budget floor (tokens)", "tokens", 0, 10_000_000, group=G.KEEP,
        help="keep_rule=budget: the kept budget is at least this (Hermes 10,000; OpenCode 2,000). Not used by "
        "stagewise.",
    ),
    "min_kept_messages": KnobSpec(
        "Preferred minimum kept (messages, stagewise)", "messages", 0, 100_000, group=G.KEEP,
        help="Preferred minimum of verbatim messages (stagewise raises it to 5).",
    ),
    "keep_recent_messages": KnobSpec(
        "Keep the last messages", "messages", 0, 100_000, group=G.KEEP,
        help="keep_rule=messages: how many of the newest non-system messages stay verbatim (msagent messages_to_keep "
        "6, LangChain keep 20).",
    ),
    "keep_recent_turns": KnobSpec(
        "Keep the last turns", "turns", 0, 100_000, group=G.KEEP,
        help="keep_rule=turns and the sliding_window policy: turns kept verbatim. A turn is a user message with its "
        "reply, or one agent step (assistant message and its tool results).",
    ),
    "keep_recent_share": KnobSpec(
        "Keep the newest share of tokens", "× verbatim tokens", 0.0, 1.0, group=G.KEEP,
        help="keep_rule=share: the newest fraction of the verbatim span kept (Gemini CLI keeps the newest 30%).",
    ),
    "keep_user_messages_tokens": KnobSpec(
        "User-message budget (tokens)", "tokens", 0, 10_000_000, group=G.KEEP,
        help="keep_rule=user_messages: user messages kept newest-first within this budget (Codex "
        "COMPACT_USER_MESSAGE_MAX_TOKENS 20,000).",
    ),
    "keep_starts_at_user": KnobSpec(
        "Tail starts at a user message", "", group=G.KEEP,
        help="The verbatim tail starts at a user message: the cut moves back to the nearest one (Aider keeps the head "
        "ending after an assistant message). Not used by stagewise.",
    ),
    "keep_min_messages": KnobSpec(
        "Keep at least (messages, any rule)", "messages", 0, 100_000, group=G.KEEP,
        help="Whatever the rule, at least this many newest messages stay verbatim (Hermes protect_last_n 20). Not used "
        "by stagewise (see min_kept_messages).",
    ),
    # -- pins: pinned messages --
    "pin_system_messages": KnobSpec(
        "Pin system messages", "", group=G.PINS,
        help="System messages inside the history are never folded and stay counted in context (msagent keeps system "
        "messages; Codex keeps the initial context).",
    ),
    "pin_first_user_message": KnobSpec(
        "Pin the first user message", "", group=G.PINS,
        help="The first user message (the task) is never folded (Roo Code re-sends the original task; OpenHands "
        "conversation_window keeps it).",
    ),
    "pin_first_messages": KnobSpec(
        "Pin the first messages", "messages", 0, 100_000, group=G.PINS,
        help="The first N messages are never folded (OpenHands keep_first 4; Hermes protect_first_n 3).",
    ),
    "pin_pattern": KnobSpec(
        "Pin messages matching (regex)", "regex", group=G.PINS,
        help="Messages whose text matches this regular expression are never folded: rules files such as AGENTS.md or "
        "CLAUDE.md (peers.md section 3, items 6, 11, 15). Empty = off.",
    ),
    # -- briefing: briefings --
    "target_briefing_chars": KnobSpec(
        "Briefing target (chars)", "chars", 100, 1_000_000, group=G.BRIEFING,
        help="Soft target length of a briefing. stagewise: 30,000.",
    ),
    "briefing_mode": KnobSpec(
        "Briefing style", "", choices=BRIEFING_MODES, group=G.BRIEFING,
        help="How briefings are written (not stagewise): incremental = previous briefing + new span; anchored = the "
        "same into fixed sections (OpenCode, Pi, Hermes, Gemini CLI); regenerative = re-read the raw history each "
        "time (Claude Code); opaque = high-ratio unreadable (Codex remote compaction); none = drop without a "
        "briefing (sliding window).",
    ),
    "briefer_input_cap_tokens": KnobSpec(
        "Briefer reads at most (tokens)", "tokens", 1, 10_000_000, allow=(0,), group=G.BRIEFING,
        help="Only the newest this-many tokens of the span go to the briefer (LangChain trim_tokens_to_summarize "
        "4,000). 0 = no cap.",
    ),
    # -- briefer: simulated briefer --
    "sim_new_chars_ratio": KnobSpec(
        "Briefing chars per folded char", "× chars", 0.0, 2.0, group=G.BRIEFER,
        help="Simulated briefer: briefing chars per char of newly folded transcript.",
    ),
    "sim_overshoot_ratio": KnobSpec(
        "Longest briefing, × target", "× target", 0.1, 5.0, group=G.BRIEFER,
        help="Simulated briefer: longest briefing as a multiple of the target.",
    ),
    "sim_min_chars": KnobSpec(
        "Shortest briefing (chars)", "chars", 0, 100_000, group=G.BRIEFER,
        help="Simulated briefer: shortest briefing it writes.",
    ),
    # -- guards: guards --
    "cooldown_checks": KnobSpec(
        "Cooldown after a compaction (checks)", "checks", 0, 1_000_000, group=G.GUARDS,
        help="After a compaction lands or fails, no proactive compaction for this many checks (hysteresis; Kilo Code "
        "#10888, Hermes failure cooldown). 0 = off.",
    ),
    "thrash_window_checks": KnobSpec(
        "Thrash window (checks)", "checks", 0, 1_000_000, group=G.GUARDS,
        help="Flag thrash when a compaction lands within this many checks of the previous one (Codex #13279 death "
        "spiral). 0 = off. Report only.",
    ),
    "min_savings_ratio": KnobSpec(
        "Min savings, share of context", "× context", 0.0, 1.0, group=G.GUARDS,
        help="Flag a compaction as ineffective when it frees less than this share of the context (Gemini CLI #15225: "
        "734K -> 707K). Report only.",
    ),
    # -- prune: tool-output pruning and masking --
    "prune_tool_outputs": KnobSpec(
        "Prune old tool outputs", "", group=G.PRUNE,
        help="Tool-output pruning pre-pass, any policy: stub old tool outputs beyond the newest prune_protect_tokens "
        "of tool output when more than prune_minimum_tokens can be freed (OpenCode prune).",
    ),
    "prune_protect_tokens": KnobSpec(
        "Prune: protect the newest (tokens)", "tokens", 0, 10_000_000, group=G.PRUNE,
        help="Pruning: the newest tool-output tokens that are never stubbed (OpenCode PRUNE_PROTECT 40,000; Gemini CLI "
        "50,000).",
    ),
    "prune_minimum_tokens": KnobSpec(
        "Prune: only when freeing (tokens)", "tokens", 0, 10_000_000, group=G.PRUNE,
        help="Pruning: stub only when more than this many tokens would be freed (OpenCode PRUNE_MINIMUM 20,000; Gemini "
        "CLI 30,000).",
    ),
    "prune_protect_user_turns": KnobSpec(
        "Prune: protect the last user turns", "turns", 0, 1_000, group=G.PRUNE,
        help="Pruning: the newest user turns (a user message and everything after it) are never pruned (OpenCode 2; "
        "Gemini CLI protects the latest turn: 1).",
    ),
    "mask_last_n_observations": KnobSpec(
        "Tool outputs left unmasked", "observations", 1, 100_000, group=G.PRUNE,
        help="observation_masking: every tool output but the newest N in context is replaced by a placeholder at each "
        "check (SWE-agent last_n_observations n: 5; The Complexity Trap: 10).",
    ),
}


def clamp_knob(name: str, value: float) -> float:
    """``value`` moved into knob ``name``'s range [low, high] (unchanged when it is in range or the knob has none):
    for values measured elsewhere (a log's window, a fit) that must become a knob, with the caller saying so."""
    spec = KNOB_SPECS[name]
    if value in spec.allow:
        return value
    if spec.low is not None and value < spec.low:
        return type(value)(spec.low)
    if spec.high is not None and value > spec.high:
        return type(value)(spec.high)
    return value


# Convenient names for the six knobs of the mission, in the order the app shows them.
MISSION_KNOBS = (
    "trigger_ratio",
    "trigger_hard_cap_tokens",
    "kept_budget_ratio",
    "min_kept_messages",
    "target_briefing_chars",
    "overhead_chars_per_message",
)
