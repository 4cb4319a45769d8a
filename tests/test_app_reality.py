"""The app shows reality: a real agent log opens with its own preset, window and model, and the Reality tab
puts the logged compactions beside the predicted ones, shows the real summary, and calibrates."""

from __future__ import annotations

from agent_log_builders import CodexLog
from app_charts import charts
from test_app import app, no_errors
from test_reality import claude_crossing

from workbench.ui import state as ui_state


def claude_log_bytes() -> bytes:
    log = claude_crossing().compact("auto", 167_700, "This session is being continued: the parser was refactored.")
    return log.user("go on").text().encode()


def opened(name: str, data: bytes, **state):
    return app(tab="Reality", **{ui_state.PENDING_HISTORY: (name, data)}, **state)


def test_a_claude_code_log_opens_with_its_own_preset_window_and_model():
    at = opened("session.jsonl", claude_log_bytes())
    no_errors(at)
    state = at.session_state  # knob groups draw their widgets only while open; their values live here
    assert state["knob_context_window_tokens"] == 200_000
    assert state["knob_strategy"] == "summarize"
    assert state["knob_check_point"] == "call"
    assert state["knob_model"] == "claude-opus-4-5-20251101"
    assert any("preset `claude_code`" in i.value for i in at.info)
    assert at.session_state["preset"] == "claude_code"


def test_a_codex_log_opens_with_the_raw_window_it_logged():
    log = CodexLog(window_logged=121_600).turn().user("Start.").reasoning().say("ok").tokens(20_000, 10).end_turn()
    at = opened("rollout.jsonl", log.text().encode())
    no_errors(at)
    assert at.session_state["knob_context_window_tokens"] == 128_000
    assert at.session_state["knob_trigger_ratio"] == 0.9


def test_the_reality_tab_puts_each_logged_compaction_beside_the_prediction():
    at = opened("session.jsonl", claude_log_bytes())
    no_errors(at)
    (table,) = at.dataframe
    frame = table.value
    assert list(frame["real index"]) == [5] and list(frame["predicted index"]) == [5]
    assert list(frame["delta (messages)"]) == [0]
    assert charts(at)
    # the real summary is shown as text (a code block), never rendered as Markdown
    assert any(c.value.startswith("This session is being continued") for c in at.code)
    assert not any(m.value.startswith("This session is being continued") for m in at.markdown)


def test_without_usage_the_tab_says_so_and_predicts_from_the_estimate():
    at = opened("session.jsonl", claude_log_bytes(), **{"reality_usage": False})
    no_errors(at)
    assert at.dataframe  # a row per logged compaction either way


def test_calibrate_loads_the_fitted_knobs_into_the_sidebar():
    at = opened("session.jsonl", claude_log_bytes())
    before = at.session_state["knob_hidden_prefix_tokens"]
    next(b for b in at.button if b.key == "reality_calibrate").click().run()
    no_errors(at)
    after = at.session_state["knob_hidden_prefix_tokens"]
    assert after != before
    assert any("the calibration of this log" in s.value for s in at.success)


def test_a_transcript_is_not_a_log_and_the_tab_says_what_to_open():
    at = app(tab="Reality")
    no_errors(at)
    assert any("not an agent's own log" in i.value for i in at.info)


def test_the_context_chart_of_a_real_log_shows_the_logged_context_and_compactions():
    at = app(tab="Charts", **{ui_state.PENDING_HISTORY: ("session.jsonl", claude_log_bytes())})
    no_errors(at)
    context = next(spec for _, spec in charts(at) if "logged: the agent" in spec)
    assert "logged compaction" in context


def test_the_context_chart_of_a_transcript_has_no_logged_line():
    at = app(tab="Charts")
    no_errors(at)
    assert not any("logged: the agent" in spec for _, spec in charts(at))


CODEX_TRANSCRIPT = "\n".join(__import__("json").dumps(m) for m in [
    {"id": "m0", "role": "system", "content": "You are Codex, a coding agent based on GPT-5. " + "Be careful. " * 50},
    {"id": "m1", "role": "user", "content": "Triage the issues."},
    {"id": "m2", "role": "assistant", "content": "On it."},
]) + "\n"


def test_a_plain_transcript_whose_agent_its_text_gives_away_opens_with_that_agents_preset():
    """No log, but a system prompt that opens 'You are Codex': the codex_cli preset pins that prompt."""
    at = opened("codex_transcript.jsonl", CODEX_TRANSCRIPT.encode())
    no_errors(at)
    assert at.session_state["preset"] == "codex_cli"
    assert at.session_state["knob_pin_system_messages"] is True
    assert any("Opened with preset `codex_cli`" in i.value and "You are Codex" in i.value for i in at.info)


def test_simulate_names_the_agent_a_transcript_gives_away(tmp_path, capsys):
    from workbench.cli import main

    path = tmp_path / "t.jsonl"
    path.write_text(CODEX_TRANSCRIPT)
    assert main(["simulate", str(path)]) == 0
    assert "--preset codex_cli replays it as that agent does" in capsys.readouterr().err
