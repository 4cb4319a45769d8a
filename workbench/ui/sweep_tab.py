"""The Sweep tab: a grid of two knobs over chosen histories, a heatmap of one metric, click a cell to load it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from workbench import plots
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs
from workbench.ui import state as ui_state
from workbench.ui.charts import show

RESULT = "sweep_result"  # {"frame", "x", "y", "values": {axis: {label: value}}}
METRICS = {
    "peak_ratio": "peak / window",
    "overflows": "overflows (checks above the window)",
    "tokens_per_task": "tokens per task",
    "dollars_per_task": "dollars per task",
    "dollars_per_task_cached": "dollars per task with prompt caching",
    "compressions": "compressions",
    "failed_compressions": "failed compressions",
    "mean_context_tokens": "mean context (tokens)",
    "max_briefing_chars": "largest briefing (chars)",
}


def numeric_knobs() -> list[str]:
    """Knobs a grid can sweep: numbers with a range."""
    out = []
    for f in dataclasses.fields(Knobs):
        t = f.type if isinstance(f.type, str) else f.type.__name__
        spec = KNOB_SPECS.get(f.name)
        if t in ("int", "float") and spec is not None and spec.low is not None and spec.high is not None:
            out.append(f.name)
    return out


def axis_values(name: str, start: float, stop: float, steps: int) -> list[Any]:
    """``steps`` evenly spaced values of a knob (whole numbers for int knobs, duplicates dropped)."""
    raw = np.linspace(start, stop, max(1, steps))
    t = {f.name: f.type for f in dataclasses.fields(Knobs)}[name]
    if (t if isinstance(t, str) else t.__name__) == "int":
        return list(dict.fromkeys(int(round(v)) for v in raw))
    return list(dict.fromkeys(round(float(v), 4) for v in raw))


def _default_range(name: str, current: float) -> tuple[float, float]:
    """Half to one and a half times the current value, inside the knob's range."""
    spec = KNOB_SPECS[name]
    low, high = float(spec.low), float(spec.high)
    lo, hi = max(low, current * 0.5), min(high, current * 1.5)
    if hi <= lo:  # the knob is at zero or off: start from the bottom of its range
        lo, hi = low, low + (high - low) * (0.5 if high - low <= 2 else 0.01)
    return min(max(float(f"{lo:.2g}"), low), high), min(max(float(f"{hi:.2g}"), low), high)


def _axis(label: str, axis: str, default: str, knobs: Knobs) -> tuple[str, list[Any]]:
    names = numeric_knobs()
    st.session_state.setdefault(f"sweep_{axis}", default if default in names else names[0])
    name = st.selectbox(label, names, key=f"sweep_{axis}")
    lo, hi = _default_range(name, float(getattr(knobs, name)))
    if st.session_state.get(f"sweep_{axis}_for") != name:  # a new knob: reset its range
        st.session_state[f"sweep_{axis}_from"], st.session_state[f"sweep_{axis}_to"] = lo, hi
        st.session_state[f"sweep_{axis}_for"] = name
    st.session_state.setdefault(f"sweep_{axis}_steps", 5)
    c1, c2, c3 = st.columns(3)
    spec = KNOB_SPECS[name]
    start = c1.number_input("from", float(spec.low), float(spec.high), key=f"sweep_{axis}_from", format="%g")
    stop = c2.number_input("to", float(spec.low), float(spec.high), key=f"sweep_{axis}_to", format="%g")
    steps = c3.number_input("steps", 1, 25, key=f"sweep_{axis}_steps")
    return name, axis_values(name, start, stop, int(steps))


def _load_cell(knobs: Knobs) -> None:
    ui_state.apply_knobs(st.session_state, knobs)
    ui_state.flash(st.session_state, "success", "Loaded the chosen sweep cell into the sidebar.")


def render(current: str, history: History, knobs: Knobs, histories: dict[str, Callable[[], History]]) -> None:
    """``histories``: picker label → loader, for every history the user may add to the sweep."""
    from workbench.sweep import knob_grid, sweep

    st.markdown("Replay every combination of two knobs (the others as in the sidebar) over the chosen "
                "histories; the heatmap shows the mean of a metric over the histories.")
    c1, c2 = st.columns(2)
    with c1:
        x, xs = _axis("x knob", "x", "trigger_ratio", knobs)
    with c2:
        y, ys = _axis("y knob", "y", "kept_budget_ratio", knobs)
    st.session_state.setdefault("sweep_histories", [current])
    chosen = st.multiselect("histories", list(histories), key="sweep_histories")
    total = len(xs) * len(ys) * len(chosen)
    if x == y:
        st.warning("Pick two different knobs.")
        return
    if st.button(f"Run sweep ({total:,} replays)", type="primary", key="sweep_go", disabled=not chosen):
        try:
            grid = knob_grid({x: xs, y: ys}, base=knobs)
        except ValueError as exc:
            st.error(str(exc))
            return
        bar = st.progress(0.0, text="loading histories…")
        loaded = [histories[label]() for label in chosen]

        def progress(done: int, all_runs: int) -> None:
            bar.progress(done / max(1, all_runs), text=f"{done:,} of {all_runs:,} replays")

        frame = sweep(loaded, grid, workers=1, chunk_size=max(1, len(grid) // 40), progress=progress)
        st.session_state[RESULT] = {"frame": frame, "x": x, "y": y}
    result = st.session_state.get(RESULT)
    if result is None:
        return
    frame, rx, ry = result["frame"], result["x"], result["y"]
    st.session_state.setdefault("sweep_metric", "peak_ratio")
    metric = st.selectbox("metric", [m for m in METRICS if m in frame.columns], key="sweep_metric",
                          format_func=METRICS.get)
    fig = plots.sweep_figure(frame, rx, ry, metric, title=f"{METRICS[metric]} over {rx} × {ry}")
    event = show(fig, "sweep_heatmap", on_select="rerun", selection_mode="points")
    cells = frame.select(rx, ry).unique(maintain_order=True).rows()
    names = [f"{rx} = {a:g}, {ry} = {b:g}" for a, b in cells]
    points = list(getattr(getattr(event, "selection", None), "points", []) or [])
    if points:
        px, py = str(points[0].get("x")), str(points[0].get("y"))
        hit = next((i for i, (a, b) in enumerate(cells) if str(a) == px and str(b) == py), None)
        if hit is not None and points != st.session_state.get("sweep_points"):
            st.session_state["sweep_cell"] = hit
        st.session_state["sweep_points"] = points
    if st.session_state.get("sweep_cell") not in range(len(cells)):
        st.session_state["sweep_cell"] = 0
    cell = st.selectbox("cell (or click one in the heatmap)", range(len(cells)), key="sweep_cell",
                        format_func=lambda i: names[i])
    from workbench.sweep import knobs_of_row

    a, b = cells[cell]
    row = frame.filter((frame[rx] == a) & (frame[ry] == b)).row(0, named=True)
    chosen_knobs = knobs_of_row(row)
    st.button("Load this cell into the sidebar", key="sweep_load", on_click=_load_cell, args=(chosen_knobs,))
