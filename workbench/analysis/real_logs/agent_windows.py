"""The window and counting each newer agent's log implies, by model: OpenCode, Copilot CLI, Gemini CLI and Pi.

Each agent sizes its context from its own table of models, not from the provider's: OpenCode from models.dev (the
snapshot its binary bundles), Copilot CLI from its model catalogue and API (and it multiplies its tokenizer's count
per model), Gemini CLI from ``tokenLimit``, Pi from its model registry. The rows below are those tables' entries for
the models of ``../shared``'s logs and their neighbours, cited by package and version; a model not in them falls back
to litellm's registry or the preset. Pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.counting.prices import get_prices
from workbench.history.session_log import SessionLog

# OpenCode: models.dev limits as opencode-ai 1.3.2's binary bundles them (provider, model) -> (context, input, output);
# input 0 = none given. isOverflow: usable = input - min(20,000, maxOutput) when there is an input limit, else
# context - maxOutput, maxOutput = min(output, 32,000) (src/session/compaction.ts, provider/transform.ts).
OPENCODE_LIMITS: dict[tuple[str, str], tuple[int, int, int]] = {
    ("github-copilot", "claude-sonnet-4.6"): (200_000, 128_000, 32_000),
    ("github-copilot", "claude-sonnet-4.5"): (144_000, 128_000, 32_000),
    ("github-copilot", "claude-opus-4.6"): (144_000, 128_000, 64_000),
    ("github-copilot", "claude-opus-4.5"): (160_000, 128_000, 32_000),
    ("github-copilot", "claude-haiku-4.5"): (144_000, 128_000, 32_000),
    ("github-copilot", "gpt-5.4"): (400_000, 272_000, 128_000),
    ("github-copilot", "gpt-5.4-mini"): (400_000, 272_000, 128_000),
    ("github-copilot", "gpt-5.3-codex"): (400_000, 272_000, 128_000),
    ("github-copilot", "gpt-5.2"): (264_000, 128_000, 64_000),
    ("github-copilot", "gpt-4.1"): (128_000, 64_000, 16_384),
}
OPENCODE_BUFFER = 20_000  # COMPACTION_BUFFER
OPENCODE_OUTPUT_MAX = 32_000  # ProviderTransform.OUTPUT_TOKEN_MAX (OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX overrides)

# Copilot CLI: max_prompt_tokens by model, @github/copilot 1.0.73 runtime.node catalogLookupModelLimits (a model not in
# it takes its limits from the Copilot API at run time; 1.0.40 app.js falls back to 128,000 without them).
COPILOT_PROMPT_LIMITS: dict[str, int] = {
    "claude-sonnet-4.6": 168_000, "claude-sonnet-4.5": 168_000, "claude-opus-4.6": 168_000, "claude-opus-4.5": 168_000,
    "claude-sonnet-4": 128_000, "claude-haiku-4.5": 136_000, "gpt-5.4": 272_000, "gpt-5.4-mini": 272_000,
    "gpt-5.3-codex": 272_000, "gpt-5.2": 272_000, "gpt-5-mini": 128_000, "gpt-5.1": 128_000, "gpt-4.1": 64_000,
    "gemini-2.5-pro": 128_000,
}
# Models the catalogue lacks, sized by what their logs show. claude-fable-5 (../shared/real_sessions_large
# copilot_cli__polecatspeaks-StarCar__4b: the shutdown at line 591 counted 151,750 tokens without compacting, the
# compaction at line 949 started at 160,540, so 0.8 x the limit lies in (151,750, 160,540]: a limit of 189,688 to
# 200,675, i.e. Anthropic's 200,000).
COPILOT_LOGGED_LIMITS: dict[str, int] = {"claude-fable-5": 200_000}
COPILOT_DEFAULT_PROMPT_LIMIT = 128_000
# Copilot's count = o200k_base tokens x this (1.0.73 runtime.node tokensCountString on a 10,001-token text: 12,002 for
# claude-fable-5, opus-4.7/4.8 and sonnet-5, 11,702 for sonnet-4.6 and opus-4.6, 11,502 opus-4.5, 11,002 sonnet-4.5,
# 10,001 for GPT, Gemini, claude-sonnet-4, haiku-4.5; 1.0.40 app.js nMi has the same 4.5/4.6 values).
COPILOT_TOKEN_MULTIPLIERS: dict[str, float] = {
    "claude-fable-5": 1.2, "claude-opus-4.8": 1.2, "claude-opus-4.8-fast": 1.2, "claude-opus-4.7": 1.2,
    "claude-sonnet-5": 1.2, "claude-sonnet-4.6": 1.17, "claude-opus-4.6": 1.17, "claude-opus-4.5": 1.15,
    "claude-sonnet-4.5": 1.1,
}

# Gemini CLI: tokenLimit (@google/gemini-cli-core 0.61.0 core/tokenLimits.js): 1,048,576 for every Gemini model,
# 256,000 for Gemma 4.
GEMINI_TOKEN_LIMIT = 1_048_576
GEMINI_GEMMA_4_LIMIT = 256_000

# Pi: contextWindow by (provider, model), @mariozechner/pi-ai 0.73.1 dist/models.generated.js.
PI_WINDOWS: dict[tuple[str, str], int] = {
    ("openai-codex", "gpt-5.5"): 272_000, ("openai-codex", "gpt-5.4"): 272_000, ("openai-codex", "gpt-5.3-codex"): 272_000,
    ("openai", "gpt-5.5"): 272_000, ("openai", "gpt-5.4"): 272_000, ("openai", "gpt-5.3-codex"): 400_000,
    ("anthropic", "claude-sonnet-4-6"): 1_000_000, ("anthropic", "claude-opus-4-6"): 1_000_000,
    ("anthropic", "claude-sonnet-4-5"): 200_000, ("google", "gemini-3.1-pro-preview"): 1_048_576,
    ("google", "gemini-3-flash-preview"): 1_048_576, ("github-copilot", "gpt-5.5"): 400_000,
}


@dataclass(frozen=True)
class AgentWindow:
    """What a log of one of these agents sets: its window, knob changes (only on the preset's own knobs), and why."""

    window: int | None = None
    changes: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def agent_window(log: SessionLog, model: str | None, *, own_knobs: bool) -> AgentWindow:
    """The window (and, with ``own_knobs``, the reserve, token ratio and hidden prefix) ``log``'s agent used."""
    provider = _provider(log)
    if log.agent == "opencode":
        return _opencode(provider, model, own_knobs=own_knobs)
    if log.agent == "copilot_cli":
        return _copilot(log, model, own_knobs=own_knobs)
    if log.agent == "gemini_cli":
        if model is None:
            return AgentWindow()
        window = GEMINI_GEMMA_4_LIMIT if model.lower().startswith("gemma-4") else GEMINI_TOKEN_LIMIT
        return AgentWindow(window=window, notes=(f"window {window:,} (Gemini CLI tokenLimit for {model})",))
    if log.agent == "pi":
        known = PI_WINDOWS.get((provider or "", model or ""))
        if known is not None:
            return AgentWindow(window=known, notes=(f"window {known:,} (Pi's registry for {provider}/{model})",))
        return _litellm_window(model, "Pi")
    return AgentWindow()


def _provider(log: SessionLog) -> str | None:
    providers = log.extra.get("providers")
    return providers[0] if isinstance(providers, list) and providers and isinstance(providers[0], str) else None


def _opencode(provider: str | None, model: str | None, *, own_knobs: bool) -> AgentWindow:
    limits = OPENCODE_LIMITS.get((provider or "", model or ""))
    if limits is None:
        return _litellm_window(model, "OpenCode")
    context, limit_input, output = limits
    max_output = min(output, OPENCODE_OUTPUT_MAX) or OPENCODE_OUTPUT_MAX
    if limit_input:
        window, reserve = limit_input, min(OPENCODE_BUFFER, max_output)
        how = f"input limit {limit_input:,} - reserve min(20,000, {max_output:,})"
    else:
        window, reserve = context, max_output
        how = f"context {context:,} - max output {max_output:,}"
    notes = [f"window {window:,}, reserve {reserve:,}: {how} ({provider}/{model} in OpenCode's models.dev snapshot)"]
    return AgentWindow(window=window, changes={"trigger_reserve_tokens": reserve} if own_knobs else {},
                       notes=tuple(notes))


def _copilot(log: SessionLog, model: str | None, *, own_knobs: bool) -> AgentWindow:
    name = model or ""
    if name in COPILOT_PROMPT_LIMITS:
        window, why = COPILOT_PROMPT_LIMITS[name], "its catalogue"
    elif name in COPILOT_LOGGED_LIMITS:
        window, why = COPILOT_LOGGED_LIMITS[name], "not in its catalogue; bounded by the logs"
    else:
        window, why = COPILOT_DEFAULT_PROMPT_LIMIT, "not in its catalogue: the fallback"
    notes = [f"window {window:,}: {name or 'the model'}'s max_prompt_tokens ({why})"]
    changes: dict[str, Any] = {}
    if own_knobs:
        ratio = COPILOT_TOKEN_MULTIPLIERS.get(name, 1.0)
        if ratio != 1.0:
            changes["token_ratio"] = ratio
            notes.append(f"token ratio {ratio} (Copilot's multiplier for {name})")
        tools = log.extra.get("tool_definitions_tokens")
        if isinstance(tools, int) and not isinstance(tools, bool) and tools > 0:
            changes["hidden_prefix_tokens"] = tools
            notes.append(f"hidden prefix {tools:,}: the tool definitions the log counts")
    return AgentWindow(window=window, changes=changes, notes=tuple(notes))


def _litellm_window(model: str | None, agent: str) -> AgentWindow:
    """A model none of the agent's tables above holds: litellm's input limit, when it has one."""
    if not model:
        return AgentWindow()
    limit = get_prices(model).max_input_tokens
    if not limit:
        return AgentWindow(notes=(f"{model} is in neither {agent}'s table nor litellm's: the preset's window",))
    return AgentWindow(window=limit, notes=(f"window {limit:,} (litellm's input limit for {model}; {agent}'s own "
                                            "table was not read for it)",))
