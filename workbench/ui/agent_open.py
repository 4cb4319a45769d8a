"""Opening a real agent log: its own preset, window and model, once, the first time it is chosen.

A Claude Code or Codex log names its agent version and model (and Codex its window); replaying it under
stagewise's defaults would fold its system prompts into the briefing and price it as another model. The first
time such a log is chosen, its settings are put into the knob widgets and a message says what was chosen;
after that the user's changes stand. A plain transcript with system messages inside gets a pointer to the
pinning knob. No streamlit import: ``state`` is ``st.session_state`` or a dict.
"""

from __future__ import annotations

from workbench.display.untrusted import literal
from workbench.history.model import History
from workbench.ui import state as ui_state

OPENED = "opened_histories"  # digests whose own settings were applied already
PRESET_KEY = "preset"  # the sidebar's preset select box


def adopt(state: ui_state.SessionState, history: History) -> bool:
    """Apply ``history``'s own agent settings the first time it is opened; returns whether it did."""
    opened: set[str] = state.setdefault(OPENED, set())
    if history.digest in opened:
        return False
    opened.add(history.digest)
    from workbench.analysis.real_logs.agent_settings import agent_settings, guess_agent

    if history.log is None:
        systems = sum(1 for m in history.messages if m.role == "system")
        guess = guess_agent(history)
        if guess is not None:
            preset, why = guess
            from workbench.presets import get_preset

            ui_state.apply_knobs(state, get_preset(preset))
            state[PRESET_KEY] = preset
            ui_state.flash(state, "info", f"Opened with preset `{preset}`: {why}. It has no log, so the window "
                           "and model are the preset's; choose another preset to compare.")
            return True
        if systems:
            ui_state.flash(state, "info", f"This transcript holds {systems} system message(s) (instructions, "
                           "rules): pin them with `pin_system_messages` if the agent kept them.")
        return False

    settings = agent_settings(history)
    ui_state.apply_knobs(state, settings.knobs)
    if settings.preset:
        state[PRESET_KEY] = settings.preset  # the sidebar's preset picker shows where the knobs came from
    who = literal(settings.who)  # the version and model are the log's: as written
    ui_state.flash(state, "info", f"Opened as {who} does it: preset `{settings.preset}`, window "
                   f"{settings.knobs.context_window_tokens:,}, model {literal(settings.knobs.model)}. "
                   + " ".join(literal(w) for w in settings.warnings))
    return True
