"""Figure builders: each chart carries the run's numbers, and none of them needs streamlit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from conftest import REPO
from scripted import uniform_history

from workbench import plots
from workbench.analysis.costs import cost_frame
from workbench.analysis.inspector import message_previews
from workbench.knobs import Knobs
from workbench.replay import simulate

K = Knobs(context_window_tokens=32_000, check_point="message")


@pytest.fixture(scope="module")
def history():
    return uniform_history(80)


@pytest.fixture(scope="module")
def run(history):
    return simulate(history, K)


def _trace(fig, name):
    found = [t for t in fig.data if t.name == name or (t.name or "").startswith(name + " (")]
    assert found, f"no trace {name!r} in {[t.name for t in fig.data]}"
    return found[0]


def test_context_figure_stacks_the_context_and_marks_every_compression(run, history):
    """Stacked briefing + verbatim equal the total; one start and one landing marker per compression."""
    fig = plots.context_figure(run, previews=message_previews(history))
    brief = np.asarray(_trace(fig, "briefing").y)
    verb = np.asarray(_trace(fig, "verbatim messages").y)
    assert (brief + verb == run.timeline["total"].to_numpy()).all()
    assert list(_trace(fig, "compression started").x) == [c.index_started for c in run.compressions]
    assert len(_trace(fig, "compression landed").x) == run.metrics.compressions
    assert _trace(fig, "no compaction").opacity < 1
    assert any(s.y0 == K.context_window_tokens for s in fig.layout.shapes)  # the window line
    assert fig.layout.xaxis.title.text == "message index" and fig.layout.yaxis.title.text == "context (tokens)"


def test_context_hover_names_the_message(run, history):
    """Hover data carry the check's message index, role and the start of its text."""
    fig = plots.context_figure(run, previews=message_previews(history))
    hover = next(t for t in fig.data if t.customdata is not None and t.name == "context")
    index, role, text = hover.customdata[3]
    assert int(index) == run.timeline["index"][3] and role == history.messages[int(index)].role
    assert text.startswith("aaaa")


def test_overflow_and_failed_compressions_get_their_markers(history):
    """A disabled trigger overflows a small window: one star per overflow run."""
    run = simulate(history, Knobs(context_window_tokens=32_000, trigger_ratio=-1.0))
    fig = plots.context_figure(run)
    assert len(_trace(fig, "overflow").x) == run.metrics.overflow_events == 1
    assert "compression started" not in [t.name for t in fig.data]


def test_compare_overlays_a_second_run(run, history):
    """With a pinned A, its context is drawn dashed on the same axes."""
    a = simulate(history, K.replace(trigger_ratio=0.5))
    fig = plots.context_figure(run, compare=a)
    assert list(_trace(fig, "A: context").y) == a.timeline["total"].to_list()


def test_briefing_figure_shows_each_briefing_against_the_target_and_bands(run):
    """One bar per landed briefing, a target line and three budget-hint bands."""
    fig = plots.briefing_figure(run)
    bars = [t for t in fig.data if t.type == "bar"][0]
    assert list(bars.y) == [c.briefing_chars for c in run.compressions]
    assert list(bars.x) == [c.chain_index for c in run.compressions]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert [(r.y0, r.y1) for r in rects][:2] == [(0, 0.6 * 30_000), (0.6 * 30_000, 0.85 * 30_000)]
    assert any(s.type == "line" and s.y0 == 30_000 for s in fig.layout.shapes)


def test_briefing_figure_without_compressions_says_so(history):
    fig = plots.briefing_figure(simulate(uniform_history(5), K))
    assert any("no compression" in a.text for a in fig.layout.annotations)


def test_cost_figure_ends_at_the_run_totals(run, history):
    """The cumulative token and dollar lines end at tokens and dollars per task."""
    frame = cost_frame(run, history)
    fig = plots.cost_figure(frame)
    tokens, dollars = [t for t in fig.data if t.name == "this run"]
    assert tokens.y[-1] == run.metrics.tokens_per_task
    assert dollars.y[-1] == pytest.approx(run.metrics.dollars_per_task)
    assert fig.layout.yaxis2.title.text == "US dollars"


def test_cost_figure_keeps_a_huge_baseline_off_the_chart():
    """When no compaction costs far more, the y range fits the run and the title gives the baseline's total."""
    history = uniform_history(300)
    run = simulate(history, K)
    frame = cost_frame(run, history)
    fig = plots.cost_figure(frame)
    assert fig.layout.yaxis.range[1] < frame["baseline_cum_tokens"][-1]
    assert "off the chart" in fig.layout.annotations[0].text


def test_sweep_figure_averages_over_histories():
    """Cells are the mean of the metric over the other columns, laid out y by x."""
    frame = pl.DataFrame({"a": [1, 1, 2, 2, 1], "b": [10, 20, 10, 20, 10], "m": [1.0, 2.0, 3.0, 4.0, 3.0]})
    xs, ys, z = plots.pivot_metric(frame, "a", "b", "m")
    assert (xs, ys) == ([1, 2], [10, 20])
    assert z.tolist() == [[2.0, 3.0], [2.0, 4.0]]
    fig = plots.sweep_figure(frame, "a", "b", "m")
    assert fig.data[0].type == "heatmap" and fig.layout.xaxis.title.text == "a"


@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def tuned():
    """A small tune of the short sample: high triggers overflow, small kept budgets lose facts, low triggers
    compact too often; so part of the Pareto front misses the constraints."""
    from workbench.explore.tune import Constraints, tune
    from workbench.history.readers import load_history

    history = load_history(REPO / "sample_histories" / "short.jsonl")
    constraints = Constraints(min_retention=0.2, max_compressions=12)
    space = {"trigger_ratio": (0.3, 0.95), "kept_budget_ratio": (0.05, 0.4)}
    return tune([history], base=Knobs(context_window_tokens=20_000), constraints=constraints, space=space, points=3,
                rounds=1, workers=1)


def test_pareto_figure_draws_every_config_the_front_and_the_winner(tuned):
    """Every config tried is one point; the front is coloured by overflows; the winner is a star at its score."""
    fig = plots.pareto_figure(tuned)
    assert {"misses the constraints", "meets the constraints"} <= {t.name for t in fig.data}
    assert sum(len(t.x) for t in fig.data if t.mode == "markers" and t.name != "winner") == tuned.trials.height
    front = _trace(fig, "Pareto front")
    on_front = tuned.front.filter(pl.col("feasible"))
    assert list(front.x) == on_front["objective"].to_list()
    assert list(front.y) == on_front["retention"].to_list()
    assert list(front.marker.color) == on_front["overflows"].to_list()
    missing = _trace(fig, "Pareto front, misses the constraints")  # hollow: on the front, but not allowed
    assert missing.marker.symbol == "circle-open"
    assert len(front.x) + len(missing.x) == tuned.front.height
    winner = _trace(fig, "winner")
    assert (winner.x[0], winner.y[0]) == (tuned.best_row["objective"], tuned.best_row["retention"])
    assert any(s.type == "line" and s.y0 == 0.2 for s in fig.layout.shapes)  # the retention floor
    assert fig.layout.xaxis.title.text == "mean tokens per task"
    assert "trigger_ratio = %{customdata[0]}" in front.hovertemplate


def test_pareto_figure_without_a_winner_says_so(tuned):
    """An infeasible tune still shows what was tried, with a note instead of a star."""
    import dataclasses

    nothing = dataclasses.replace(tuned, best=None, best_row=None,
                                  trials=tuned.trials.with_columns(feasible=pl.lit(False)))
    fig = plots.pareto_figure(nothing)
    assert "winner" not in [t.name for t in fig.data]
    assert any("no config met" in a.text for a in fig.layout.annotations)


@pytest.mark.slow
def test_plots_import_no_streamlit():
    """plots is pure: importing it must not pull in streamlit (notebooks use it too)."""
    code = "import sys, workbench.plots, workbench.analysis.costs, workbench.analysis.inspector, workbench.analysis.compare; " \
           "print('streamlit' in sys.modules, 'litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


@pytest.mark.slow
def test_the_charts_tab_figures_build_no_plotly_template():
    """The three charts of the Charts tab are built without a ``go.layout.Template`` (validating one took 0.2-0.9 s of
    a cold start here): it is built the first time a ``go`` figure asks for it."""
    code = ("from workbench import plots; from workbench.plots import style; "
            "from workbench.history.readers import load_history; from workbench.replay import simulate; "
            "from workbench.knobs import Knobs; from workbench.analysis.costs import cost_frame; "
            f"h = load_history({str(REPO / 'sample_histories' / 'short.jsonl')!r}); r = simulate(h, Knobs()); "
            "plots.context_spec(r); plots.briefing_spec(r); plots.cost_spec(cost_frame(r, h)); "
            "print(style.template.cache_info().currsize); plots.sweep_figure; plots.pareto_figure; "
            "assert plots.TEMPLATE is style.template(); print(style.template.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "1"]


def test_sweep_heatmap_ticks_are_rounded_and_every_cell_is_clickable():
    """Ticks read 0.0833, not 0.08333333; an invisible marker on each cell centre makes cells selectable."""
    frame = pl.DataFrame({"trigger_ratio": [1 / 12, 1 / 12, 0.5, 0.5], "kept_budget_ratio": [0.1, 40_000.0, 0.1, 40_000.0],
                          "tokens_per_task": [1.0e6, 2.0e6, 3.0e6, 4.0e6]})
    fig = plots.sweep_figure(frame, "trigger_ratio", "kept_budget_ratio", "tokens_per_task")
    assert list(fig.layout.xaxis.ticktext) == ["0.0833", "0.5"] and list(fig.layout.yaxis.ticktext) == ["0.1", "40k"]
    cells = fig.data[1]
    assert cells.type == "scatter" and len(cells.x) == 4 and fig.data[0].hoverinfo == "skip"
    assert {(x, y) for x, y in zip(cells.x, cells.y, strict=True)} == {
        (plots.cell_key(a), plots.cell_key(b)) for a in (1 / 12, 0.5) for b in (0.1, 40_000.0)}
    assert fig.data[0].texttemplate == "%{z:.3s}"  # 2.0M in a cell, not 2,000,000


def test_context_chart_names_the_binding_trigger_term_and_draws_the_others(long_run):
    """With the 100k cap binding at a 200k window, the trigger line says so and 0.65 × window is drawn faint."""
    run = long_run
    names = [t.name for t in plots.context_figure(run).data]
    assert "trigger (hard cap)" in names and "0.65 × window (not binding)" in names and "kept budget" in names
    assert "hard cap binds" not in plots.binding_caption(run) and "= hard cap" in plots.binding_caption(run)
    assert "min kept messages reached first (19)" in plots.binding_caption(run)


def test_the_template_is_plotly_white_trimmed_and_every_figure_is_born_with_it(run, history):
    """Read from plotly's template file (not plotly.io.templates, which builds 30 trace types first), the template
    is still plotly_white's layout with its scatter, bar and heatmap styles; figures start with it, so plotly's
    default template is never applied first."""
    import plotly.io as pio

    full = pio.templates["plotly_white"]
    assert plots.TEMPLATE.layout.to_plotly_json() == full.layout.to_plotly_json()
    assert {k for k, v in plots.TEMPLATE.data.to_plotly_json().items() if v} == {"scatter", "bar", "heatmap"}
    for name in ("scatter", "bar", "heatmap"):
        assert plots.TEMPLATE.data[name] == full.data[name]
    assert plots.style.figure().layout.template == plots.TEMPLATE
    for fig in (plots.context_figure(run), plots.briefing_figure(run), plots.cost_figure(cost_frame(run, history))):
        assert fig.layout.template == plots.TEMPLATE


def test_the_context_spec_is_the_context_figure_as_plotly_sends_it(history):
    """The app draws the context chart from ``context_spec`` (a dict, no plotly.py validation on a slider move): once
    packed as plotly packs a figure's arrays, its JSON is the figure's (key order aside), with a compare run and a log."""
    import json

    import plotly.io as pio
    from _plotly_utils.utils import convert_to_base64

    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.reality import logged_context_frame
    from workbench.history.readers import load_history

    log = load_history(REPO / "sample_histories" / "claude_code.jsonl")
    a, b = simulate(history, K), simulate(history, K.replace(trigger_ratio=0.4))
    cases = [(a, {"previews": message_previews(history), "compare": b}),
             (simulate(log, agent_settings(log).knobs), {"logged": logged_context_frame(log),
                                                         "logged_compactions": (5, 40)})]
    for run, kwargs in cases:
        spec = plots.context_spec(run, **kwargs)
        convert_to_base64(spec["data"])
        sent = json.loads(pio.to_json(spec, validate=False))
        assert sent == json.loads(pio.to_json(plots.context_figure(run, **kwargs), validate=False))
        assert sent["layout"]["shapes"] and sent["data"][0]["x"]["bdata"]


def test_the_cost_spec_is_the_cost_figure_as_plotly_sends_it(run, history):
    """The Charts and A/B tabs draw the cost chart from ``cost_spec`` (no plotly.py on a slider move): the JSON of the
    two-panel figure ``make_subplots`` lays out, with a compare frame, a thinned long frame and an empty one."""
    import json

    import plotly.io as pio
    from _plotly_utils.utils import convert_to_base64
    from plotly.subplots import make_subplots

    frame = cost_frame(run, history)
    other = cost_frame(simulate(history, K.replace(trigger_ratio=0.4)), history)
    long = pl.concat([frame] * (plots.MAX_POINTS // max(frame.height, 1) + 2)).with_columns(
        pl.int_range(pl.len()).cast(frame["index"].dtype).alias("index"))
    for one, kwargs in ((frame, {}), (frame, {"compare": other}), (long, {"compare": long}), (frame.head(0), {})):
        spec = plots.cost_spec(one, **kwargs)
        convert_to_base64(spec["data"])
        sent = json.loads(pio.to_json(spec, validate=False))
        assert sent == json.loads(pio.to_json(plots.cost_figure(one, **kwargs), validate=False))
    # the panels sit where make_subplots puts them
    grid = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.14, subplot_titles=("a", "b"))
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        for prop in ("anchor", "domain", "matches", "showticklabels"):
            assert sent["layout"][axis].get(prop) == grid.layout[axis].to_plotly_json().get(prop), (axis, prop)
    assert [a["y"] for a in sent["layout"]["annotations"]] == [a.y for a in grid.layout.annotations]


def test_the_app_packs_each_spec_as_plotly_does(run, history):
    """``fast_chart.pack`` (what the app applies before sending a spec) gives the JSON plotly's ``convert_to_base64``
    gives, though it does not walk the hover data's lists of strings."""
    import plotly.io as pio
    from _plotly_utils.utils import convert_to_base64

    from workbench.ui.fast_chart import pack

    other = simulate(history, K.replace(trigger_ratio=0.4))
    for build in (lambda: plots.context_spec(run, previews=message_previews(history), compare=other),
                  lambda: plots.briefing_spec(run, compare=other),
                  lambda: plots.cost_spec(cost_frame(run, history), compare=cost_frame(other, history))):
        ours, theirs = build(), build()
        pack(ours["data"])
        convert_to_base64(theirs["data"])
        assert pio.to_json(ours, validate=False) == pio.to_json(theirs, validate=False)


def test_the_briefing_spec_is_the_briefing_figure_as_plotly_sends_it(run, history):
    """The Charts tab draws the briefing chart from ``briefing_spec`` too: the same JSON as ``briefing_figure``, with
    a compare run and with no compression at all (its note)."""
    import json

    import plotly.io as pio
    from _plotly_utils.utils import convert_to_base64

    b = simulate(history, K.replace(trigger_ratio=0.4))
    never = simulate(history, K.replace(trigger_ratio=-1))
    for one, kwargs in ((run, {}), (b, {"compare": run}), (never, {})):
        spec = plots.briefing_spec(one, **kwargs)
        convert_to_base64(spec["data"])
        sent = json.loads(pio.to_json(spec, validate=False))
        assert sent == json.loads(pio.to_json(plots.briefing_figure(one, **kwargs), validate=False))
    assert sent["layout"]["annotations"][0]["text"] == "no compression in this run"
