"""The Sweep tab's grid (issue 21 item 7): a click on a cell loads it, the form keeps describing the heatmap on
screen afterwards, and on a real agent log the default axes are knobs its strategy reads, over ranges where the
replay changes. The real click is in tests/test_browser.py; here the click's mapping and the rest, with AppTest."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import need_shared, shared_dir
from test_app import app, no_errors, widget

from workbench.analysis.binding import default_axes, live_range
from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.history.readers import load_history
from workbench.knobs import Knobs
from workbench.plots import cell_key
from workbench.replay import simulate
from workbench.ui import state as ui_state
from workbench.ui.sweep_tab import clicked_cell

FORM = ("sweep_x", "sweep_y", "sweep_x_from", "sweep_x_to", "sweep_x_steps", "sweep_y_from", "sweep_y_to",
        "sweep_y_steps")
REAL_LOG = "claude_code__13_340918e71b_0.jsonl"  # Claude Code 2.1.20: summarize, trigger = window − reserve


def _form(at) -> dict[str, object]:
    return {key: widget(at, key).value for key in FORM}


def test_after_loading_a_cell_the_form_still_describes_the_heatmap():
    """Loading a cell moves the sidebar's knobs, and with them the ranges where the knobs matter; the form keeps
    the knobs, ranges and steps the heatmap on screen was swept over (its button still counts its replays)."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    widget(at, "sweep_x_steps").set_value(3).run()
    widget(at, "sweep_y_steps").set_value(3).run()
    at.button(key="sweep_go").click().run()
    no_errors(at)
    before = _form(at)
    result = at.session_state["sweep_result"]
    cells = result["frame"].select(result["x"], result["y"]).unique(maintain_order=True).rows()
    widget(at, "sweep_cell").set_value(len(cells) - 1).run()
    at.button(key="sweep_load").click().run()
    no_errors(at)
    assert at.session_state["knob_trigger_ratio"] == cells[-1][0]  # the sidebar took the cell (its group is shut)
    assert _form(at) == before
    assert at.button(key="sweep_go").label == "Run sweep (9 replays)"
    # without the heatmap the form follows the sidebar's knobs again
    run = simulate(load_history(at.session_state[ui_state.HISTORY]),
                   Knobs(context_window_tokens=20_000, trigger_ratio=cells[-1][0], kept_budget_ratio=cells[-1][1]))
    assert (before["sweep_x_from"], before["sweep_x_to"]) != live_range(run, "trigger_ratio") or \
        (before["sweep_y_from"], before["sweep_y_to"]) != live_range(run, "kept_budget_ratio")


def test_opening_another_history_moves_the_form_to_its_axes_and_the_heatmap_says_what_it_shows():
    """With a heatmap on screen, opening another history in the sidebar: the form follows that history's default
    axes and ranges (and the histories to sweep follow it), and the heatmap, still the old sweep's, says so."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    widget(at, "sweep_x_steps").set_value(2).run()
    widget(at, "sweep_y_steps").set_value(2).run()
    at.button(key="sweep_go").click().run()
    no_errors(at)
    swept = at.session_state["sweep_result"]
    other = "sample_histories/tool_heavy.jsonl"
    at.selectbox(key=ui_state.HISTORY).set_value(other).run()
    no_errors(at)
    run = simulate(load_history(other), Knobs(context_window_tokens=20_000))
    x, y = default_axes(run)
    assert (widget(at, "sweep_x").value, widget(at, "sweep_y").value) == (x, y)
    assert (widget(at, "sweep_x_from").value, widget(at, "sweep_x_to").value) == live_range(run, x)
    assert (widget(at, "sweep_y_from").value, widget(at, "sweep_y_to").value) == live_range(run, y)
    assert widget(at, "sweep_histories").value == [other]
    assert at.session_state["sweep_result"] is swept  # the heatmap stays, and says which sweep it is
    assert any("sweep run while" in i.value and "short.jsonl" in i.value for i in at.info)


@pytest.mark.parametrize(("briefer", "lookups"), [("simulated", 1), ("extractive", 2)])
def test_the_sweep_tab_takes_the_pages_replay(monkeypatch, briefer, lookups):
    """With the Sweep tab open a run replays the sidebar's config once: the sweep form's ranges and the tune panel's
    read the page's replay; with the extractive briefer in the sidebar, once more for the simulated briefer's."""
    from workbench.ui import runs

    seen: list[str] = []
    real = runs.replay

    def counting(history_key, knobs, briefer_name, history):
        seen.append(briefer_name)
        return real(history_key, knobs, briefer_name, history)

    monkeypatch.setattr(runs, "replay", counting)
    at = app(tab="Sweep", knob_context_window_tokens=20_000, briefer=briefer)
    no_errors(at)
    first = len(seen)
    widget(at, "sweep_x_steps").set_value(3).run()
    no_errors(at)
    assert (first, len(seen) - first) == (lookups, lookups)
    assert sorted(set(seen)) == sorted({briefer, "simulated"})
    assert widget(at, "tune_space").value  # the tune panel was drawn, its ranges from the same replay


def test_a_click_reports_the_cell_under_it():
    """The heatmap's invisible cell markers report their category strings; they map back to the grid's cells."""
    cells = [(0.2, 0.05), (0.35, 0.05), (0.2, 0.1), (0.35, 0.1)]
    assert clicked_cell({"x": cell_key(0.35), "y": cell_key(0.1)}, cells) == 3
    assert clicked_cell({"x": cell_key(0.2), "y": cell_key(0.05)}, cells) == 0
    assert clicked_cell({"x": "0.5", "y": "0.1"}, cells) is None


def _real_run():
    path = need_shared(shared_dir() / "real_sessions" / REAL_LOG)
    history = load_history(path)
    knobs = agent_settings(history).knobs
    return path, history, knobs, simulate(history, knobs)


def test_on_a_real_log_the_default_axes_are_read_by_its_strategy_and_change_the_replay():
    """Claude Code's summarize reads no kept fraction and its trigger is window − reserve (no ratio): the default
    axes are the reserve and the size model's briefing floor (its target only caps it), and each end of each default range gives another replay."""
    _, history, knobs, run = _real_run()
    assert knobs.strategy == "summarize" and run.limits is not None
    x, y = default_axes(run)
    assert (x, y) == ("trigger_reserve_tokens", "sim_min_chars")
    assert not {x, y} & set(run.limits.unused)
    for name in (x, y):
        lo, hi = live_range(run, name)
        ends = [simulate(history, dataclasses.replace(knobs, **{name: type(getattr(knobs, name))(v)})).metrics
                for v in (lo, hi)]
        assert ends[0].tokens_per_task != ends[1].tokens_per_task, (name, lo, hi)


def test_the_sweep_tab_opens_a_real_log_on_those_axes():
    path, _, _, run = _real_run()
    at = app(tab="Sweep", history=None, **{ui_state.PENDING_HISTORY: (path.name, path.read_bytes())})
    no_errors(at)
    assert (widget(at, "sweep_x").value, widget(at, "sweep_y").value) == default_axes(run)
    assert (widget(at, "sweep_x_from").value, widget(at, "sweep_x_to").value) == live_range(run, default_axes(run)[0])


# -- auto-tune on the long sample (issue 21 item 6) ----------------------------------------------------------------


@pytest.mark.slow
def test_auto_tune_on_the_long_sample_recommends_no_degenerate_config(long_history):
    """The app's defaults on the long sample: the winner compacts at most twice as often as the sidebar's config
    (122 compactions at a 0.096 trigger before, against 18), keeps the retention floor, names the briefer that scored
    it beside the sidebar's, and a wider range is offered only where one step past the edge a config meets the
    constraints for less."""
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.explore.tune import Constraints, check_config, compaction_limit, retention_floor

    at = app(tab="Sweep", history="sample_histories/long.jsonl")
    at.button(key="tune_go").click().run()
    no_errors(at)
    found = at.session_state["tune_result"]
    result, base = found["result"], found["base"]
    history = long_history
    scored = check_config(base, [history], Constraints(), briefer=ExtractiveBriefer())
    limit = compaction_limit(int(scored["max_compressions"]))
    assert limit is not None and result.constraints.max_compressions == limit
    assert result.constraints.min_retention == retention_floor(scored["retention"])
    row = result.best_row
    assert row is not None and row["max_compressions"] <= limit and row["retention"] >= result.constraints.min_retention
    fresh = simulate(history, result.best, ExtractiveBriefer()).metrics
    assert fresh.compressions <= limit and fresh.overflows == 0
    for edge in result.edges():  # each suggestion: one step past the edge, a feasible config that costs less
        better = [p for p in result.beyond[edge.knob] if p["feasible"] and p["objective"] < row["objective"]]
        assert better, edge.describe()
    shown = " ".join(m.value for m in at.markdown)
    assert "scored by the extractive briefer, not the simulated one the sidebar runs" in shown
    winner_cards = list(at.metric)[-6:]
    assert [m.label for m in winner_cards][2] == "fact retention"
    assert all(len(m.label) <= 16 and len(m.value) <= 7 for m in winner_cards)  # they fit a third of the column
