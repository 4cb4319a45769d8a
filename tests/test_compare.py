"""A/B tables: metric deltas with a 'better' flag, and the knobs that differ."""

from __future__ import annotations

import pytest
from scripted import uniform_history

from workbench.analysis.compare import (
    HEADLINE_METRICS,
    compact_number,
    display_deltas,
    format_delta,
    format_metric,
    knob_differences,
    metric_deltas,
)
from workbench.knobs import Knobs
from workbench.replay import simulate


def test_metric_deltas_subtract_a_from_b_and_judge_lower_as_better():
    """Raising the trigger makes fewer compressions but a higher peak: the table says both."""
    h = uniform_history(80)
    a = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.5)).metrics
    b = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.8)).metrics
    table = {r["metric"]: r for r in metric_deltas(a, b).iter_rows(named=True)}
    assert len(table) == len(HEADLINE_METRICS)
    comp = table["compressions"]
    assert (comp["A"], comp["B"], comp["delta"]) == (a.compressions, b.compressions, b.compressions - a.compressions)
    assert comp["better"] is True
    assert table["peak context (tokens)"]["better"] is False


def test_equal_runs_have_no_verdict():
    """Zero delta: 'better' is empty rather than a guess."""
    m = simulate(uniform_history(30), Knobs(context_window_tokens=32_000)).metrics
    assert metric_deltas(m, m)["better"].null_count() == len(HEADLINE_METRICS)


def test_knob_differences_lists_only_changed_knobs():
    """Only the knobs that differ appear, with both values as text."""
    rows = knob_differences(Knobs(), Knobs(trigger_ratio=0.5, min_kept_messages=3)).rows()
    assert rows == [("trigger_ratio", "0.65", "0.5"), ("min_kept_messages", "10", "3")]


def test_display_deltas_writes_each_metric_in_its_unit():
    """Ratios as percents, dollars with a sign, counts with separators."""
    h = uniform_history(80)
    a = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.5)).metrics
    b = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.8)).metrics
    table = {r["metric"]: r for r in display_deltas(metric_deltas(a, b)).iter_rows(named=True)}
    assert table["peak / window"]["A"] == f"{a.peak_ratio:.1%}"
    assert table["compressions"]["B − A"] == f"{b.compressions - a.compressions:+,}"
    assert table["tokens per task"]["A"] == f"{a.tokens_per_task:,}"
    assert format_metric("dollars_per_task", 0.01234) == "$0.0123"
    assert format_metric("dollars_per_task", -2.5, signed=True) == "-$2.50"


@pytest.mark.parametrize(
    ("value", "dollars", "shown"),
    [
        (9_876, False, "9,876"),
        (12_345, False, "12.3k"),
        (103_570, False, "104k"),
        (99_949, False, "99.9k"),
        (999_999, False, "1.0M"),
        (63_329_610, False, "63.3M"),
        (2_500_000_000, False, "2.5B"),
        (205.38, True, "$205"),
        (52.14, True, "$52.1"),
        (1.2345, True, "$1.23"),
        (0.0042, True, "$0.0042"),
    ],
)
def test_compact_number_fits_a_metric_card(value, dollars, shown):
    assert compact_number(value, dollars=dollars) == shown


@pytest.mark.parametrize(("name", "delta", "value", "shown"), [
    ("tokens_per_task", -9_600_000, 63_300_000, "-9.6M"),
    ("tokens_per_task", -39_600, 250_080, "-39.6k"),
    ("peak_tokens", -5_830, 12_992, "-5.8k"),
    ("compressions", 6, 12, "+6"),
    ("dollars_per_task", -28.81, 205.0, "-$28.8"),
    ("peak_ratio", -0.29, 0.65, "-29%"),
])
def test_deltas_read_like_their_card_values(name, delta, value, shown):
    assert format_delta(name, delta, value) == shown


def test_a_smaller_largest_briefing_is_neither_better_nor_worse():
    h = uniform_history(80)
    a = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.5)).metrics
    b = simulate(h, Knobs(context_window_tokens=32_000, trigger_ratio=0.8, target_briefing_chars=2_000)).metrics
    row = next(r for r in display_deltas(metric_deltas(a, b)).iter_rows(named=True)
               if r["metric"] == "largest briefing (chars)")
    assert row["B better"] == ("neither" if a.max_briefing_chars != b.max_briefing_chars else "")
