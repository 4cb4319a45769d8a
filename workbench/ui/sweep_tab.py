"""The Sweep tab: a grid of two knobs over chosen histories, a heatmap of one metric, click a cell to load it;
then auto-tune (``workbench.explore.tune``) over the same histories: the winner, its Pareto front, its YAML.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from workbench import plots
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs
from workbench.ui import state as ui_state
from workbench.ui.charts import show

if TYPE_CHECKING:
    from workbench.explore.tune import Constraints

RESULT = "sweep_result"  # {"frame", "x", "y", "values": {axis: {label: value}}}
TUNE = "tune_result"  # {"result": TuneResult, "current": the sidebar's score, "base": Knobs, "labels": [str]}
# The engine's default space and a small grid: a tune of the long sample takes a few seconds in-process.
TUNE_POINTS, TUNE_ROUNDS = 3, 1
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


def _bounds(name: str) -> tuple[float, float]:
    """The knob's [low, high]; ``numeric_knobs`` offers only knobs that have both."""
    spec = KNOB_SPECS[name]
    if spec.low is None or spec.high is None:
        raise ValueError(f"{name} has no range to sweep over")
    return float(spec.low), float(spec.high)


def _default_range(name: str, current: float) -> tuple[float, float]:
    """Half to one and a half times the current value, inside the knob's range."""
    low, high = _bounds(name)
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
    low, high = _bounds(name)
    start = c1.number_input("from", low, high, key=f"sweep_{axis}_from", format="%g")
    stop = c2.number_input("to", low, high, key=f"sweep_{axis}_to", format="%g")
    steps = c3.number_input("steps", 1, 25, key=f"sweep_{axis}_steps")
    return name, axis_values(name, start, stop, int(steps))


def _load_cell(knobs: Knobs) -> None:
    ui_state.apply_knobs(st.session_state, knobs)
    ui_state.flash(st.session_state, "success", "Loaded the chosen sweep cell into the sidebar.")


def render(current: str, history: History, knobs: Knobs, histories: dict[str, Callable[[], History]]) -> None:
    """``histories``: picker label → loader, for every history the user may add to the sweep."""
    st.markdown("Replay every combination of two knobs (the others as in the sidebar) over the chosen "
                "histories; the heatmap shows the mean of a metric over the histories.")
    c1, c2 = st.columns(2)
    with c1:
        x, xs = _axis("x knob", "x", "trigger_ratio", knobs)
    with c2:
        y, ys = _axis("y knob", "y", "kept_budget_ratio", knobs)
    st.session_state.setdefault("sweep_histories", [current])
    chosen = st.multiselect("histories", list(histories), key="sweep_histories")
    if x == y:
        st.warning("Pick two different knobs.")
    else:
        _grid(x, xs, y, ys, knobs, chosen, histories)
    st.divider()
    _tune(current, history, knobs, chosen or [current], histories)


def _grid(x: str, xs: list[Any], y: str, ys: list[Any], knobs: Knobs, chosen: list[str],
          histories: dict[str, Callable[[], History]]) -> None:
    """The sweep button, its heatmap and the cell loader."""
    from workbench.explore.sweep import knob_grid, sweep

    total = len(xs) * len(ys) * len(chosen)
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
                          format_func=METRICS.__getitem__)
    if metric is None:  # no metric column in the frame: nothing to draw
        return
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
    from workbench.explore.sweep import knobs_of_row

    a, b = cells[cell]
    row = frame.filter((frame[rx] == a) & (frame[ry] == b)).row(0, named=True)
    chosen_knobs = knobs_of_row(row)
    st.button("Load this cell into the sidebar", key="sweep_load", on_click=_load_cell, args=(chosen_knobs,))


# -- auto-tune --------------------------------------------------------------------------------------


def _tune_space(names: list[str], knobs: Knobs) -> dict[str, tuple[float, float]]:
    """The engine's range for its default knobs; half to one and a half times the current value otherwise."""
    from workbench.explore.tune import DEFAULT_SPACE

    out: dict[str, tuple[float, float]] = {}
    for name in names:
        spec = DEFAULT_SPACE.get(name)
        out[name] = spec if isinstance(spec, tuple) else _default_range(name, float(getattr(knobs, name)))
    return out


def _queue_winner(text: str) -> None:
    # The YAML tab's door: consume_pending sets every widget from this text before the sidebar is drawn.
    st.session_state[ui_state.PENDING_YAML] = ("the tuned winner", text)


def _tune_controls(knobs: Knobs) -> tuple[str, Constraints, dict[str, tuple[float, float]], int, int]:
    """Objective, constraints and search widgets; returns (objective, Constraints, space, points, rounds)."""
    from workbench.explore.tune import DEFAULT_SPACE, OBJECTIVES, Constraints

    st.session_state.setdefault("tune_objective", "tokens")
    st.session_state.setdefault("tune_max_overflows", 0)
    st.session_state.setdefault("tune_min_retention", 0.0)
    c1, c2, c3, c4 = st.columns(4)
    objective = c1.selectbox("minimise", list(OBJECTIVES), key="tune_objective",
                             format_func=lambda o: f"{o} per task (mean over histories)")
    max_overflows = c2.number_input("max overflows", 0, 10_000, step=1, key="tune_max_overflows",
                                    help="Checks above the window, summed over the histories.")
    min_retention = c3.slider("min fact retention", 0.0, 1.0, step=0.01, key="tune_min_retention",
                              help="Pooled over every (compression, fact) pair of every history.")
    max_compressions = c4.number_input("max compactions", min_value=0, value=None, step=1, placeholder="no limit",
                                       key="tune_max_compressions", help="Landed compressions of any one history.")
    with st.expander("Search space"):
        st.session_state.setdefault("tune_space", list(DEFAULT_SPACE))
        st.session_state.setdefault("tune_points", TUNE_POINTS)
        st.session_state.setdefault("tune_rounds", TUNE_ROUNDS)
        names = st.multiselect("knobs to search", numeric_knobs(), key="tune_space")
        space = _tune_space(names, knobs)
        st.caption(" · ".join(f"{n} {lo:g}–{hi:g}" for n, (lo, hi) in space.items()))
        s1, s2 = st.columns(2)
        points = s1.number_input("grid points per knob", 2, 9, key="tune_points",
                                 help="The first round's grid; its size is points ^ knobs.")
        rounds = s2.number_input("refinement rounds", 0, 5, key="tune_rounds",
                                 help="Each round tries the neighbours of the 3 best configs at half the step.")
    constraints = Constraints(max_overflows=int(max_overflows), min_retention=float(min_retention),
                              max_compressions=None if max_compressions is None else int(max_compressions))
    return objective, constraints, space, int(points), int(rounds)


def _tune(current: str, history: History, knobs: Knobs, labels: list[str],
          histories: dict[str, Callable[[], History]]) -> None:
    """Auto-tune over ``labels``: the button, then the winner, its changed knobs, YAML and Pareto front."""
    from workbench.explore.tune import check_config, tune

    st.subheader("Auto-tune")
    st.markdown(f"Search the knobs for the cheapest config that meets the constraints on {len(labels)} "
                f"{'history' if len(labels) == 1 else 'histories'} (those chosen above, else the current one); "
                "the other knobs stay as in the sidebar. Offline, with the simulated briefer.")
    objective, constraints, space, points, rounds = _tune_controls(knobs)
    if st.button("Run auto-tune", type="primary", key="tune_go", disabled=not space):
        bar = st.progress(0.0, text="loading histories…")
        loaded = [history if label == current else histories[label]() for label in labels]

        def progress(done: int, all_runs: int) -> None:
            bar.progress(done / max(1, all_runs), text=f"{done:,} of {all_runs:,} replays (at most)")

        try:
            result = tune(loaded, base=knobs, objective=objective, constraints=constraints, space=space,
                          points=points, rounds=rounds, workers=1, progress=progress)
        except ValueError as exc:
            bar.empty()
            st.error(str(exc))
            return
        bar.progress(1.0, text=f"{result.runs.height:,} replays in {result.seconds:.1f} s")
        current_score = check_config(knobs, loaded, constraints, objective=objective)
        st.session_state[TUNE] = {"result": result, "current": current_score, "base": knobs, "labels": labels}
    found = st.session_state.get(TUNE)
    if found is not None:
        _tune_result(found, knobs, labels)


def _tune_result(found: dict[str, Any], knobs: Knobs, labels: list[str]) -> None:
    from workbench.cli.command import changed_knobs

    result, current = found["result"], found["current"]
    trials = result.trials
    tuned_on = len(found["labels"])
    st.caption(f"Tried {trials.height:,} configs × {tuned_on} {'history' if tuned_on == 1 else 'histories'} in "
               f"{result.seconds:.1f} s: {int(trials['feasible'].sum()):,} met the constraints, "
               f"{result.front.height:,} on the Pareto front.")
    if found["labels"] != labels or (found["base"] != knobs and result.best != knobs):
        st.info("The sidebar or the histories changed since this tune ran: run it again to tune for them.")
    if result.best is None:
        row = trials.sort(["violation", "objective"]).row(0, named=True)
        st.warning(f"No config met the constraints. The closest: {row['overflows']:,} overflows, fact retention "
                   f"{row['retention']:.1%}, at most {row['max_compressions']:,} compactions. Loosen the "
                   "constraints or search more knobs.")
    else:
        row = result.best_row or {}
        cards = (  # label, column, scale, value format, delta format, lower is better
            ("tokens / task", "tokens_per_task", 1e-6, "{:,.2f} M", "{:+,.2f} M", True),
            ("dollars / task", "dollars_per_task", 1, "${:,.2f}", "{:+,.2f}", True),
            ("fact retention", "retention", 1, "{:.1%}", "{:+.1%}", False),
            ("overflows", "overflows", 1, "{:,}", "{:+,}", True),
            ("max compactions", "max_compressions", 1, "{:,}", "{:+,}", True),
            ("peak / window", "max_peak_ratio", 1, "{:.0%}", "{:+.0%}", True),
        )
        st.markdown("**Winner** (Δ against the sidebar's knobs when the tune ran)")
        for col, (label, name, scale, fmt, dfmt, lower) in zip(st.columns(len(cards)), cards, strict=True):
            d = (row[name] - current[name]) * scale
            col.metric(label, fmt.format(row[name] * scale), dfmt.format(d) if d else None,
                       delta_color="inverse" if lower else "normal", border=True)
        changed = changed_knobs(result.best, knobs)
        if changed:
            st.dataframe({"knob": list(changed), "sidebar": [str(getattr(knobs, n)) for n in changed],
                          "winner": [str(v) for v in changed.values()]}, hide_index=True, key="tune_changed")
        else:
            st.success("The sidebar holds the winner.")
        text = result.best_yaml()
        c1, c2 = st.columns(2)
        c1.download_button("Download the winner's YAML", text, file_name="tuned_knobs.yaml",
                           mime="application/x-yaml", key="tune_download", on_click="ignore", width="stretch")
        c2.button("Load the winner into the sidebar", key="tune_load", on_click=_queue_winner, args=(text,),
                  disabled=not changed, width="stretch")
    show(plots.pareto_figure(result), "tune_pareto")
