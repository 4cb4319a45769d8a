"""The app shows reality: a real agent log opens with its own preset, window and model, and the Reality tab
puts the logged compactions beside the predicted ones, shows the real summary, and calibrates."""

from __future__ import annotations

import pytest
from agent_log_builders import CodexLog, text_block
from app_charts import charts
from test_app import app, no_errors
from test_reality import claude_crossing

from workbench.ui import state as ui_state


def claude_log_bytes() -> bytes:
    log = claude_crossing().compact("auto", 167_700, "This session is being continued: the parser was refactored.")
    return log.user("go on").assistant([text_block("Going on.")], input_total=52_000, output=40).text().encode()


def opened(name: str, data: bytes, **state):
    return app(tab="Reality", **{ui_state.PENDING_HISTORY: (name, data)}, **state)


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_codex_log_opens_with_the_raw_window_it_logged():
    log = CodexLog(window_logged=121_600).turn().user("Start.").reasoning().say("ok").tokens(20_000, 10).end_turn()
    at = opened("rollout.jsonl", log.text().encode())
    no_errors(at)
    assert at.session_state["knob_context_window_tokens"] == 128_000
    assert at.session_state["knob_trigger_ratio"] == 0.9


@pytest.mark.slow
def test_the_reality_tab_puts_each_logged_compaction_beside_the_prediction():
    at = opened("session.jsonl", claude_log_bytes())
    no_errors(at)
    table, bill = at.dataframe
    frame = table.value
    assert list(frame["real index"]) == [5] and list(frame["predicted index"]) == [5]
    assert list(frame["delta (messages)"]) == [0]
    assert frame["tokens after (logged)"][0] == 52_000  # the call after the compaction, as the log billed it
    # this log's first call billed 160,000 tokens for one short message: that is its hidden prefix, then the
    # preset's restore constant, the summary floor (11,928 chars / 4 = 2,982) and "go on"
    from workbench.presets import get_preset

    restore = get_preset("claude_code").compaction_restore_tokens
    assert 160_000 + restore + 2_982 - 100 < frame["predicted tokens after"][0] < 160_000 + restore + 2_982 + 100
    bills = bill.value
    assert list(bills[""]) == ["calls", "uncached input", "cache reads", "cache writes", "output (reasoning included)"]
    assert bills["modelled"][0] == bills["logged"][0] == 3  # the replay's calls are the log's
    assert charts(at)
    # the real summary is shown as text (a code block), never rendered as Markdown
    assert any(c.value.startswith("This session is being continued") for c in at.code)
    assert not any(m.value.startswith("This session is being continued") for m in at.markdown)


@pytest.mark.slow
def test_the_bill_says_how_it_was_priced_and_which_cache_rules_it_follows():
    at = opened("session.jsonl", claude_log_bytes())
    no_errors(at)
    texts = [t.value for t in at.text]
    priced = next(t for t in texts if t.startswith("dollars: modelled $"))
    assert "logged $" in priced and "claude-opus-4-5-20251101 at list price: input $5.00" in priced
    assert "price registry" in priced and "1-hour entries" in priced  # Claude Code 2.1.25 writes 1-hour entries
    assert any(t.startswith("cache model: anthropic prompt cache, lifetime 1 hour") for t in texts)
    # the cards above the tabs say how their dollars were priced, and give the log's own bill beside them
    assert any(t.startswith("$ / task: the replay's calls, claude-opus-4-5-20251101 at list price") for t in texts)
    assert any(t.startswith("This log's own bill, from its usage (3 calls") and "at the same prices: $" in t
               for t in texts)


@pytest.mark.slow
def test_without_usage_the_tab_says_so_and_predicts_from_the_estimate():
    at = opened("session.jsonl", claude_log_bytes(), **{"reality_usage": False})
    no_errors(at)
    assert at.dataframe  # a row per logged compaction either way


@pytest.mark.slow
def test_calibrate_loads_the_fitted_knobs_into_the_sidebar():
    at = opened("session.jsonl", claude_log_bytes())
    before = at.session_state["knob_hidden_prefix_tokens"]
    next(b for b in at.button if b.key == "reality_calibrate").click().run()
    no_errors(at)
    after = at.session_state["knob_hidden_prefix_tokens"]
    assert after != before
    assert any("the calibration of this log" in s.value for s in at.success)


def test_the_reality_table_follows_the_sidebars_knobs_and_the_calibrated_ones():
    """The Reality tab replays with the sidebar's knobs (#21 item 3): a knob moved in the sidebar, and the knobs
    "Calibrate to this log" loads, change the predicted columns of its table, not only the cards."""
    at = opened("session.jsonl", claude_log_bytes(), **{"reality_usage": False})
    no_errors(at)
    before = at.dataframe[0].value
    next(b for b in at.button if b.key == "reality_calibrate").click().run()
    no_errors(at)
    calibrated = at.dataframe[0].value
    assert calibrated["predicted tokens after"].to_list() != before["predicted tokens after"].to_list()
    at.session_state["knob_hidden_prefix_tokens"] = at.session_state["knob_hidden_prefix_tokens"] + 5_000
    at.run()
    moved = at.dataframe[0].value
    assert [a - b for a, b in zip(moved["predicted tokens after"], calibrated["predicted tokens after"],
                                  strict=True)] == [5_000] * len(moved)


def test_a_transcript_is_not_a_log_and_the_tab_says_what_to_open():
    at = app(tab="Reality")
    no_errors(at)
    assert any("not an agent's own log" in i.value for i in at.info)


@pytest.mark.slow
def test_the_context_chart_of_a_real_log_shows_the_logged_context_and_compactions():
    at = app(tab="Charts", **{ui_state.PENDING_HISTORY: ("session.jsonl", claude_log_bytes())})
    no_errors(at)
    context = next(spec for _, spec in charts(at) if "logged: the agent" in spec)
    assert "logged compaction" in context


@pytest.mark.slow
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
