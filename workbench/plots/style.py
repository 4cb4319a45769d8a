"""The look every figure shares: colours, fonts, the trimmed plotly template, the layout, thinning of long lines.

One place, so the context, briefing, cost, sweep and reality figures read as one family and a colour means
the same thing in each (green landed, red the window or a failure, grey the no-compaction baseline).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import plotly.graph_objects as go

SYSTEM = "#9aa0a6"
BRIEFING = "#8e6cc9"
PINNED = "#2a9d8f"
RESTORED = "#c9a26c"
REAL = "#111111"  # what an agent's own log says
PREDICTED = "#f58518"
VERBATIM = "#4c78a8"
TRIGGER = "#f58518"
HARD_CAP = "#b0772b"
KEPT = "#17becf"
WINDOW = "#d62728"
BASELINE = "#7f7f7f"
COMPARE = "#222222"
STARTED = "#f58518"
LANDED = "#2ca02c"
FAILED = "#d62728"
OVERFLOW = "#8b0000"
LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.01, "xanchor": "left", "x": 0, "font": {"size": 11},
          "traceorder": "normal"}
FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 12}


MAX_POINTS = 2_000  # a line with more points than this is thinned (peaks kept): the browser draws it faster


def _template_json() -> dict:
    """plotly_white's layout and its scatter, bar and heatmap styles only: copying the whole template into every
    figure (all 30 trace types) took 18 ms a figure and 4 KB of JSON, on every slider move. Read from plotly's own
    file (``plotly/package_data/templates/plotly_white.json``) rather than ``plotly.io.templates``, which builds
    all 30 trace types' styles first: 60 ms of every cold start."""
    import json
    from importlib.resources import files

    full = json.loads((files("plotly") / "package_data" / "templates" / "plotly_white.json").read_text("utf-8"))
    return {"data": {k: full["data"][k] for k in ("scatter", "bar", "heatmap")}, "layout": full["layout"]}


# The template as plotly's JSON structure, what the specs (``context_spec``, ...) carry. The same as a
# ``go.layout.Template``'s JSON (tests/test_plots.py), without building one: validating it took 0.2-0.9 s of a cold
# start's first run on this machine (more under load), and the Charts tab never needs it.
TEMPLATE_JSON = _template_json()


@functools.cache
def template() -> go.layout.Template:
    """The template as a plotly object, built on first use: for the figures still made with ``go`` (sweep,
    Pareto front, reality) and the notebooks."""
    import plotly.graph_objects as go

    return go.layout.Template(TEMPLATE_JSON)


def __getattr__(name: str) -> object:
    if name == "TEMPLATE":  # the plotly object, for the notebooks and tests that name it: built when first asked for
        return template()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def figure() -> go.Figure:
    """An empty figure born with the workbench template: a bare ``go.Figure()`` first applies plotly's default
    template (built on first use: ~90 ms of a cold start) only for ``_layout`` to replace it."""
    import plotly.graph_objects as go

    fig = go.Figure(layout={"template": template()})
    fig._wb_templated = True  # ``_layout`` need not copy the template in again
    return fig


def hline(fig: go.Figure, y: float, line: dict) -> None:
    """A horizontal line across the plot at ``y``: what ``fig.add_hline`` draws, as one shape; add_hline walks every
    subplot's axes for each line (~50 ms a line here, three or four lines a context chart, every slider move)."""
    fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=y, y1=y, line=line)


def hrect(fig: go.Figure, y0: float, y1: float, color: str, opacity: float) -> None:
    """A band across the plot from ``y0`` to ``y1``, behind the traces: ``fig.add_hrect`` as one shape (see hline)."""
    fig.add_shape(type="rect", xref="x domain", x0=0, x1=1, yref="y", y0=y0, y1=y1, fillcolor=color,
                  opacity=opacity, line_width=0, layer="below")


def thin(values: np.ndarray, max_points: int = MAX_POINTS) -> np.ndarray:
    """Indices of at most about ``max_points`` rows that keep the shape: per bucket its first, lowest and highest
    row, and the last row, so a sawtooth keeps every peak and trough at its height. All rows when few."""
    n = len(values)
    if n <= max_points:
        return np.arange(n)
    buckets = max(1, max_points // 3)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    keep = [n - 1]
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if hi > lo:
            part = values[lo:hi]
            keep += [int(lo), int(lo + np.argmin(part)), int(lo + np.argmax(part))]
    return np.unique(np.asarray(keep, dtype=np.int64))


# -- figures as plain JSON structures (no plotly.py validation), for charts redrawn on every slider move ------------


def scatter(**props: object) -> dict:
    """A scatter trace as plotly's JSON structure (what ``go.Scatter(**props)`` serialises to)."""
    return {"type": "scatter", **props}


def legend_line(name: str, color: str, dash: str) -> dict:
    """A legend entry for a shape line (shapes have none of their own), as a trace structure."""
    return scatter(x=[None], y=[None], mode="lines", name=name, line={"color": color, "dash": dash}, hoverinfo="skip")


def hline_spec(y: float, line: dict) -> dict:
    """A horizontal line across the plot at ``y``, as a layout shape (what ``hline`` adds)."""
    return {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y, "line": line}


def vline_spec(x: float, line: dict) -> dict:
    """A vertical line over the plot's height at ``x``, as a layout shape (what ``fig.add_vline`` adds)."""
    return {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1, "line": line}


def hrect_spec(y0: float, y1: float, color: str, opacity: float) -> dict:
    """A band across the plot from ``y0`` to ``y1``, behind the traces, as a layout shape (what ``hrect`` adds)."""
    return {"type": "rect", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y0, "y1": y1, "fillcolor": color,
            "opacity": opacity, "line": {"width": 0}, "layer": "below"}


def layout_spec(title: str, *, height: int = 460) -> dict:
    """``_layout``'s layout as a structure, with the template: the same look without plotly.py's validation."""
    return {
        "template": TEMPLATE_JSON,
        "title": {"text": title, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top", "font": {"size": 15}},
        "font": FONT,
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 85, "b": 55},
        "legend": LEGEND,
        "hoverlabel": {"font": {"size": 12}, "align": "left"},
    }


def _layout(fig: go.Figure, title: str, *, height: int = 460) -> go.Figure:
    # A figure born with the template (``figure()``) keeps it: assigning it again copies and validates all of it
    # (~0.1 s a figure, three figures a slider move).
    kept = {} if getattr(fig, "_wb_templated", False) else {"template": template()}
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top", "font": {"size": 15}},
        **kept,
        font=FONT,
        height=height,
        margin={"l": 70, "r": 20, "t": 85, "b": 55},
        legend=LEGEND,
        hoverlabel={"font_size": 12, "align": "left"},
    )
    return fig



def _legend_line(fig: go.Figure, name: str, color: str, dash: str) -> None:
    """A legend entry for a shape line (hlines have none of their own)."""
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=name, line={"color": color, "dash": dash},
                             hoverinfo="skip"))



def _short(value: float) -> str:
    """1_780_179 → '1.78M', 962_296_280 → '962M', 2905.49 → '2.91k'."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"

