"""The per-check cost frame: its last row is the run's metrics, for every counter, check point and latency."""

from __future__ import annotations

import pytest
from scripted import tool_history, uniform_history

from workbench.analysis.costs import cost_frame
from workbench.knobs import Knobs
from workbench.replay import simulate

CASES = [
    pytest.param(uniform_history(80), Knobs(context_window_tokens=32_000, check_point="message"), id="per-message"),
    pytest.param(tool_history(60), Knobs(context_window_tokens=40_000), id="per-step-tools"),
    pytest.param(tool_history(60), Knobs(context_window_tokens=40_000, latency_steps=3, hidden_prefix_tokens=2_000),
                 id="latency-and-system-prompt"),
    pytest.param(uniform_history(40), Knobs(context_window_tokens=32_000, trigger_ratio=-1.0), id="never-compresses"),
]


@pytest.mark.parametrize(("history", "knobs"), CASES)
def test_last_row_equals_the_run_metrics(history, knobs):
    """Cumulative tokens and dollars (plain and cached) end exactly where the replay's metrics say."""
    run = simulate(history, knobs)
    frame = cost_frame(run, history)
    last = frame.row(-1, named=True)
    m = run.metrics
    assert frame.height == run.timeline.height
    assert last["cum_tokens"] == m.tokens_per_task
    assert last["cum_dollars"] == pytest.approx(m.dollars_per_task, rel=1e-9)
    assert last["cum_dollars_cached"] == pytest.approx(m.dollars_per_task_cached, rel=1e-9)
    assert last["baseline_cum_tokens"] == m.baseline_tokens_per_task
    assert int(frame["calls"].sum()) == m.agent_calls


def test_cumulative_columns_never_decrease_and_briefer_tokens_sit_on_compression_starts():
    """Costs only add up; a step carries briefer tokens exactly where a compression started."""
    history = uniform_history(80)
    run = simulate(history, Knobs(context_window_tokens=32_000, check_point="message"))
    frame = cost_frame(run, history)
    for col in ("cum_tokens", "cum_dollars", "baseline_cum_tokens"):
        values = frame[col].to_list()
        assert values == sorted(values)
    starts = {c.check_started for c in run.compressions}
    assert set(frame.filter(frame["briefer_tokens"] > 0)["step"].to_list()) == starts


def test_compaction_is_cheaper_than_no_compaction_on_a_long_history():
    """With compressions, the run sends fewer tokens than the no-compaction baseline."""
    history = uniform_history(120)
    frame = cost_frame(simulate(history, Knobs(context_window_tokens=32_000)), history)
    assert frame["cum_tokens"][-1] < frame["baseline_cum_tokens"][-1]
