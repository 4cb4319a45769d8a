"""Auto-tune's Pareto front: cost against fact retention for every config tried, coloured by overflows."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
import polars as pl

from workbench.history.words import counted
from workbench.knobs import Knobs
from workbench.plots.style import FAILED, LANDED, OVERFLOW, _layout, _legend_line, figure
from workbench.replay.results import METRIC_SPECS

if TYPE_CHECKING:
    from workbench.explore.tune import TuneResult

OBJECTIVE_LABELS = {"tokens": METRIC_SPECS["tokens_per_task"].label, "dollars": METRIC_SPECS["dollars_per_task"].label}
MISSED = "#c7c7c7"
MET = "#9ecae1"
WINNER = "#ffbf00"


def pareto_figure(result: TuneResult) -> go.Figure:
    """Cost against fact retention for every config a tune tried; the Pareto front coloured by overflows.

    Configs that miss the constraints are faint crosses, those that meet them faint dots; the front
    (nothing beats it on cost, retention and overflows at once) is drawn on top, coloured by overflows
    (the third axis), hollow where it misses a constraint, and the winner is a star. A dashed line
    marks the minimum retention, if any.
    """
    trials = result.trials
    knob_cols = _searched_knobs(trials)
    x_label = OBJECTIVE_LABELS.get(result.objective, result.objective)
    dollars = result.objective == "dollars"
    cost_fmt = "$%{x:,.4f}" if dollars else "%{x:,.0f}"

    def hover(frame: pl.DataFrame) -> tuple[np.ndarray | None, str]:
        cols = [*knob_cols, "overflows", "max_compressions"]
        custom = np.column_stack([frame[c].to_numpy() for c in cols]) if frame.height else None
        lines = [f"{c} = %{{customdata[{i}]}}" for i, c in enumerate(knob_cols)]
        n = len(knob_cols)
        lines += [f"overflows %{{customdata[{n}]}}, max compressions %{{customdata[{n + 1}]}}"]
        return custom, f"{x_label} {cost_fmt}<br>retention %{{y:.1%}}<br>" + "<br>".join(lines) + "<extra></extra>"

    fig = figure()
    rest = trials.filter(~pl.col("pareto"))
    for feasible, name, symbol, color in ((False, "misses the constraints", "x-thin-open", MISSED),
                                          (True, "meets the constraints", "circle", MET)):
        part = rest.filter(pl.col("feasible") == feasible)
        if not part.height:
            continue
        custom, template = hover(part)
        fig.add_trace(go.Scatter(
            x=part["objective"].to_numpy(), y=part["retention"].to_numpy(), name=name, mode="markers",
            marker={"symbol": symbol, "size": 7, "color": color, "line": {"width": 1, "color": color}},
            customdata=custom, hovertemplate=template,
        ))
    front = result.front
    top = int(front["overflows"].to_numpy().max()) if front.height else 0
    # Overflows are the third axis: green at none; the colour bar appears only when the front has some.
    scale = [[0, LANDED], [1 / (max(1, top) + 1), "#f2a900"], [1, OVERFLOW]]
    bar = {"title": {"text": "overflows", "side": "right"}, "thickness": 12, "len": 0.6, "dtick": max(1, -(-top // 5))}
    shown = False
    for feasible, name, symbol in ((True, "Pareto front", "circle"),
                                   (False, "Pareto front, misses the constraints", "circle-open")):
        part = front.filter(pl.col("feasible") == feasible)
        if not part.height:
            continue
        custom, template = hover(part)
        fig.add_trace(go.Scatter(
            x=part["objective"].to_numpy(), y=part["retention"].to_numpy(), name=name, mode="markers",
            marker={"size": 10, "symbol": symbol, "color": part["overflows"].to_numpy(), "cmin": 0,
                    "cmax": max(1, top), "colorscale": scale, "showscale": top > 0 and not shown, "colorbar": bar,
                    "line": {"width": 1.5 if feasible else 2}},
            customdata=custom, hovertemplate=f"<b>{name}</b><br>" + template,
        ))
        shown = True
    if result.best_row is not None:
        row = result.best_row
        fig.add_trace(go.Scatter(
            x=[row["objective"]], y=[row["retention"]], name="winner", mode="markers",
            marker={"symbol": "star", "size": 20, "color": WINNER, "line": {"width": 1.2, "color": "#333333"}},
            hovertemplate=f"<b>winner</b><br>{x_label} {cost_fmt}<br>retention %{{y:.1%}}<extra></extra>",
        ))
    else:
        fig.add_annotation(x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                           text="no config met the constraints", font={"size": 14, "color": FAILED})
    if result.constraints.min_retention > 0:
        fig.add_hline(y=result.constraints.min_retention, line={"color": "#333333", "dash": "dash", "width": 1.2})
        _legend_line(fig, f"min retention ({result.constraints.min_retention:.0%})", "#333333", "dash")
    fig.update_xaxes(title_text=f"mean {x_label}", tickformat="$,.2f" if dollars else "~s")
    fig.update_yaxes(title_text="fact retention (pooled)", tickformat=".0%", rangemode="tozero")
    fig.update_layout(hovermode="closest")
    n = trials.height
    return _layout(fig, f"Pareto front: {x_label} vs fact retention vs overflows ({counted(n, 'config')} tried)", height=460)


def _searched_knobs(trials: pl.DataFrame) -> list[str]:
    """The knob columns a tune varied (every other knob is the base's value in each row)."""
    names = [f.name for f in dataclasses.fields(Knobs)]
    return [n for n in names if n in trials.columns and trials[n].n_unique() > 1]
