"""The app on the newer agents' logs: an OpenCode export and a Copilot CLI log open with their agent's preset and
window, and the Reality tab puts each logged compaction beside the replay's."""

from __future__ import annotations

import pytest
from native_log_builders import CopilotLog, OpenCodeLog, oc_tool
from test_app import app, no_errors

from workbench.ui import state as ui_state


def opened(name: str, data: bytes):  # noqa: ANN201
    return app(tab="Reality", **{ui_state.PENDING_HISTORY: (name, data)})


@pytest.mark.slow
def test_an_opencode_export_opens_with_its_window_and_its_compaction_is_predicted():
    """OpenCode 1.4.3 on github-copilot/claude-sonnet-4.6: usable 128,000 - 20,000; the call that billed 110,000
    crossed it, and the Reality tab predicts the compaction right after it."""
    log = OpenCodeLog().user("refactor " * 50)
    for total in (40_000, 80_000, 110_000):
        log.assistant(total=total, tools=[oc_tool("read", f"c{total}", "code\n" * 200)])
    log.compaction().assistant("## Goal\nrefactor", total=100_000, summary=True).user("go on").assistant(total=20_000)
    at = opened("ses.json", log.text().encode())
    no_errors(at)
    assert at.session_state["preset"] == "opencode_1_3"
    assert at.session_state["knob_context_window_tokens"] == 128_000
    assert at.session_state["knob_trigger_reserve_tokens"] == 20_000
    frame = at.dataframe[0].value
    assert list(frame["real index"]) == [4] and list(frame["predicted index"]) == [4]


@pytest.mark.slow
def test_a_copilot_log_opens_with_its_window_and_the_reality_tab_shows_its_compaction():
    """Copilot CLI on gpt-4.1 (its catalogue: 64,000 prompt tokens): the logged compaction is in the table."""
    log = CopilotLog(model="gpt-4.1").system().user("build it")
    for i in range(6):
        log.assistant("working", calls=[(f"c{i}", "powershell")], out=30).result(f"c{i}", "build output line " * 4_000)
    log.compaction(pre=52_000).user("next").assistant("done", out=10)
    at = opened("events.jsonl", log.text().encode())
    no_errors(at)
    assert at.session_state["preset"] == "copilot_cli"
    assert at.session_state["knob_context_window_tokens"] == 64_000
    frame = at.dataframe[0].value
    assert list(frame["real index"]) == [14] and frame["predicted index"][0] is not None
