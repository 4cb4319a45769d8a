"""first_compaction: the replay stopped as its first non-manual compaction starts, which must be where the whole
replay (``simulate``) starts it, with the same context, for any knobs."""

from __future__ import annotations

import pytest
from scripted import sized_history, tool_history, uniform_history

from workbench.counting.tokens import CountCache
from workbench.history.samples.generate import generate_session
from workbench.knobs import Knobs
from workbench.presets import get_preset
from workbench.replay import simulate
from workbench.replay.first import first_compaction

HISTORIES = {
    "uniform": uniform_history(120),
    "tools": tool_history(60),
    "sized": sized_history([400, 90_000, 300, 60_000, 50, 120_000, 70_000] * 4),
    "generated": generate_session(20260507, turns=40, tool_heavy=0.3),
    "short": uniform_history(6),
}
KNOBS = {
    "default": Knobs(),
    "small window": Knobs(context_window_tokens=60_000),
    "latency": Knobs(context_window_tokens=60_000, latency_steps=3),
    "manual first": Knobs(context_window_tokens=120_000, manual_compact_checks="3, 9"),
    "reactive only": Knobs(context_window_tokens=50_000, proactive_compaction=False),
    "claude_code": get_preset("claude_code").replace(context_window_tokens=80_000),
    "codex_cli": get_preset("codex_cli").replace(context_window_tokens=80_000),
}


@pytest.mark.parametrize("knobs_name", list(KNOBS))
@pytest.mark.parametrize("history_name", list(HISTORIES))
def test_first_compaction_is_where_the_whole_replay_starts_it(history_name: str, knobs_name: str) -> None:
    history, knobs = HISTORIES[history_name], KNOBS[knobs_name]
    run = simulate(history, knobs, cache=CountCache())
    expected = next((c for c in run.compressions if c.trigger != "manual"), None)
    got = first_compaction(history, knobs, cache=CountCache(by_identity=True))
    if expected is None:
        assert got is None
        return
    assert got is not None
    assert (got.check_started, got.index_started, got.tokens_before, got.trigger) == (
        expected.check_started, expected.index_started, expected.tokens_before, expected.trigger)


def test_the_cases_above_cover_a_compaction_after_a_manual_one_and_none_at_all() -> None:
    """The table is only worth something if it holds the interesting cases."""
    manual = simulate(HISTORIES["tools"], KNOBS["manual first"])
    triggers = [c.trigger for c in manual.compressions]
    assert triggers[0] == "manual" and "threshold" in triggers[1:]
    assert first_compaction(HISTORIES["short"], KNOBS["default"]) is None
    assert first_compaction(HISTORIES["uniform"], KNOBS["default"]) is not None
