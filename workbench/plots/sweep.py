"""A sweep's heatmap: one metric over a two-knob grid, with clickable cells and rounded ticks."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import polars as pl

from workbench.display.untrusted import hover
from workbench.plots.style import _layout, _short


def pivot_metric(frame: pl.DataFrame, x: str, y: str, metric: str, *, history: str | None = None,
                 ) -> tuple[list, list, np.ndarray]:
    """(x values, y values, z[y][x]) with the metric averaged over every other column (e.g. histories).

    ``history``: only that history's rows (the per-history view of a sweep).
    """
    if history is not None and "history" in frame.columns:
        frame = frame.filter(pl.col("history") == history)
    grouped = frame.group_by([x, y]).agg(pl.col(metric).cast(pl.Float64).mean())
    xs = sorted(grouped[x].unique().to_list())
    ys = sorted(grouped[y].unique().to_list())
    z = np.full((len(ys), len(xs)), np.nan)
    xi = {v: i for i, v in enumerate(xs)}
    yi = {v: i for i, v in enumerate(ys)}
    for row in grouped.iter_rows(named=True):
        z[yi[row[y]], xi[row[x]]] = row[metric]
    return xs, ys, z


def tick(value: float) -> str:
    """A knob value as an axis tick: 0.08333 → '0.0833', 40000 → '40k', 12 → '12'."""
    v = float(value)
    if v.is_integer() and abs(v) >= 1_000:
        return _short(v)
    if v.is_integer():
        return f"{v:.0f}"
    return f"{v:.3g}"


def _cell_text(value: float, fmt: str) -> str:
    return _short(value) if fmt == ".3s" else format(value, fmt)


def cell_key(value: object) -> str:
    """The category string a heatmap cell uses for a knob value (what a click reports back)."""
    return str(value)


def sweep_figure(frame: pl.DataFrame, x: str, y: str, metric: str, *, title: str | None = None,
                 history: str | None = None, metric_label: str | None = None) -> go.Figure:
    """Heatmap of ``metric`` over a two-knob grid (mean over histories, or one ``history``).

    Plotly heatmaps cannot be selected, so an invisible marker sits on every cell centre: clicking a
    cell selects that marker (trace 1), whose x and y are the cell's category strings (``cell_key``).
    Ticks are rounded (``tick``); cells carry their values as text.
    """
    from workbench.display.labels import knob_title

    xs, ys, z = pivot_metric(frame, x, y, metric, history=history)
    top = np.nanmax(np.abs(z), initial=0)
    fmt = ".2f" if top < 10 else ",.0f" if top < 100_000 else ".3s"  # 28.7M, not 28,742,787, in a cell
    label = metric_label or metric
    cx, cy = [cell_key(v) for v in xs], [cell_key(v) for v in ys]
    fig = go.Figure(
        go.Heatmap(
            x=cx, y=cy, z=z, colorscale="Viridis", reversescale=True, texttemplate=f"%{{z:{fmt}}}",
            textfont={"size": 11}, hoverinfo="skip", colorbar={"title": {"text": label, "side": "right"}},
        )
    )
    gx, gy = np.meshgrid(np.arange(len(xs)), np.arange(len(ys)))
    fig.add_trace(go.Scatter(
        x=[cx[i] for i in gx.ravel()], y=[cy[j] for j in gy.ravel()], mode="markers", name="cells",
        showlegend=False, marker={"size": 28, "color": "rgba(0,0,0,0)", "symbol": "square"},
        customdata=np.column_stack([[tick(xs[i]) for i in gx.ravel()], [tick(ys[j]) for j in gy.ravel()],
                                    ["—" if np.isnan(v) else _cell_text(v, fmt) for v in z.ravel()]])
        if z.size else None,
        hovertemplate=f"{x} = %{{customdata[0]}}<br>{y} = %{{customdata[1]}}<br>{label} = %{{customdata[2]}}"
        "<br><i>click to load this cell</i><extra></extra>",
        selected={"marker": {"color": "rgba(255,255,255,0.35)"}}, unselected={"marker": {"opacity": 1}},
    ))
    fig.update_xaxes(title_text=knob_title(x), type="category", tickvals=cx,
                     ticktext=[tick(v) for v in xs])
    fig.update_yaxes(title_text=knob_title(y), type="category", tickvals=cy,
                     ticktext=[tick(v) for v in ys])
    fig.update_layout(clickmode="event+select", dragmode=False, hovermode="closest")
    where = hover(history) if history else "mean over histories"
    return _layout(fig, title or f"{label} over {x} × {y} ({where})", height=460)
