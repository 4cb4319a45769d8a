"""The Charts tab of a real agent log: the agent's own compactions are marked beside the replay's, one line says how
far apart they are (or that moved knobs make the replay a counterfactual), and a log that starts mid-session says so."""

from __future__ import annotations

import json

import pytest
from agent_log_builders import ClaudeLog, text_block, tool_use
from app_charts import charts
from conftest import need_shared, shared_dir
from test_app import app, no_errors, widget

from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.analysis.real_logs.free_replay import against_log
from workbench.history.readers import load_history, parse_history
from workbench.replay import simulate
from workbench.ui import state as ui_state


def compacting_log(*, first_parent: str | None = None, task: str = "Refactor the parser.") -> ClaudeLog:
    """Claude Code 2.1.25 (trigger 167,000): the bill crosses it, the agent compacts, and the session goes on."""
    log = ClaudeLog(version="2.1.25", first_parent=first_parent).user(task)
    for k in range(15):  # the last call reads 166,000; its result (~3,000 tokens) brings the context past 167,000
        log.assistant([text_block(f"step {k}"), tool_use(f"t{k}")], input_total=40_000 + 9_000 * k, output=5)
        log.tool_result(f"t{k}", "word " * (2_500 if k == 14 else 400))
    log.compact("auto", 169_000, "This session is being continued: the parser was refactored. " * 20)
    for k in range(5):
        log.assistant([tool_use(f"u{k}")], input_total=60_000 + 9_000 * k, output=5)
        log.tool_result(f"u{k}", "word " * 400)
    return log


def opened(data: bytes, name: str = "session.jsonl"):
    return app(tab="Charts", **{ui_state.PENDING_HISTORY: (name, data)})


def context_spec(at) -> str:  # noqa: ANN001
    return next(spec for _, spec in charts(at) if "Context over the conversation" in spec)


def against_text(at) -> str:  # noqa: ANN001
    return next(t.value for t in at.text if "compacted" in t.value)


def test_the_context_chart_marks_the_agents_compactions_and_says_how_far_the_replay_is():
    data = compacting_log().text().encode()
    at = opened(data)
    no_errors(at)
    spec = context_spec(at)
    assert "the agent compacted" in spec and "logged compaction" in spec and "compression started" in spec
    h = parse_history(data.decode(), source="session.jsonl")
    expected = against_log(simulate(h, agent_settings(h).knobs), h)
    assert expected is not None and expected.errors == (0,)
    assert against_text(at) == "The agent compacted once; this replay once, at +0 messages from the agent's."
    assert any("provider billed" in c.value for c in at.caption)  # which counter ran
    assert not any("provider billed" in w.value for w in at.warning)  # a note, not a warning


@pytest.mark.slow
def test_moving_a_knob_makes_the_line_say_the_replay_is_a_counterfactual():
    at = opened(compacting_log().text().encode())
    assert not against_text(at).startswith("Counterfactual")
    at.session_state["knob_group_trigger"] = True
    at.run()
    widget(at, "knob_trigger_reserve_tokens").set_value(60_000).run()
    no_errors(at)
    line = against_text(at)
    assert line.startswith("Counterfactual: the knobs differ from the agent's own")
    assert "The agent compacted once; this replay" in line


def test_a_log_that_starts_mid_session_says_so_on_the_charts_tab():
    at = opened(compacting_log(first_parent="u-earlier-file", task="Go on with the parser.").text().encode())
    no_errors(at)
    assert any("The log starts mid-session" in w.value for w in at.warning)


@pytest.mark.slow
def test_a_real_log_on_the_charts_tab_shows_the_replay_beside_the_agent():
    path = need_shared(shared_dir() / "real_sessions" / "claude_code__ad_ff0201aecb_0.jsonl")
    at = opened(path.read_bytes(), name=path.name)
    no_errors(at)
    h = load_history(path)
    expected = against_log(simulate(h, agent_settings(h).knobs), h)
    assert expected is not None and len(expected.logged) == 2
    assert against_text(at) == expected.sentence()
    assert all(e is not None and abs(e) <= 10 for e in expected.errors)
    spec = json.loads(context_spec(at))
    marks = next(t for t in spec["data"] if t.get("name") == "the agent compacted")
    assert marks["x"] == [c.index for c in h.log.compactions]


@pytest.mark.slow
def test_a_real_log_that_starts_at_a_compaction_says_so_on_the_charts_tab():
    """A real Claude Code log cut to start at its compact_boundary record: the Charts tab says the context it
    summarised is not in the file, and the replay is set beside the one compaction it could have made."""
    path = need_shared(shared_dir() / "real_sessions" / "claude_code__ad_ff0201aecb_0.jsonl")
    lines = path.read_text(encoding="utf-8").split("\n")
    start = next(n for n, line in enumerate(lines) if '"subtype":"compact_boundary"' in line)
    at = opened("\n".join(lines[start:]).encode(), name="from_compaction.jsonl")
    no_errors(at)
    assert any("The log starts at a compaction" in w.value for w in at.warning)
    assert against_text(at).startswith("The agent compacted once; this replay once, at +0 messages")
