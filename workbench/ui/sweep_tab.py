"""The Sweep tab: a grid of two knobs over chosen histories, a heatmap of one metric, click a cell to load it;
then auto-tune (``workbench.explore.tune``) over the same histories: the winner, each history, its YAML.

Default ranges are where the knob changes the output (``workbench.analysis.binding.live_range``), not
fixed constants, and follow the sidebar until the user types a range of their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import streamlit as st

from workbench import plots
from workbench.display import labels
from workbench.display.untrusted import hover, literal, literals
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import KNOB_SPECS, Knobs
from workbench.replay import Run, metric_label
from workbench.ui import runs, tune_panel
from workbench.ui import state as ui_state
from workbench.ui.charts import show
from workbench.ui.sweep_shared import _history_table, numeric_knobs

RESULT = "sweep_result"  # {"frame", "x", "y", "opened": the sidebar's history when it ran}
MEAN = "mean over the histories"
METRICS = (  # the heatmap's choices; their words are METRIC_SPECS'
    "tokens_per_task", "dollars_per_task", "dollars_per_task_cached", "peak_ratio", "overflows", "compressions",
    "thrash_events", "failed_compressions", "mean_context_tokens", "max_briefing_chars",
)


def axis_values(name: str, start: float, stop: float, steps: int) -> list[Any]:
    """``steps`` evenly spaced values of a knob (whole numbers for int knobs, duplicates dropped)."""
    raw = np.linspace(start, stop, max(1, steps))
    t = {f.name: f.type for f in dataclasses.fields(Knobs)}[name]
    if (t if isinstance(t, str) else t.__name__) == "int":
        return list(dict.fromkeys(int(round(v)) for v in raw))
    return list(dict.fromkeys(float(f"{v:.4g}") for v in raw))


def _bounds(name: str) -> tuple[float, float]:
    """The knob's [low, high]; ``numeric_knobs`` offers only knobs that have both."""
    spec = KNOB_SPECS[name]
    if spec.low is None or spec.high is None:
        raise ValueError(f"{name} has no range to sweep over")
    return float(spec.low), float(spec.high)


def default_range(run: Any, name: str) -> tuple[float, float]:
    """Where ``name`` changes this run (the engine's live range), inside the knob's range."""
    from workbench.analysis.binding import live_range

    return live_range(run, name)


def _axis(label: str, axis: str, default: str, run: Any, *, frozen: bool) -> tuple[str, list[Any]]:
    """One axis of the form: its knob and range. It follows the run (the knob its strategy reads, the range where
    the knob changes it) until the user picks or types their own, and stays put while a heatmap is on screen
    (``frozen``), so the form keeps describing it after a cell is loaded into the sidebar."""
    names = numeric_knobs()
    auto_knob = st.session_state.get(f"sweep_{axis}_default")
    if not frozen and st.session_state.get(f"sweep_{axis}") in (None, auto_knob) and default in names:
        st.session_state[f"sweep_{axis}"] = default  # the user has not picked a knob: follow the strategy's
        st.session_state[f"sweep_{axis}_default"] = default
    name = st.selectbox(label, names, key=f"sweep_{axis}", format_func=labels.knob_title)
    auto = st.session_state.get(f"sweep_{axis}_auto")
    typed = (st.session_state.get(f"sweep_{axis}_from"), st.session_state.get(f"sweep_{axis}_to"))
    # A new knob, or a range the user never edited: follow where the knob matters under the sidebar's knobs.
    if st.session_state.get(f"sweep_{axis}_for") != name or (typed == auto and not frozen):
        lo, hi = default_range(run, name)
        st.session_state[f"sweep_{axis}_from"], st.session_state[f"sweep_{axis}_to"] = lo, hi
        st.session_state[f"sweep_{axis}_auto"] = (lo, hi)
        st.session_state[f"sweep_{axis}_for"] = name
    st.session_state.setdefault(f"sweep_{axis}_steps", 5)
    c1, c2, c3 = st.columns(3)
    low, high = _bounds(name)
    start = c1.number_input("from", low, high, key=f"sweep_{axis}_from", format="%g")
    stop = c2.number_input("to", low, high, key=f"sweep_{axis}_to", format="%g")
    steps = c3.number_input("steps", 1, 25, key=f"sweep_{axis}_steps")
    return name, axis_values(name, start, stop, int(steps))


def _load_cell(knobs: Knobs) -> None:
    ui_state.apply_knobs(st.session_state, knobs)
    ui_state.flash(st.session_state, "success", "Loaded the chosen sweep cell into the sidebar.")


def _cells(frame: pl.DataFrame, x: str, y: str) -> list[tuple[Any, Any]]:
    return frame.select(x, y).unique(maintain_order=True).rows()


def clicked_cell(point: dict[str, Any], cells: list[tuple[Any, Any]]) -> int | None:
    """The index of the cell a heatmap click reports (its marker's x and y are the cells' ``cell_key`` strings)."""
    px, py = str(point.get("x")), str(point.get("y"))
    return next((i for i, (a, b) in enumerate(cells) if plots.cell_key(a) == px and plots.cell_key(b) == py), None)


def _heatmap_clicked() -> None:
    """A click on a heatmap cell (before the rerun, so the sidebar's widgets may still change): pick that cell in
    the box below and load it into the sidebar, as the cell's tooltip says."""
    from workbench.explore.sweep import knobs_of_row

    result = st.session_state.get(RESULT)
    event = st.session_state.get("sweep_heatmap") or {}
    points = list((event.get("selection") or {}).get("points") or [])
    if result is None or not points:
        return
    frame, rx, ry = result["frame"], result["x"], result["y"]
    cells = _cells(frame, rx, ry)
    hit = clicked_cell(points[0], cells)
    if hit is None:
        return
    st.session_state["sweep_cell"] = hit
    a, b = cells[hit]
    row = frame.filter((frame[rx] == a) & (frame[ry] == b)).row(0, named=True)
    ui_state.apply_knobs(st.session_state, knobs_of_row(row))
    ui_state.flash(st.session_state, "success", f"Loaded the clicked cell ({rx} = {plots.tick(a)}, {ry} = "
                   f"{plots.tick(b)}) into the sidebar.")


def render(current: str, history: History, knobs: Knobs, histories: dict[str, Callable[[], History]], *,
           simulated: Run | None = None) -> None:
    """``histories``: picker label → loader, for every history the user may add to the sweep. ``simulated``: the
    page's replay of ``history`` under ``knobs`` when it is the simulated briefer's, which the ranges here and in the
    tune panel read; without it the cached one is looked up, once (a lookup hashes the knobs: ~3 ms in AppTest)."""
    run = simulated if simulated is not None else runs.replay(history.digest, knobs, "simulated", history)
    st.markdown("Replay every combination of two knobs (the others as in the sidebar) over the chosen "
                "histories. The ranges start where each knob changes this history's replay; type your own "
                "to override them.")
    from workbench.analysis.binding import default_axes

    dx, dy = default_axes(run)
    # A heatmap of a sweep run with this history open is on screen: the form keeps describing it. Once another history
    # is opened, the form follows that one's default axes, and the heatmap says what it shows.
    result = st.session_state.get(RESULT)
    frozen = result is not None and result.get("opened", current) == current
    c1, c2 = st.columns(2)
    with c1:
        x, xs = _axis("x knob", "x", dx, run, frozen=frozen)
    with c2:
        y, ys = _axis("y knob", "y", dy, run, frozen=frozen)
    # The histories follow the opened one until the user picks their own.
    if st.session_state.get("sweep_histories") in (None, st.session_state.get("sweep_histories_auto")):
        st.session_state["sweep_histories"] = st.session_state["sweep_histories_auto"] = [current]
    chosen = st.multiselect("histories", list(histories), key="sweep_histories")
    if x == y:
        st.warning("Pick two different knobs.")
    else:
        _grid(x, xs, y, ys, knobs, chosen, histories, current)
    st.divider()
    tune_panel.render(current, history, knobs, chosen or [current], histories, simulated=run)


def _grid(x: str, xs: list[Any], y: str, ys: list[Any], knobs: Knobs, chosen: list[str],
          histories: dict[str, Callable[[], History]], current: str) -> None:
    """The sweep button, its heatmap (mean or one history), the cell loader and the cell's histories; ``current`` is
    the history open in the sidebar."""
    from workbench.explore.sweep import knob_grid, sweep

    total = len(xs) * len(ys) * len(chosen)
    if st.button(f"Run sweep ({counted(total, 'replay')})", type="primary", key="sweep_go", disabled=not chosen):
        try:
            grid = knob_grid({x: xs, y: ys}, base=knobs)
        except ValueError as exc:
            st.error(literal(exc))
            return
        bar = st.progress(0.0, text="loading histories…")
        loaded = [histories[label]() for label in chosen]

        def progress(done: int, all_runs: int) -> None:
            bar.progress(done / max(1, all_runs), text=f"{done:,} of {all_runs:,} replays")

        frame = sweep(loaded, grid, workers=1, chunk_size=max(1, len(grid) // 40), progress=progress)
        bar.empty()
        st.session_state[RESULT] = {"frame": frame, "x": x, "y": y, "opened": current}
    result = st.session_state.get(RESULT)
    if result is None:
        return
    frame, rx, ry = result["frame"], result["x"], result["y"]
    opened = result.get("opened", current)
    if opened != current:  # the form above follows the history opened since: say what this heatmap is
        swept = sorted(frame["history"].unique().to_list())
        st.info(f"This heatmap is the sweep run while {literal(opened)} was open: {labels.knob_title(rx)} × "
                f"{labels.knob_title(ry)} over {literals(swept)}. The form above follows {literal(current)}: "
                "run the sweep again to see it on these axes.")
    st.session_state.setdefault("sweep_metric", "tokens_per_task")
    names = sorted(frame["history"].unique().to_list())
    m1, m2 = st.columns(2)
    metric = m1.selectbox("metric", [m for m in METRICS if m in frame.columns], key="sweep_metric",
                          format_func=metric_label)
    if metric is None:  # no metric column in the frame: nothing to draw
        return
    if st.session_state.get("sweep_over") not in [MEAN, *names]:
        st.session_state["sweep_over"] = MEAN
    over = m2.selectbox("show", [MEAN, *names], key="sweep_over", disabled=len(names) < 2,
                        help="The mean over histories hides those that never compress; look at each one too.")
    which = None if over == MEAN else over
    idle = _idle_histories(frame)
    if idle and len(names) > 1:
        st.info(f"{len(idle)} of {counted(len(names), 'history', 'histories')} never compress in any cell ({literals(idle)}): "
                "their cost is the same everywhere, so they only flatten the mean. Pick a history above.")
    fig = plots.sweep_figure(frame, rx, ry, metric, history=which, metric_label=metric_label(metric),
                             title=f"{metric_label(metric)} ({hover(over)})")  # a history's name: as written
    show(fig, "sweep_heatmap", on_select=_heatmap_clicked, selection_mode="points")
    cells = _cells(frame, rx, ry)
    cell_names = [f"{rx} = {plots.tick(a)}, {ry} = {plots.tick(b)}" for a, b in cells]
    if st.session_state.get("sweep_cell") not in range(len(cells)):
        st.session_state["sweep_cell"] = 0
    cell = st.selectbox("cell (or click one in the heatmap)", range(len(cells)), key="sweep_cell",
                        format_func=lambda i: cell_names[i])
    from workbench.explore.sweep import knobs_of_row
    from workbench.explore.tune import history_rows

    a, b = cells[cell]
    rows = frame.filter((frame[rx] == a) & (frame[ry] == b))
    chosen_knobs = knobs_of_row(rows.row(0, named=True))
    st.button("Load this cell into the sidebar", key="sweep_load", on_click=_load_cell, args=(chosen_knobs,),
              type="primary")
    st.caption("This cell on each history")
    _history_table(history_rows(rows), "sweep_cell_histories")


def _idle_histories(frame: pl.DataFrame) -> list[str]:
    """Histories with no compression in any row of the frame."""
    most = frame.group_by("history").agg(pl.col("compressions").max())
    return sorted(most.filter(pl.col("compressions") == 0)["history"].to_list())

