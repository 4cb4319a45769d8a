"""The knobs an agent's own log implies: the preset of the version that wrote it, its window, its model.

A real Claude Code or Codex log names its agent version and model, and Codex logs its window; a replay that
claims to be "what the agent did" must start from those, not from stagewise's defaults. Pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.counting.prices import get_prices
from workbench.history.model import History
from workbench.history.session_log import parse_version
from workbench.knobs import KNOB_SPECS, Knobs, clamp_knob
from workbench.presets import get_preset, get_preset_info, preset_for

# Codex logs model_context_window = the raw window x effective_context_window_percent (default 95):
# openai/codex protocol openai_models.rs; 121,600 = 128,000 x 0.95 and 258,400 = 272,000 x 0.95 in the rollouts.
CODEX_EFFECTIVE_WINDOW_PERCENT = 95
# Claude Code's window is 200,000 unless the model carries the 1M beta ("[1m]") (2.1.x bundles, cli.js).
CLAUDE_CODE_WINDOW = 200_000
CLAUDE_CODE_1M_WINDOW = 1_000_000
# Claude Code's reserve: min(32,000, model max output[, 20,000 from 2.1.21]) + 13,000 buffer (cli.js bundles).
CLAUDE_CODE_OUTPUT_RESERVE = 32_000
CLAUDE_CODE_OUTPUT_RESERVE_CAP = 20_000
CLAUDE_CODE_BUFFER = 13_000
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


def raw_codex_window(logged: int) -> int:
    """Codex's raw context window from the 95% window its rollout logs."""
    return round(logged * 100 / CODEX_EFFECTIVE_WINDOW_PERCENT)


def claude_code_model_output(model: str) -> int:
    """The max output Claude Code assumes for a model, by its own table (a Bedrock or Vertex id matches too)."""
    name = model.lower()
    return next((cap for part, cap in CLAUDE_CODE_MODEL_OUTPUT if part in name), CLAUDE_CODE_OTHER_MODEL_OUTPUT)


def claude_code_reserve(version: str | None, model: str | None) -> int:
    """Claude Code's auto-compact reserve for a version and model: output reserve + 13,000."""
    out = CLAUDE_CODE_OUTPUT_RESERVE
    if model:
        out = min(out, claude_code_model_output(model))
    if parse_version(version) >= (2, 1, 21):
        out = min(out, CLAUDE_CODE_OUTPUT_RESERVE_CAP)
    return out + CLAUDE_CODE_BUFFER


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
        window = CLAUDE_CODE_1M_WINDOW if model and "[1m]" in model else CLAUDE_CODE_WINDOW
        notes.append(f"window {window:,} (Claude Code's for {model or 'this model'})")
        if base is None and knobs.strategy != "stagewise" and knobs.trigger_reserve_tokens:
            reserve = claude_code_reserve(log.version, model)
            if reserve != knobs.trigger_reserve_tokens:
                changes["trigger_reserve_tokens"] = reserve
                notes.append(f"reserve {reserve:,} for {model}'s output limit")
    if window:
        changes["context_window_tokens"] = window
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
