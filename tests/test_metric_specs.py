"""Each metric's words have one home, ``METRIC_SPECS`` beside ``Metrics``: every face reads its labels from there."""

from __future__ import annotations

import dataclasses

from workbench.analysis.compare import HEADLINE_METRICS, display_deltas, metric_deltas
from workbench.display.labels import SWEEP_COLUMNS
from workbench.plots.pareto import OBJECTIVE_LABELS
from workbench.replay import METRIC_SPECS, Metrics, metric_label
from workbench.ui.sweep_tab import METRICS as SWEEP_METRICS


def _metrics(**changed: float) -> Metrics:
    values = {f.name: (True if f.type in (bool, "bool") else 0) for f in dataclasses.fields(Metrics)}
    values.update(window_tokens=1_000, prices_known=True, **changed)
    return Metrics(**values)  # type: ignore[arg-type]


def test_every_metric_has_one_spec_and_every_spec_a_metric():
    """A new ``Metrics`` field without words fails here, and so does a spec for a field that is gone."""
    assert list(METRIC_SPECS) == [f.name for f in dataclasses.fields(Metrics)]


def test_labels_are_distinct_and_short_labels_too():
    """Two metrics never read the same in a table, nor on the app's cards."""
    labels = [s.label for s in METRIC_SPECS.values()]
    shorts = [s.short for s in METRIC_SPECS.values()]
    assert len(set(labels)) == len(labels) and len(set(shorts)) == len(shorts)
    assert all(s.help and s.label == s.label.strip() for s in METRIC_SPECS.values())


def test_the_ab_table_the_sweep_axes_and_the_tune_plot_use_the_spec_words():
    """The four tables that disagreed ("above window" / "above the window") now all say the spec's label."""
    table = display_deltas(metric_deltas(_metrics(overflows=3), _metrics(overflows=1)))
    assert table["metric"].to_list() == [METRIC_SPECS[n].label for n in HEADLINE_METRICS]
    row = table.filter(table["metric"] == "overflows (checks above the window)").row(0, named=True)
    assert (row["A"], row["B"], row["B better"]) == ("3", "1", "yes")
    assert all(n in METRIC_SPECS for n in SWEEP_METRICS)
    assert [metric_label(n) for n in SWEEP_METRICS][:2] == ["tokens per task", "dollars per task"]
    assert SWEEP_COLUMNS["overflows"] == METRIC_SPECS["overflows"].label
    assert SWEEP_COLUMNS["max_peak_ratio"] == "max peak / window"
    assert OBJECTIVE_LABELS == {"tokens": "tokens per task", "dollars": "dollars per task"}
    assert metric_label("retention") == "retention"  # a frame column that is no metric keeps its name


def test_which_way_is_better_comes_from_the_spec():
    """A smaller largest briefing is neither better nor worse; fewer overflows is better."""
    table = metric_deltas(_metrics(max_briefing_chars=900, overflows=2), _metrics(max_briefing_chars=400))
    better = dict(zip(table["name"].to_list(), table["better"].to_list(), strict=True))
    assert better["max_briefing_chars"] is None and better["overflows"] is True
    shown = display_deltas(table)
    assert shown.filter(shown["metric"] == "largest briefing (chars)")["B better"].item() == "neither"
