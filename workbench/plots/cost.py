"""Cost per task, cumulative over the conversation: tokens and dollars, against the no-compaction baseline."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import polars as pl

from workbench.plots.style import BASELINE, COMPARE, LANDED, MAX_POINTS, VERBATIM, _short, layout_spec, scatter

SPACING = 0.14  # between the two panels, as a share of the plot's height (make_subplots' vertical_spacing)


def cost_figure(frame: pl.DataFrame, *, compare: pl.DataFrame | None = None, labels: tuple[str, str] = ("B", "A"),
                ) -> go.Figure:
    """Tokens and dollars per task, cumulative over the conversation (a ``workbench.analysis.costs.cost_frame``).

    The no-compaction baseline is drawn faint; when it dwarfs the run it runs off the chart (its total
    is in the panel title) so that the run's own curve stays readable. The figure of ``cost_spec``.
    """
    return go.Figure(cost_spec(frame, compare=compare, labels=labels))


def cost_spec(frame: pl.DataFrame, *, compare: pl.DataFrame | None = None, labels: tuple[str, str] = ("B", "A"),
              ) -> dict:
    """``cost_figure`` as plotly's JSON structure: the two panels laid out as ``make_subplots(rows=2, cols=1,
    shared_xaxes=True)`` lays them out, built without plotly.py (the Charts tab redraws it on every slider move,
    and building it as ``go`` objects took ~0.4 s of each move on the long sample: benchmarks/README.md)."""
    titles = []
    panels = ((1, "cum_tokens", "baseline_cum_tokens", "tokens (agent + briefer, in + out)"),
              (2, "cum_dollars", "baseline_cum_dollars", "dollars"))
    tops, offs = [], []
    for _, col, base_col, title in panels:
        ends = [float(frame[col][-1]) if frame.height else 0.0]
        if compare is not None and compare.height:
            ends.append(float(compare[col][-1]))
        top = max(ends) * 1.15 or 1.0
        base_end = float(frame[base_col][-1]) if frame.height else 0.0
        off = base_end > top * 3
        if not off:
            top = max(top, base_end * 1.05)
        shown = _short(base_end) if col == "cum_tokens" else f"${_short(base_end)}"
        # the note on a line of its own: beside the title it runs past a half-width chart at 1280 px
        titles.append(title + (f"<br><span style='font-size:11px'>no compaction: {shown}, off the chart</span>"
                               if off else ""))
        tops.append(top)
        offs.append(off)
    if frame.height > MAX_POINTS:  # cumulative curves: evenly spaced rows (and the last) lose nothing visible
        frame = frame[np.unique(np.append(np.linspace(0, frame.height - 1, MAX_POINTS).astype(np.int64),
                                          frame.height - 1))]
    if compare is not None and compare.height > MAX_POINTS:
        compare = compare[np.unique(np.linspace(0, compare.height - 1, MAX_POINTS).astype(np.int64))]
    data: list[dict] = []
    x = frame["index"].to_numpy()
    for row, col, base_col, _ in panels:
        axes = {"xaxis": "x", "yaxis": "y"} if row == 1 else {"xaxis": "x2", "yaxis": "y2"}
        fmt = "%{y:,.0f} tokens" if row == 1 else "$%{y:,.4f}"
        color = VERBATIM if row == 1 else LANDED
        first = row == 1
        data.append(scatter(x=x, y=frame[col].to_numpy(), name="this run", mode="lines", legendgroup="run",
                            showlegend=first, line={"color": color, "width": 2.2},
                            hovertemplate=fmt + "<extra></extra>", **axes))
        if row == 2:
            data.append(scatter(x=x, y=frame["cum_dollars_cached"].to_numpy(), name="with prompt caching",
                                mode="lines", line={"color": color, "width": 1.5, "dash": "dash"},
                                hovertemplate="cached: " + fmt + "<extra></extra>", **axes))
        if compare is not None:
            data.append(scatter(x=compare["index"].to_numpy(), y=compare[col].to_numpy(), name=labels[1],
                                mode="lines", legendgroup="compare", showlegend=first,
                                line={"color": COMPARE, "dash": "dash", "width": 1.6},
                                hovertemplate=f"{labels[1]}: " + fmt + "<extra></extra>", **axes))
        data.append(scatter(x=x, y=frame[base_col].to_numpy(), name="no compaction", mode="lines", opacity=0.6,
                            legendgroup="baseline", showlegend=first,
                            line={"color": BASELINE, "dash": "dot", "width": 1.4},
                            hovertemplate="no compaction: " + fmt + "<extra></extra>", **axes))
    panel = (1 - SPACING) / 2  # each panel's share of the height
    xrange = {"range": [0, max(int(x.max()), 1)]} if frame.height else {}
    layout = layout_spec("Cost per task, cumulative", height=540)
    layout.update(
        xaxis={"anchor": "y", "domain": [0.0, 1.0], "matches": "x2", "showticklabels": False, **xrange},
        yaxis={"anchor": "x", "domain": [panel + SPACING, 1.0], "range": [0, tops[0]], "title": {"text": "tokens"},
               "tickformat": "~s"},
        xaxis2={"anchor": "y2", "domain": [0.0, 1.0], "title": {"text": "message index"}, "tickformat": ",d",
                **xrange},
        yaxis2={"anchor": "x2", "domain": [0.0, panel], "range": [0, tops[1]], "title": {"text": "US dollars"},
                "tickprefix": "$", "tickformat": ",.2~f"},
        annotations=[{"font": {"size": 12}, "showarrow": False, "text": text, "x": 0.5, "xanchor": "center",
                      "xref": "paper", "y": y, "yanchor": "bottom", "yref": "paper"}
                     for text, y in zip(titles, (1.0, panel), strict=True)],
        hovermode="x unified" if frame.height <= 4000 else "closest",
    )
    layout["legend"] = {**layout["legend"], "y": -0.13, "yanchor": "top"}
    layout["margin"] = {**layout["margin"], "t": 80 if offs[0] else 60, "b": 95}
    return {"data": data, "layout": layout}
