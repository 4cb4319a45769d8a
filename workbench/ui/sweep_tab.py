"""The Sweep tab: a grid of two knobs over chosen histories, a heatmap of one metric, click a cell to load it;
then auto-tune (``workbench.explore.tune``) over the same histories: the winner, each history, its YAML.

Default ranges are where the knob changes the output (``workbench.analysis.binding.live_range``), not
fixed constants, and follow the sidebar until the user types a range of their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import streamlit as st

from workbench import plots
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs
from workbench.ui import labels, runs
from workbench.ui import state as ui_state
from workbench.ui.charts import show

if TYPE_CHECKING:
    from workbench.explore.tune import Constraints

RESULT = "sweep_result"  # {"frame", "x", "y"}
TUNE = "tune_result"  # {"result": TuneResult, "current": the sidebar's score, "base": Knobs, "labels": [str]}
RANGES = "tune_ranges"  # knob -> (low, high) the user widened; the rest come from the histories
MEAN = "mean over the histories"
# A small grid: a tune of the long sample with the extractive briefer takes about ten seconds in-process.
TUNE_POINTS, TUNE_ROUNDS = 3, 1
TUNE_BRIEFERS = {"extractive": "extractive (writes text: retention counts what the briefing keeps)",
                 "simulated": "simulated (size only: retention counts kept messages only)"}
METRICS = {
    "tokens_per_task": "tokens per task",
    "dollars_per_task": "dollars per task",
    "dollars_per_task_cached": "dollars per task with prompt caching",
    "peak_ratio": "peak / window",
    "overflows": "overflows (checks above the window)",
    "compressions": "compressions",
    "thrash_events": "thrash (compactions right after another)",
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


def _axis(label: str, axis: str, default: str, run: Any) -> tuple[str, list[Any]]:
    names = numeric_knobs()
    st.session_state.setdefault(f"sweep_{axis}", default if default in names else names[0])
    name = st.selectbox(label, names, key=f"sweep_{axis}", format_func=labels.knob_title)
    lo, hi = default_range(run, name)
    auto = st.session_state.get(f"sweep_{axis}_auto")
    typed = (st.session_state.get(f"sweep_{axis}_from"), st.session_state.get(f"sweep_{axis}_to"))
    # A new knob, or a range the user never edited: follow where the knob matters under the sidebar's knobs.
    if st.session_state.get(f"sweep_{axis}_for") != name or typed == auto:
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


def render(current: str, history: History, knobs: Knobs, histories: dict[str, Callable[[], History]]) -> None:
    """``histories``: picker label → loader, for every history the user may add to the sweep."""
    run = runs.replay(history.digest, knobs, "simulated", history)
    st.markdown("Replay every combination of two knobs (the others as in the sidebar) over the chosen "
                "histories. The ranges start where each knob changes this history's replay; type your own "
                "to override them.")
    c1, c2 = st.columns(2)
    with c1:
        x, xs = _axis("x knob", "x", "trigger_ratio", run)
    with c2:
        y, ys = _axis("y knob", "y", "kept_budget_ratio", run)
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
    """The sweep button, its heatmap (mean or one history), the cell loader and the cell's histories."""
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
        bar.empty()
        st.session_state[RESULT] = {"frame": frame, "x": x, "y": y}
    result = st.session_state.get(RESULT)
    if result is None:
        return
    frame, rx, ry = result["frame"], result["x"], result["y"]
    st.session_state.setdefault("sweep_metric", "tokens_per_task")
    names = sorted(frame["history"].unique().to_list())
    m1, m2 = st.columns(2)
    metric = m1.selectbox("metric", [m for m in METRICS if m in frame.columns], key="sweep_metric",
                          format_func=METRICS.__getitem__)
    if metric is None:  # no metric column in the frame: nothing to draw
        return
    if st.session_state.get("sweep_over") not in [MEAN, *names]:
        st.session_state["sweep_over"] = MEAN
    over = m2.selectbox("show", [MEAN, *names], key="sweep_over", disabled=len(names) < 2,
                        help="The mean over histories hides those that never compress; look at each one too.")
    which = None if over == MEAN else over
    idle = _idle_histories(frame)
    if idle and len(names) > 1:
        st.info(f"{len(idle)} of {len(names)} histories never compress in any cell ({', '.join(idle)}): "
                "their cost is the same everywhere, so they only flatten the mean. Pick a history above.")
    fig = plots.sweep_figure(frame, rx, ry, metric, history=which, metric_label=METRICS[metric],
                             title=f"{METRICS[metric]} ({over})")
    event = show(fig, "sweep_heatmap", on_select="rerun", selection_mode="points")
    cells = frame.select(rx, ry).unique(maintain_order=True).rows()
    cell_names = [f"{rx} = {plots.tick(a)}, {ry} = {plots.tick(b)}" for a, b in cells]
    _clicked_cell(event, cells)
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


def _clicked_cell(event: Any, cells: list[tuple[Any, Any]]) -> None:
    """A click on the heatmap's cell markers picks that cell in the box below (a new click wins over the box)."""
    points = list(getattr(getattr(event, "selection", None), "points", []) or [])
    if not points:
        return
    px, py = str(points[0].get("x")), str(points[0].get("y"))
    hit = next((i for i, (a, b) in enumerate(cells) if plots.cell_key(a) == px and plots.cell_key(b) == py), None)
    if hit is not None and points != st.session_state.get("sweep_points"):
        st.session_state["sweep_cell"] = hit
    st.session_state["sweep_points"] = points


def _idle_histories(frame: pl.DataFrame) -> list[str]:
    """Histories with no compression in any row of the frame."""
    most = frame.group_by("history").agg(pl.col("compressions").max())
    return sorted(most.filter(pl.col("compressions") == 0)["history"].to_list())


def _history_table(rows: pl.DataFrame, key: str, *, briefer: str | None = None) -> None:
    """Per-history rows in words: compressions, cost, overflows, retention (naming its briefer)."""
    if not rows.height:
        return
    out = rows.with_columns(pl.when(pl.col("compresses")).then(pl.lit("yes"))
                            .otherwise(pl.lit("no: these knobs do not touch it")).alias("compresses"))
    names = {**labels.SWEEP_COLUMNS, "compresses": "compresses"}
    if briefer is not None and "retention" in out.columns:
        names["retention"] = f"fact retention ({briefer} briefer)"
    if briefer is not None and "sidebar_retention" in out.columns:
        names["sidebar_retention"] = f"sidebar: fact retention ({briefer} briefer)"
    config = {c: st.column_config.NumberColumn(names.get(c, c), format="localized") for c in out.columns
              if c in ("tokens_per_task", "compressions", "overflows", "thrash_events", "facts_checked",
                       "sidebar_tokens_per_task")}
    config["dollars_per_task"] = st.column_config.NumberColumn(names["dollars_per_task"], format="dollar")
    for c in ("peak_ratio", "retention", "sidebar_retention"):
        config[c] = st.column_config.NumberColumn(names.get(c, c), format="percent")
    for c in ("history", "compresses", "briefer"):
        config[c] = st.column_config.TextColumn(names.get(c, c))
    st.dataframe(out, hide_index=True, key=key, column_config=config)


# -- auto-tune --------------------------------------------------------------------------------------


def _tune_space(names: list[str], runs_: list[Any]) -> dict[str, tuple[float, float]]:
    """Where each knob changes the chosen histories (the engine's live ranges), unless the user widened it."""
    from workbench.analysis.binding import live_ranges

    found = live_ranges(runs_, names)
    widened = st.session_state.get(RANGES, {})
    return {n: tuple(widened.get(n, found[n])) for n in names}


def _queue_winner(text: str) -> None:
    # The YAML tab's door: consume_pending sets every widget from this text before the sidebar is drawn.
    st.session_state[ui_state.PENDING_YAML] = ("the tuned winner", text)


def _widen(knob: str, low: float, high: float) -> None:
    st.session_state.setdefault(RANGES, {})[knob] = (low, high)
    st.session_state["tune_again"] = True


def _reset_ranges() -> None:
    st.session_state.pop(RANGES, None)


@dataclasses.dataclass(frozen=True)
class TuneForm:
    """What the auto-tune widgets say; ``min_retention`` None means "the sidebar config's retention less 5 points"."""

    objective: str
    max_overflows: int
    min_retention: float | None
    max_compressions: int | None
    space: dict[str, tuple[float, float]]
    points: int
    rounds: int
    briefer: str

    def constraints(self, base_retention: float) -> Constraints:
        from workbench.explore.tune import Constraints, retention_floor

        floor = retention_floor(base_retention) if self.min_retention is None else self.min_retention
        return Constraints(max_overflows=self.max_overflows, min_retention=floor,
                           max_compressions=self.max_compressions)


def _tune_controls(runs_: list[Any]) -> TuneForm:
    """Objective, constraints, briefer and search widgets."""
    from workbench.explore.tune import DEFAULT_KNOBS, OBJECTIVES

    st.session_state.setdefault("tune_objective", "tokens")
    st.session_state.setdefault("tune_max_overflows", 0)
    st.session_state.setdefault("tune_min_retention", 0.0)
    st.session_state.setdefault("tune_floor_from_base", True)
    st.session_state.setdefault("tune_briefer", "extractive")
    c1, c2, c3, c4 = st.columns(4)
    objective = c1.selectbox("minimise", list(OBJECTIVES), key="tune_objective",
                             format_func=lambda o: f"{o} per task (mean over histories)")
    max_overflows = c2.number_input("max overflows", 0, 10_000, step=1, key="tune_max_overflows",
                                    help="Checks above the window, summed over the histories.")
    from_base = c3.checkbox("retention floor from the sidebar's config", key="tune_floor_from_base",
                            help="The winner keeps at least the sidebar config's fact retention less 5 points, so "
                                 "a cheaper config cannot trade the facts away. Untick to set your own floor.")
    min_retention = c3.slider("min fact retention", 0.0, 1.0, step=0.01, key="tune_min_retention",
                              disabled=from_base, help="Pooled over every (compression, fact) pair of every history.")
    max_compressions = c4.number_input("max compactions", min_value=0, value=None, step=1, placeholder="no limit",
                                       key="tune_max_compressions", help="Landed compressions of any one history.")
    briefer = st.radio("briefer", list(TUNE_BRIEFERS), key="tune_briefer", format_func=TUNE_BRIEFERS.get,
                       horizontal=True, help="Fact retention checks the briefing's text; the size model writes none.")
    with st.expander("Search space"):
        st.session_state.setdefault("tune_space", list(DEFAULT_KNOBS))
        st.session_state.setdefault("tune_points", TUNE_POINTS)
        st.session_state.setdefault("tune_rounds", TUNE_ROUNDS)
        names = st.multiselect("knobs to search", numeric_knobs(), key="tune_space", format_func=labels.knob_title)
        space = _tune_space(names, runs_)
        widened = st.session_state.get(RANGES, {})
        st.caption(" · ".join(f"{n} {lo:g}–{hi:g}{' (widened)' if n in widened else ''}"
                              for n, (lo, hi) in space.items())
                   + " — where each knob changes these histories under the sidebar's knobs")
        if widened:
            st.button("Back to the ranges from the histories", key="tune_reset_ranges", on_click=_reset_ranges)
        s1, s2 = st.columns(2)
        points = s1.number_input("grid points per knob", 2, 9, key="tune_points",
                                 help="The first round's grid; its size is points ^ knobs.")
        rounds = s2.number_input("refinement rounds", 0, 5, key="tune_rounds",
                                 help="Each round tries the neighbours of the 3 best configs at half the step.")
    return TuneForm(objective=str(objective), max_overflows=int(max_overflows),
                    min_retention=None if from_base else float(min_retention),
                    max_compressions=None if max_compressions is None else int(max_compressions),
                    space=space, points=int(points), rounds=int(rounds), briefer=str(briefer))


def _tune(current: str, history: History, knobs: Knobs, labels_: list[str],
          histories: dict[str, Callable[[], History]]) -> None:
    """Auto-tune over ``labels_``: the button, then the winner, its changed knobs, each history, YAML and front."""
    from workbench.explore.tune import Constraints, check_config, tune

    st.subheader("Auto-tune")
    st.markdown(f"Search the knobs for the cheapest config that meets the constraints on {len(labels_)} "
                f"{'history' if len(labels_) == 1 else 'histories'} (those chosen above, else the current one); "
                "the other knobs stay as in the sidebar. Offline.")
    loaded = [history if label == current else histories[label]() for label in labels_]
    form = _tune_controls([runs.replay(h.digest, knobs, "simulated", h) for h in loaded])
    again = st.session_state.pop("tune_again", False)
    if (st.button("Run auto-tune", type="primary", key="tune_go", disabled=not form.space) or again) and form.space:
        briefer = runs.briefer_of(form.briefer)
        bar = st.progress(0.0, text="scoring the sidebar's config…")
        before = check_config(knobs, loaded, Constraints(), objective=form.objective, briefer=briefer)
        constraints = form.constraints(before["retention"])

        def progress(done: int, all_runs: int) -> None:
            bar.progress(done / max(1, all_runs), text=f"{done:,} of {all_runs:,} replays (at most)")

        try:
            result = tune(loaded, base=knobs, objective=form.objective, constraints=constraints, space=form.space,
                          points=form.points, rounds=form.rounds, workers=1, progress=progress, briefer=briefer)
        except ValueError as exc:
            bar.empty()
            st.error(str(exc))
            return
        bar.progress(1.0, text=f"{result.runs.height:,} replays in {result.seconds:.1f} s")
        current_score = check_config(knobs, loaded, constraints, objective=form.objective, briefer=briefer)
        st.session_state[TUNE] = {"result": result, "current": current_score, "base": knobs, "labels": labels_,
                                  "base_rows": _base_rows(knobs, loaded, briefer)}
    found = st.session_state.get(TUNE)
    if found is not None:
        _tune_result(found, knobs, labels_)


def _base_rows(knobs: Knobs, loaded: list[History], briefer: Any) -> pl.DataFrame:
    from workbench.explore.sweep import sweep
    from workbench.explore.tune import history_rows

    return history_rows(sweep(loaded, [knobs], workers=1, briefer=briefer, probes=True))


def _tune_result(found: dict[str, Any], knobs: Knobs, labels_: list[str]) -> None:
    from workbench.cli.command import changed_knobs

    result, current = found["result"], found["current"]
    trials = result.trials
    tuned_on = len(found["labels"])
    who = f"{result.briefer} briefer" + (": no briefing text, kept messages only" if result.briefer == "simulated"
                                         else "")
    st.caption(f"Tried {trials.height:,} configs × {tuned_on} {'history' if tuned_on == 1 else 'histories'} in "
               f"{result.seconds:.1f} s: {int(trials['feasible'].sum()):,} met the constraints "
               f"(fact retention ≥ {result.constraints.min_retention:.0%}, {who}; at most "
               f"{result.constraints.max_overflows:,} overflows), {result.front.height:,} on the Pareto front.")
    if found["labels"] != labels_ or (found["base"] != knobs and result.best != knobs):
        st.info("The sidebar or the histories changed since this tune ran: run it again to tune for them.")
    if result.best is None:
        row = trials.sort(["violation", "objective"]).row(0, named=True)
        st.warning(f"No config met the constraints. The closest: {row['overflows']:,} overflows, fact retention "
                   f"{row['retention']:.1%}, at most {row['max_compressions']:,} compactions. Loosen the "
                   "constraints or search more knobs.")
    else:
        row = result.best_row or {}
        cards = (  # label, column, value, delta, lower is better
            ("tokens / task", "tokens_per_task", True), ("$ / task", "dollars_per_task", True),
            ("fact retention", "retention", False), ("overflows", "overflows", True),
            ("max compactions", "max_compressions", True), ("peak / window", "max_peak_ratio", True),
        )
        st.markdown("**Winner** (Δ against the sidebar's knobs when the tune ran)")
        for col, (label, name, lower) in zip(st.columns(len(cards)), cards, strict=True):
            d = row[name] - current[name]
            col.metric(label, _tune_value(name, row[name]), _tune_delta(name, d) if d else None,
                       delta_color="inverse" if lower else "normal", border=True,
                       help=f"fact retention by the {who}" if name == "retention" else None)
        for edge in result.edges():
            lo, hi = edge.widened
            w1, w2 = st.columns([3, 1])
            w1.warning(edge.describe(), icon="↔️")
            w2.button(f"Widen to {lo:g}–{hi:g} and run again", key=f"tune_widen_{edge.knob}", on_click=_widen,
                      args=(edge.knob, lo, hi), width="stretch")
        changed = changed_knobs(result.best, knobs)
        if changed:
            st.dataframe({"knob": [labels.knob_title(n) for n in changed], "name": list(changed),
                          "sidebar": [str(getattr(knobs, n)) for n in changed],
                          "winner": [str(v) for v in changed.values()]}, hide_index=True, key="tune_changed")
        else:
            st.success("The sidebar holds the winner.")
        st.caption("The winner on each history (the mean above hides histories that never compress)")
        _history_table(_with_base(result.per_history(), found.get("base_rows")), "tune_histories",
                       briefer=result.briefer)
        text = result.best_yaml()
        c1, c2 = st.columns(2)
        c1.download_button("Download the winner's YAML", text, file_name="tuned_knobs.yaml",
                           mime="application/x-yaml", key="tune_download", on_click="ignore", width="stretch")
        c2.button("Load the winner into the sidebar", key="tune_load", on_click=_queue_winner, args=(text,),
                  disabled=not changed, width="stretch")
    show(plots.pareto_figure(result), "tune_pareto")


def _with_base(winner: pl.DataFrame, base: pl.DataFrame | None) -> pl.DataFrame:
    """The winner's per-history rows with the sidebar config's tokens and retention beside them."""
    if base is None or not base.height or not winner.height:
        return winner
    keep = [c for c in ("history", "tokens_per_task", "retention") if c in base.columns]
    renamed = base.select(keep).rename({c: f"sidebar_{c}" for c in keep if c != "history"})
    out = winner.join(renamed, on="history", how="left")
    order = ["history", "compresses", "compressions", "tokens_per_task", "sidebar_tokens_per_task", "retention",
             "sidebar_retention", "overflows", "peak_ratio", "dollars_per_task"]
    return out.select([c for c in order if c in out.columns])


def _tune_value(name: str, value: float) -> str:
    from workbench.analysis.compare import compact_number

    if name == "retention":
        return f"{value:.1%}"
    if name == "max_peak_ratio":
        return f"{value:.0%}"
    if name == "dollars_per_task":
        return compact_number(value, dollars=True)
    return compact_number(value)


def _tune_delta(name: str, d: float) -> str:
    from workbench.analysis.compare import format_delta

    if name == "retention":
        return f"{d:+.1%}"
    return format_delta("peak_ratio" if name == "max_peak_ratio" else name, d)
