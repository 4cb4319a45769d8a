"""The knobs an agent's own log implies: the preset of the version that wrote it, its window, its model.

A real agent log names its agent version and model, and Codex logs its window; a replay that claims to be "what
the agent did" must start from those, not from stagewise's defaults (the newer agents' windows by model:
``agent_windows``). Pure; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.analysis.real_logs.agent_windows import agent_window
from workbench.counting.prices import get_prices
from workbench.history.model import History
from workbench.history.session_log import parse_version
from workbench.knobs import KNOB_SPECS, Knobs, clamp_knob
from workbench.policies.limits import trigger_limit
from workbench.presets import get_preset, get_preset_info, preset_for

# Codex logs model_context_window = the raw window x effective_context_window_percent (default 95):
# openai/codex protocol openai_models.rs; 121,600 = 128,000 x 0.95 and 258,400 = 272,000 x 0.95 in the rollouts.
CODEX_EFFECTIVE_WINDOW_PERCENT = 95
# Claude Code's window (its window function: 2.0.76 NO, 2.1.45 bG, 2.1.112 ff, 2.1.150 JG, 2.1.200 bE; docs/agents.md):
# 200,000, or 1,000,000 when the model id carries "[1m]" (every bundle read, 2.0.76-2.1.232; CLAUDE_CODE_DISABLE_1M_CONTEXT
# turns it off from 2.1.50) or for a model whose own window is 1M, from the version that knows it (below). The 1M beta
# header of an SDK caller (context-1m-2025-08-07) and server-side flags (2.1.70+ coral_reef_sonnet) are not in a log.
CLAUDE_CODE_WINDOW = 200_000
CLAUDE_CODE_1M_WINDOW = 1_000_000
# Models with a native 1M window, from the version that first sizes them so: opus-4-7 (CHANGELOG.md 2.1.117 "computing
# against a 200K context window instead of Opus 4.7's native 1M"; 2.1.150 bundle G7H), fable-5 (CHANGELOG 2.1.173 "Fable
# 5 includes 1M context by default"), sonnet-5 (CHANGELOG 2.1.197 "native 1M-token context window"), opus-5 (CHANGELOG
# 2.1.219 "1M context").
CLAUDE_CODE_NATIVE_1M = (("opus-4-7", (2, 1, 117)), ("fable-5", (2, 1, 173)), ("sonnet-5", (2, 1, 197)),
                         ("opus-5", (2, 1, 219)))
# When Claude Code compacts only when the API refuses a call for its length (reactive), not at its threshold:
# - 2.1.105-2.1.152: a server flag (tengu_cobalt_raccoon, default off; 2.1.105 bundle `if(Hu())return!1`, from 2.1.120
#   only on a 1M window: 2.1.120 bundle qB). Applied to 1M windows: logs of 1M sessions compact at preTokens near
#   998,000, above the 967,000 threshold, i.e. at the API's limit.
# - from 2.1.153 by default (2.1.153 bundle `if(rDH()&&!qc()&&!GH$($,q))return!1`), except from 2.1.163 (2.1.160 has
#   no exception; 2.1.161-2.1.162 not read) for the "model-default" models on a window under 1M, which keep a 200,000
#   auto-compact window and the proactive threshold (2.1.170 bundle SXf, rm4=200000; 2.1.186, 2.1.200 the same).
CLAUDE_CODE_REACTIVE_1M_FROM = (2, 1, 105)
CLAUDE_CODE_REACTIVE_FROM = (2, 1, 153)
CLAUDE_CODE_MODEL_DEFAULT_FROM = (2, 1, 161)
CLAUDE_CODE_MODEL_DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6")
# Which Claude models keep their earlier turns' thinking in context: "Claude Opus 4.5 and later Opus models keep all
# prior thinking blocks; Claude Opus 4.1 and earlier keep only the last assistant turn's thinking; Sonnet 4.6 and later
# keep all, Sonnet 4.5 and earlier only the last turn; all Haiku models through Haiku 4.5 only the last turn"
# (platform.claude.com/docs/en/build-with-claude/extended-thinking). The logs agree: at a new user turn the bill of a
# claude-sonnet-4-5 session falls by its last turn's thinking (0.17 tokens per signature character, against 0.18 the
# thinking adds; 0.00 for claude-opus-4-5 and 4-6; ../shared/real_sessions_large). (family, first version keeping all)
CLAUDE_THINKING_KEPT_FROM = (("opus", (4, 5)), ("sonnet", (4, 6)), ("haiku", (99,)))
CLAUDE_CODE_OUTPUT_RESERVE = 32_000
CLAUDE_CODE_OUTPUT_RESERVE_CAP = 20_000
CLAUDE_CODE_BUFFER = 13_000
# Its warning threshold sits this far below the auto-compact threshold (cli.js 2.1.7 ``c97``, 2.1.17 ``GH2``); its
# microcompaction clears old tool results from there (``microcompact_tokens``, counting/structure.py), and its log
# records each from 2.1.8 (``microcompact_boundary``: in 2.1.8's cli.js, not in 2.1.7's nor 2.0.76's).
CLAUDE_CODE_WARNING_MARGIN = 20_000
CLAUDE_CODE_MICROCOMPACT_LOGGED_FROM = (2, 1, 8)
# Claude Code's own max output per model, not litellm's: the first of these that the lower-cased model name contains,
# else 32,000. The same table in @anthropic-ai/claude-code 2.0.76 and 2.1.1 (cli.js ``xz0``), 2.1.25 (``qzA``) and
# 2.1.39; its callers take min(CLAUDE_CODE_MAX_OUTPUT_TOKENS, default 32,000, this).
CLAUDE_CODE_MODEL_OUTPUT = (("3-5", 8_192), ("claude-3-opus", 4_096), ("claude-3-sonnet", 8_192),
                            ("claude-3-haiku", 4_096), ("opus-4-5", 64_000), ("opus-4", 32_000), ("sonnet-4", 64_000),
                            ("haiku-4", 64_000))
CLAUDE_CODE_OTHER_MODEL_OUTPUT = 32_000


@dataclass(frozen=True, kw_only=True)
class AgentSettings:
    """The preset chosen for a log, the knobs it implies, and why (one line per choice)."""

    preset: str | None
    knobs: Knobs
    agent: str | None = None
    version: str | None = None
    model: str | None = None
    window: int | None = None
    notes: tuple[str, ...] = ()  # how each setting was chosen
    warnings: tuple[str, ...] = ()  # what limits the result (no log, unknown prices)

    @property
    def who(self) -> str:
        """The agent and the version that wrote the log, as the log names them ("claude_code 2.1.25"; "gemini_cli"
        when the log names no version)."""
        return agent_words(self.agent, self.version)


def agent_words(agent: str | None, version: str | None) -> str:
    """The agent and its version ("claude_code 2.1.25"), or the agent alone when the version is unknown: never a
    dangling space ("replaying as gemini_cli  does")."""
    return " ".join(part for part in (agent or "an unknown agent", version) if part)


def raw_codex_window(logged: int) -> int:
    """Codex's raw context window from the 95% window its rollout logs."""
    return round(logged * 100 / CODEX_EFFECTIVE_WINDOW_PERCENT)


def claude_code_model_output(model: str) -> int:
    """The max output Claude Code assumes for a model, by its own table (a Bedrock or Vertex id matches too)."""
    name = model.lower()
    return next((cap for part, cap in CLAUDE_CODE_MODEL_OUTPUT if part in name), CLAUDE_CODE_OTHER_MODEL_OUTPUT)


def claude_code_window(version: str | None, models: tuple[str, ...] | list[str]) -> int:
    """Claude Code's context window for a session's models: 1M with a "[1m]" model id or a native-1M model the
    version knows, else 200,000."""
    v = parse_version(version)
    for model in models:
        name = model.lower()
        if "[1m]" in name:
            return CLAUDE_CODE_1M_WINDOW
        if any(part in name and v >= since for part, since in CLAUDE_CODE_NATIVE_1M):
            return CLAUDE_CODE_1M_WINDOW
    return CLAUDE_CODE_WINDOW


def claude_code_compacts_reactively(version: str | None, model: str | None, window: int) -> bool:
    """Whether this Claude Code version compacts only when the API refuses a call (at the window), not at its
    threshold: by default from 2.1.153 (but the model-default models under 1M from 2.1.161), and on a 1M window
    from 2.1.105 (a server flag the logs show was on)."""
    v = parse_version(version)
    if v >= CLAUDE_CODE_REACTIVE_FROM:
        name = (model or "").lower()
        exempt = (v >= CLAUDE_CODE_MODEL_DEFAULT_FROM and window < CLAUDE_CODE_1M_WINDOW
                  and any(m in name for m in CLAUDE_CODE_MODEL_DEFAULT_MODELS))
        return not exempt
    return v >= CLAUDE_CODE_REACTIVE_1M_FROM and window >= CLAUDE_CODE_1M_WINDOW


def claude_drops_earlier_thinking(model: str | None) -> bool:
    """Whether a Claude model drops the thinking of earlier turns at a new user turn (``CLAUDE_THINKING_KEPT_FROM``):
    claude-3.x and the 4.x models before the ones that keep it; an unknown name or a later family keeps it."""
    name = (model or "").lower()
    if re.search(r"claude-3([-.]|$)", name):
        return True
    for family, kept_from in CLAUDE_THINKING_KEPT_FROM:
        found = re.search(rf"{family}-(\d+)(?:-(\d)(?!\d))?", name)
        if found:
            version = (int(found.group(1)), int(found.group(2) or 0))
            return version < kept_from
    return False


def claude_code_reserve(version: str | None, model: str | None) -> int:
    """Claude Code's auto-compact reserve for a version and model: output reserve + 13,000."""
    out = CLAUDE_CODE_OUTPUT_RESERVE
    if model:
        out = min(out, claude_code_model_output(model))
    if parse_version(version) >= (2, 1, 21):
        out = min(out, CLAUDE_CODE_OUTPUT_RESERVE_CAP)
    return out + CLAUDE_CODE_BUFFER


def _reserve_limit(knobs: Knobs) -> float:
    """The trigger's reserve term (window - reserve, ``policies.limits.trigger_limit``): Claude Code's auto-compact
    threshold, from which its warning threshold is measured; 0 without a reserve."""
    return next((t.tokens for t in trigger_limit(knobs).terms if t.name == "reserve"), 0.0)


def logged_manual_checks(history: History, check_point: str) -> str:
    """The checks at which the log's user ran /compact (the check just before each logged manual compaction), as
    ``manual_compact_checks`` text: the factual replay compacts there as the agent did; "" when there is none."""
    log = history.log
    manual = [c.index for c in log.compactions if c.trigger == "manual"] if log is not None else []
    if not manual:
        return ""
    import numpy as np

    from workbench.counting.checks import check_indices

    checks = check_indices(history, check_point)
    found = sorted({int(k) for k in np.searchsorted(checks, manual, side="left") - 1 if k >= 0})
    return ", ".join(str(k) for k in found)


def agent_settings(history: History, *, preset: str | None = None, base: Knobs | None = None,
                   dollars: bool = True) -> AgentSettings:
    """The knobs to replay ``history`` as its agent would have run: preset by version, window and model from the log.

    ``preset`` overrides the version's choice; ``base`` (e.g. a user's calibrated YAML) replaces the preset's
    knobs, and the window and model still come from the log. ``dollars=False``: the caller shows no dollars
    (``workbench reality``), so a model missing from litellm's price registry is not worth a warning, nor the
    registry's parse (3.5 MB, the first time in a process with its disk cache cold).
    """
    log = history.log
    if log is None:
        knobs = base or (get_preset(preset) if preset else Knobs())
        return AgentSettings(preset=preset, knobs=knobs, warnings=("not an agent log: no usage, version or window",))
    name = preset or preset_for(log.agent, log.version)
    knobs = base or (get_preset(name) if name else Knobs())
    notes: list[str] = []
    warnings: list[str] = []
    if name and not preset:
        info = get_preset_info(name)
        notes.append(f"preset {name} ({info.title}) for {log.agent} {log.version or 'of unknown version'}")
    changes: dict[str, object] = {}
    model = log.model
    window: int | None = None
    if log.agent == "codex" and log.window_logged:
        window = raw_codex_window(log.window_logged)
        notes.append(f"window {window:,} = the logged {log.window_logged:,} / 0.{CODEX_EFFECTIVE_WINDOW_PERCENT}")
        clamped = int(clamp_knob("context_window_tokens", window))
        if clamped != window:  # a corrupt or hand-edited log: the replay still runs, on the nearest window a knob takes
            spec = KNOB_SPECS["context_window_tokens"]
            line = log.extra.get("window_line")
            where = f"{history.source_path or history.id}{f':{line}' if isinstance(line, int) else ''}"
            warnings.append(f"{where}: field 'payload.info.model_context_window': the window {window:,} is outside "
                            f"context_window_tokens' range [{spec.low:,.0f}, {spec.high:,.0f}]: clamped to {clamped:,}")
            window = clamped
    elif log.agent == "claude_code":
        window = claude_code_window(log.version, (model, *log.models) if model else log.models)
        notes.append(f"window {window:,} (Claude Code {log.version or '?'}'s for {model or 'this model'})")
        if base is None and knobs.strategy != "stagewise" and knobs.trigger_reserve_tokens:
            reserve = claude_code_reserve(log.version, model)
            if reserve != knobs.trigger_reserve_tokens:
                changes["trigger_reserve_tokens"] = reserve
                notes.append(f"reserve {reserve:,} for {model}'s output limit")
            reactive = claude_code_compacts_reactively(log.version, model, window)
            if reactive == knobs.proactive_compaction:
                changes["proactive_compaction"] = not reactive
                changes["reactive_compaction"] = True
                notes.append("compacts when the API refuses a call, at the window (no proactive threshold)" if reactive
                             else f"proactive threshold for {model} on a {window:,} window")
    elif log.agent in ("opencode", "copilot_cli", "gemini_cli", "pi"):
        rule = agent_window(log, model, own_knobs=base is None)
        window = rule.window
        notes.extend(rule.notes)
        changes.update(rule.changes)
    if log.agent == "claude_code" and log.version and window:
        # Where the log records no microcompaction, the estimate clears old tool results by its rule; from 2.1.8
        # the log records each (read from it), so the rule stays off.
        silent = parse_version(log.version) < CLAUDE_CODE_MICROCOMPACT_LOGGED_FROM
        wanted = max(0, round(_reserve_limit(knobs.replace(**changes, context_window_tokens=window)))
                     - CLAUDE_CODE_WARNING_MARGIN) if silent else 0
        if wanted != knobs.microcompact_tokens:
            changes["microcompact_tokens"] = wanted
            if wanted:
                notes.append(f"old tool results cleared from {wanted:,} tokens (unlogged microcompaction)")
    if log.agent == "claude_code" and claude_drops_earlier_thinking(model) != knobs.reasoning_dropped_at_turn:
        changes["reasoning_dropped_at_turn"] = not knobs.reasoning_dropped_at_turn
        if changes["reasoning_dropped_at_turn"]:
            notes.append(f"{model} drops earlier turns' thinking at a new user turn")
    if window:
        changes["context_window_tokens"] = window
    manual = logged_manual_checks(history, knobs.check_point)
    if manual and not knobs.manual_compact_checks:
        changes["manual_compact_checks"] = manual
        notes.append(f"the user's /compact at checks {manual} (the log's manual compactions)")
    if model:
        changes["model"] = model
        if dollars and not get_prices(model).known:
            warnings.append(f"{model} is not in litellm's price registry: dollars are not known")
    return AgentSettings(preset=name, knobs=knobs.replace(**changes) if changes else knobs, agent=log.agent,
                         version=log.version, model=model, window=window, notes=tuple(notes),
                         warnings=tuple(warnings))


# What gives a plain transcript's agent away when it has no log: its system prompt's opening words, or the
# names of the tools it called (each agent's own tool set). (preset, evidence, system prefixes, tool sets)
_FINGERPRINTS: tuple[tuple[str, str, tuple[str, ...], tuple[frozenset[str], ...]], ...] = (
    ("codex_cli", "Codex", ("You are Codex",), (frozenset({"exec_command"}), frozenset({"shell", "update_plan"}))),
    ("claude_code", "Claude Code", (), (frozenset({"TodoWrite"}), frozenset({"Read", "Edit", "Bash", "Glob"}))),
    ("openhands", "OpenHands", ("You are OpenHands agent",), (frozenset({"execute_bash", "str_replace_editor"}),)),
    ("swe_agent", "SWE-agent", ("SETTING: You are an autonomous programmer",), ()),
)


def guess_agent(history: History) -> tuple[str, str] | None:
    """(preset, why) for a transcript without a log whose agent its own text gives away; None when unsure."""
    systems = [m.text.lstrip() for m in history.messages if m.role == "system"][:3]
    tools = {p.tool_name for m in history.messages for p in m.parts or () if p.kind == "tool" and p.tool_name}
    for preset, agent, prefixes, tool_sets in _FINGERPRINTS:
        for text in systems:
            for prefix in prefixes:
                if text.startswith(prefix):
                    return preset, f"its system prompt opens with {prefix!r} ({agent})"
        for needed in tool_sets:
            if needed <= tools:
                return preset, f"it calls {', '.join(sorted(needed))}: {agent}'s tools"
    return None
