"""The compression inspector rebuilds what each briefer read: same size as the replay measured."""

from __future__ import annotations

from scripted import tool_history, uniform_history

from workbench.analysis.inspector import compression_view, message_preview
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.briefing.prompt import budget_hint
from workbench.history.jsjson import utf16_len
from workbench.history.model import History, Message, text_part, tool_call_part
from workbench.knobs import Knobs
from workbench.replay import simulate

K = Knobs(context_window_tokens=32_000, check_point="message")


def test_compact_history_has_the_size_the_replay_measured_for_every_compression():
    """With real briefing text (extractive), the rebuilt transcript is exactly compact_history_chars long."""
    history = tool_history(80)
    run = simulate(history, K, ExtractiveBriefer())
    assert len(run.compressions) >= 3
    for i, c in enumerate(run.compressions):
        view = compression_view(run, history, i)
        assert utf16_len(view.compact_history) == c.compact_history_chars
        if c.previous_chars:
            assert view.compact_history.startswith("<previous-chat-history>")
        assert view.briefing == c.record.text


def test_folded_and_kept_frames_cover_the_right_messages():
    """Folded: from the previous boundary to this one; kept: from the boundary to where it started."""
    history = uniform_history(60)
    run = simulate(history, K)
    second = run.compressions[1]
    view = compression_view(run, history, 1)
    assert view.folded["index"].to_list() == list(range(second.folded_from, second.boundary))
    assert view.kept["index"].to_list() == list(range(second.boundary, second.index_started + 1))
    assert view.kept.height == second.kept


def test_user_message_carries_the_budget_hint_of_the_previous_briefing():
    """A size-only chain gets a placeholder for the previous briefing but the hint uses its real size."""
    history = uniform_history(60)
    run = simulate(history, K)
    view = compression_view(run, history, 1)
    prev = run.compressions[1].previous_chars
    assert budget_hint(prev, K.target_briefing_chars) in view.user_message
    assert f"[simulated briefing: {prev:,} characters, size only]" in view.compact_history
    assert view.briefing is None and "simulated" in view.briefing_label


def test_message_preview_shortens_text_and_describes_tool_only_messages():
    """Text is cut to the width with an ellipsis; a tool result without text names its part."""
    long = Message(id="a", role="user", parts=(text_part("word " * 100),))
    assert len(message_preview(long, 40)) == 40 and message_preview(long, 40).endswith("…")
    history = tool_history(1)
    assert message_preview(history.messages[2]) == "[tool-result read]"
    call = Message(id="c", role="assistant", parts=(
        tool_call_part("read", "c1", {"path": "src/f0.py"}, state="output-available", output="x"),))
    assert message_preview(call) == "[read: src/f0.py]"
    empty = History(id="e", messages=(Message(id="x", role="assistant", parts=()),))
    assert message_preview(empty.messages[0]) == "[no parts]"
