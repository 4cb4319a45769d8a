"""Plotly figures of a run: context over time, briefing growth across the chain, cumulative cost, sweeps, tuning.

Each builder takes engine values (a Run, a polars frame) and returns a ``go.Figure``; no ``st.``, no
``.show()``. The app passes them to ``st.plotly_chart``, a notebook just displays them. ``compare``
arguments overlay a second run (the pinned A of an A/B comparison) on the same axes.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from workbench.knobs import Knobs
from workbench.replay import Run

if TYPE_CHECKING:
    from workbench.explore.tune import TuneResult

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
BANDS = (("< 60% of target", 0.0, 0.6, "#2ca02c"), ("60–85%", 0.6, 0.85, "#f2a900"),
         ("≥ 85%", 0.85, None, "#d62728"))
LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.01, "xanchor": "left", "x": 0, "font": {"size": 11},
          "traceorder": "normal"}
FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 12}


MAX_POINTS = 2_000  # a line with more points than this is thinned (peaks kept): the browser draws it faster


def _template() -> go.layout.Template:
    """plotly_white's layout and its scatter, bar and heatmap styles only: copying the whole template into every
    figure (all 30 trace types) took 18 ms a figure and 4 KB of JSON, on every slider move."""
    import plotly.io as pio

    full = pio.templates["plotly_white"]
    return go.layout.Template(layout=full.layout, data={"scatter": full.data.scatter, "bar": full.data.bar,
                                                         "heatmap": full.data.heatmap})


TEMPLATE = _template()


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


def _layout(fig: go.Figure, title: str, *, height: int = 460) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "y": 0.98, "yanchor": "top", "font": {"size": 15}},
        template=TEMPLATE,
        font=FONT,
        height=height,
        margin={"l": 70, "r": 20, "t": 85, "b": 55},
        legend=LEGEND,
        hoverlabel={"font_size": 12, "align": "left"},
    )
    return fig


@functools.lru_cache(maxsize=65_536)
def _wrap(text: str, width: int = 60) -> str:
    """Break a preview into lines for a hover box (plotly needs <br>)."""
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "<br>".join(lines[:2])  # two lines: a third added 70 KB to every slider move on the long sample


# -- context over time ----------------------------------------------------------------------------


def context_figure(
    run: Run,
    *,
    previews: Sequence[str] | None = None,
    compare: Run | None = None,
    labels: tuple[str, str] = ("B", "A"),
    logged: pl.DataFrame | None = None,
    logged_compactions: Sequence[int] = (),
) -> go.Figure:
    """Stacked context per check (system, briefing, pinned, verbatim) with trigger, hard cap and window.

    ``previews``: one text per message of the history (hover shows the check's message). Markers show
    where compressions started, landed or failed and where the context overflowed the window; the
    no-compaction baseline is a faint line. ``compare`` overlays another run's total as a dashed line.
    A real agent log adds ``logged`` (``workbench.analysis.reality.logged_context_frame``): the context as
    the agent measured it from its bill, and its own compactions (``logged_compactions``, first message after).
    """
    tl = run.timeline
    if tl.height > MAX_POINTS:  # markers below use the run's own compressions, so every event stays exact
        tl = tl[thin(tl["total"].to_numpy())]
    k = run.knobs
    window = k.context_window_tokens
    x = tl["index"].to_numpy()
    fig = go.Figure()
    stack = [("system", "hidden prefix", SYSTEM), ("briefing", "briefing", BRIEFING),
             ("restored", "restored after compaction", RESTORED), ("pinned", "pinned", PINNED),
             ("verbatim", "verbatim messages", VERBATIM)]
    for col, name, color in stack:
        if col not in tl.columns:
            continue
        values = tl[col].to_numpy()
        if col != "verbatim" and not values.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=x, y=values, name=name, stackgroup="context", mode="lines", line={"width": 0.5, "color": color},
                fillcolor=color, hovertemplate=f"{name}: %{{y:,}}<extra></extra>",
            )
        )
    roles = tl["role"].to_list()
    idx = tl["index"].to_list()
    texts = [_wrap(previews[i]) if previews is not None and i < len(previews) else "" for i in idx]
    fig.add_trace(
        go.Scatter(
            x=x, y=tl["total"].to_numpy(), name="context", mode="lines", line={"width": 1.2, "color": "#1f3b5c"},
            customdata=np.column_stack([idx, roles, texts]) if len(idx) else None,
            hovertemplate="<b>context %{y:,} tokens</b><br>message %{customdata[0]} (%{customdata[1]})"
            "<br>%{customdata[2]}<extra></extra>",
            showlegend=False,
        )
    )
    baseline = tl["baseline"].to_numpy()
    total = tl["total"].to_numpy()
    other = compare.timeline if compare is not None else None
    top = max(window, int(total.max()) if len(total) else 0)
    if other is not None and other.height:
        top = max(top, int(other["total"].to_numpy().max()))
    peak_base = int(baseline.max()) if tl.height else 0
    base_name = "no compaction" if peak_base <= top * 1.08 else f"no compaction (peak {peak_base:,}, off the chart)"
    fig.add_trace(
        go.Scatter(
            x=x, y=baseline, name=base_name, mode="lines",
            line={"width": 1.2, "color": BASELINE, "dash": "dot"}, opacity=0.55,
            hovertemplate="no compaction: %{y:,}<extra></extra>",
        )
    )
    trigger = tl["trigger"].to_numpy()
    lim = run.limits
    bind = lim.trigger.binding if lim is not None else None
    if np.isfinite(trigger).any():
        name = f"trigger ({bind.label})" if bind is not None else "trigger"
        fig.add_trace(
            go.Scatter(
                x=x, y=trigger, name=name, mode="lines", line={"width": 1.5, "color": TRIGGER, "dash": "dash",
                                                               "shape": "hv"},
                hovertemplate="trigger: %{y:,.0f}<extra></extra>", connectgaps=False,
            )
        )
    if lim is not None:  # the terms that do not bind, faint, so the chart shows why the trigger sits where it does
        for term in lim.trigger.terms:
            if term.name != lim.trigger.binds and term.tokens <= top * 1.08:
                fig.add_hline(y=term.tokens, line={"color": HARD_CAP, "dash": "dot", "width": 1})
                _legend_line(fig, f"{term.label} (not binding)", HARD_CAP, "dot")
        kept = lim.kept
        if kept is not None and kept.tokens is not None and kept.tokens <= top * 1.08:
            fig.add_hline(y=kept.tokens, line={"color": KEPT, "dash": "dot", "width": 1.2})
            _legend_line(fig, "kept budget", KEPT, "dot")
    elif k.trigger_hard_cap_tokens < window and not np.isfinite(trigger).any():
        fig.add_hline(y=k.trigger_hard_cap_tokens, line={"color": HARD_CAP, "dash": "dot", "width": 1.2})
        _legend_line(fig, "hard cap", HARD_CAP, "dot")
    fig.add_hline(y=window, line={"color": WINDOW, "width": 1.6})
    _legend_line(fig, "window", WINDOW, "solid")
    _markers(fig, run)
    if compare is not None:
        ct = compare.timeline
        if ct.height > MAX_POINTS:
            ct = ct[thin(ct["total"].to_numpy())]
        fig.add_trace(
            go.Scatter(
                x=ct["index"].to_numpy(), y=ct["total"].to_numpy(), name=f"{labels[1]}: context", mode="lines",
                line={"width": 1.8, "color": COMPARE, "dash": "dash"},
                hovertemplate=f"{labels[1]} context: %{{y:,}}<extra></extra>",
            )
        )
    if logged is not None and logged.height:
        measured = logged["measure"].to_numpy()
        top = max(top, int(measured.max()))
        fig.add_trace(go.Scatter(x=logged["index"].to_numpy(), y=measured, name="logged: the agent's measure",
                                 mode="lines", line={"width": 1.6, "color": REAL},
                                 hovertemplate="logged (the agent's bill): %{y:,}<extra></extra>"))
        for j, index in enumerate(logged_compactions):
            fig.add_vline(x=index, line={"color": REAL, "width": 1.2, "dash": "longdash"})
            if j == 0:
                _legend_line(fig, "logged compaction", REAL, "longdash")
    fig.update_yaxes(range=[0, top * 1.08], title_text="context (tokens)", tickformat="~s", rangemode="tozero")
    right = max(int(x.max()) if len(x) else 1, int(other["index"].to_numpy().max()) if other is not None
                and other.height else 0, 1)
    fig.update_xaxes(title_text="message index", tickformat=",d", range=[0, right])
    fig.update_layout(hovermode="x unified" if tl.height <= 4000 else "closest")
    _layout(fig, f"Context over the conversation — {run.history_id}", height=540)
    # Eleven entries wrap on a laptop screen: below the axis they push the plot down, above it they hit the title.
    fig.update_layout(legend={"y": -0.16, "yanchor": "top"}, margin={"t": 45, "b": 40})
    return fig


def binding_caption(run: Run) -> str:
    """One sentence under the context chart: what sets the trigger and the kept budget, and why walks stopped."""
    lim = run.limits
    if lim is None:
        return ""
    parts = [lim.trigger.describe()]
    if lim.kept is not None:
        parts.append(lim.kept.describe())
    stops = run.stops()
    if stops:
        from workbench.policies.limits import STOP_WORDS

        parts.append("boundaries stopped: " + ", ".join(f"{STOP_WORDS.get(k, k)} ({v})" for k, v in stops.items()))
    parts += list(lim.clauses)
    text = "; ".join(parts) + "."
    return text[0].upper() + text[1:]


def _legend_line(fig: go.Figure, name: str, color: str, dash: str) -> None:
    """A legend entry for a shape line (hlines have none of their own)."""
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=name, line={"color": color, "dash": dash},
                             hoverinfo="skip"))


def _markers(fig: go.Figure, run: Run) -> None:
    tl = run.timeline
    total = tl["total"].to_numpy()
    started = [(c.index_started, c.tokens_before, c) for c in run.compressions]
    landed = [(c.index_landed, c.tokens_after, c) for c in run.compressions if c.status == "landed"]
    failed = [(c.index_landed if c.index_landed is not None else c.index_started,
               int(total[c.check_landed]) if c.check_landed is not None else c.tokens_before, c)
              for c in run.compressions if c.status == "failed"]
    for points, name, symbol, color, size in (
        (started, "compression started", "triangle-down", STARTED, 10),
        (landed, "compression landed", "circle", LANDED, 8),
        (failed, "compression failed", "x", FAILED, 11),
    ):
        if not points:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points], y=[p[1] for p in points], name=name, mode="markers",
                marker={"symbol": symbol, "size": size, "color": color, "line": {"width": 1, "color": "white"}},
                customdata=[[c.chain_index, c.messages_folded, c.kept, c.briefing_chars] for _, _, c in points],
                hovertemplate=f"{name} #%{{customdata[0]}}: %{{y:,}} tokens<br>folded %{{customdata[1]:,}} messages,"
                " kept %{customdata[2]:,}, briefing %{customdata[3]:,} chars<extra></extra>",
            )
        )
    over = [e for e in run.events if e.kind == "overflow"]
    if over:
        fig.add_trace(
            go.Scatter(
                x=[e.index for e in over], y=[int(total[e.check]) for e in over], name="overflow", mode="markers",
                marker={"symbol": "star", "size": 13, "color": OVERFLOW, "line": {"width": 1, "color": "white"}},
                hovertemplate="overflow: %{y:,} tokens > window<extra></extra>",
            )
        )


# -- briefing growth ------------------------------------------------------------------------------


def briefing_figure(run: Run, *, compare: Run | None = None, labels: tuple[str, str] = ("B", "A")) -> go.Figure:
    """Briefing size per compression of the chain against the target, over the budget-hint bands."""
    target = run.knobs.target_briefing_chars
    comps = [c for c in run.compressions if c.summarize]
    fig = go.Figure()
    sizes = [c.briefing_chars for c in comps if c.status != "failed"]
    top = max([target * 1.25, *(s * 1.1 for s in sizes)])
    if compare is not None:
        top = max([top, *(c.briefing_chars * 1.1 for c in compare.compressions if c.summarize)])
    for label, lo, hi, color in BANDS:
        y0, y1 = lo * target, (hi * target if hi is not None else top)
        fig.add_hrect(y0=y0, y1=y1, fillcolor=color, opacity=0.08, line_width=0, layer="below")
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=label, hoverinfo="skip",
                                 marker={"symbol": "square", "size": 11, "color": color, "opacity": 0.85}))
    ok = [c for c in comps if c.status != "failed"]
    if ok:
        colors = [_band_color(c.briefing_chars / target) for c in ok]
        fig.add_trace(
            go.Bar(
                x=[c.chain_index for c in ok], y=[c.briefing_chars for c in ok], name="briefing", showlegend=False,
                marker={"color": colors, "line": {"width": 0}}, opacity=0.85,
                customdata=[[c.status, c.index_started, round(100 * c.briefing_chars / target), c.previous_chars,
                             c.bucket, c.messages_folded] for c in ok],
                hovertemplate="<b>#%{x}</b> (%{customdata[0]}, started at message %{customdata[1]:,})"
                "<br>briefing %{y:,} chars = %{customdata[2]}% of target"
                "<br>previous %{customdata[3]:,} chars → hint %{customdata[4]}"
                "<br>folded %{customdata[5]:,} new messages<extra></extra>",
            )
        )
    bad = [c for c in comps if c.status == "failed"]
    if bad:
        fig.add_trace(
            go.Scatter(
                x=[c.chain_index for c in bad], y=[0] * len(bad), name="failed", mode="markers",
                marker={"symbol": "x", "size": 12, "color": FAILED},
                hovertemplate="#%{x} failed: the history stays uncompressed<extra></extra>",
            )
        )
    if compare is not None:
        cc = [c for c in compare.compressions if c.summarize and c.status != "failed"]
        fig.add_trace(
            go.Scatter(
                x=[c.chain_index for c in cc], y=[c.briefing_chars for c in cc], name=f"{labels[1]}: briefing",
                mode="lines+markers", line={"color": COMPARE, "dash": "dash", "width": 1.6}, marker={"size": 6},
                hovertemplate=f"{labels[1]} #%{{x}}: %{{y:,}} chars<extra></extra>",
            )
        )
    fig.add_hline(y=target, line={"color": "#333333", "dash": "dash", "width": 1.3})
    _legend_line(fig, f"target ({target:,} chars)", "#333333", "dash")
    if not comps:
        fig.add_annotation(x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                           text="no compression in this run", font={"size": 14, "color": BASELINE})
    fig.update_yaxes(range=[0, top], title_text="briefing (chars)", tickformat="~s")
    last = max([c.chain_index for c in comps] + [c.chain_index for c in (compare.compressions if compare else ())]
               + [1])
    fig.update_xaxes(title_text="compression # in the chain", tickformat="d", range=[0.4, last + 0.6],
                     dtick=1 if last <= 20 else None)
    fig.update_layout(bargap=0.25, hovermode="closest")
    return _layout(fig, "Briefing growth across the chain", height=380)


def _band_color(ratio: float) -> str:
    for _, lo, hi, color in BANDS:
        if ratio >= lo and (hi is None or ratio < hi):
            return color
    return BANDS[0][3]


# -- cost -----------------------------------------------------------------------------------------


def cost_figure(frame: pl.DataFrame, *, compare: pl.DataFrame | None = None, labels: tuple[str, str] = ("B", "A"),
                ) -> go.Figure:
    """Tokens and dollars per task, cumulative over the conversation (a ``workbench.analysis.costs.cost_frame``).

    The no-compaction baseline is drawn faint; when it dwarfs the run it runs off the chart (its total
    is in the panel title) so that the run's own curve stays readable.
    """
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
        titles.append(title + (f" · no compaction: {shown}, off the chart" if off else ""))
        tops.append(top)
        offs.append(off)
    if frame.height > MAX_POINTS:  # cumulative curves: evenly spaced rows (and the last) lose nothing visible
        frame = frame[np.unique(np.append(np.linspace(0, frame.height - 1, MAX_POINTS).astype(np.int64),
                                          frame.height - 1))]
    if compare is not None and compare.height > MAX_POINTS:
        compare = compare[np.unique(np.linspace(0, compare.height - 1, MAX_POINTS).astype(np.int64))]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.14, subplot_titles=titles)
    x = frame["index"].to_numpy()
    for (row, col, base_col, _), top in zip(panels, tops, strict=True):
        fmt = "%{y:,.0f} tokens" if row == 1 else "$%{y:,.4f}"
        color = VERBATIM if row == 1 else LANDED
        first = row == 1
        fig.add_trace(go.Scatter(x=x, y=frame[col].to_numpy(), name="this run", mode="lines", legendgroup="run",
                                 showlegend=first, line={"color": color, "width": 2.2},
                                 hovertemplate=fmt + "<extra></extra>"), row=row, col=1)
        if row == 2:
            fig.add_trace(go.Scatter(x=x, y=frame["cum_dollars_cached"].to_numpy(), name="with prompt caching",
                                     mode="lines", line={"color": color, "width": 1.5, "dash": "dash"},
                                     hovertemplate="cached: " + fmt + "<extra></extra>"), row=row, col=1)
        if compare is not None:
            fig.add_trace(go.Scatter(x=compare["index"].to_numpy(), y=compare[col].to_numpy(), name=labels[1],
                                     mode="lines", legendgroup="compare", showlegend=first,
                                     line={"color": COMPARE, "dash": "dash", "width": 1.6},
                                     hovertemplate=f"{labels[1]}: " + fmt + "<extra></extra>"), row=row, col=1)
        fig.add_trace(go.Scatter(x=x, y=frame[base_col].to_numpy(), name="no compaction", mode="lines", opacity=0.6,
                                 legendgroup="baseline", showlegend=first,
                                 line={"color": BASELINE, "dash": "dot", "width": 1.4},
                                 hovertemplate="no compaction: " + fmt + "<extra></extra>"), row=row, col=1)
        fig.update_yaxes(range=[0, top], row=row, col=1)
    fig.update_yaxes(title_text="tokens", tickformat="~s", row=1, col=1)
    fig.update_yaxes(title_text="US dollars", tickprefix="$", tickformat=",.2~f", row=2, col=1)
    fig.update_xaxes(title_text="message index", tickformat=",d", row=2, col=1)
    if frame.height:
        fig.update_xaxes(range=[0, max(int(x.max()), 1)])
    fig.update_annotations(font_size=12)
    fig.update_layout(hovermode="x unified" if frame.height <= 4000 else "closest")
    _layout(fig, "Cost per task, cumulative", height=540)
    fig.update_layout(legend={"y": -0.13, "yanchor": "top"}, margin={"t": 60, "b": 95})
    return fig


def _short(value: float) -> str:
    """1_780_179 → '1.78M', 962_296_280 → '962M', 2905.49 → '2.91k'."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


# -- sweeps ---------------------------------------------------------------------------------------


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
    from workbench.ui.labels import KNOB_TITLES

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
    fig.update_xaxes(title_text=KNOB_TITLES.get(x, x), type="category", tickvals=cx,
                     ticktext=[tick(v) for v in xs])
    fig.update_yaxes(title_text=KNOB_TITLES.get(y, y), type="category", tickvals=cy,
                     ticktext=[tick(v) for v in ys])
    fig.update_layout(clickmode="event+select", dragmode=False, hovermode="closest")
    where = history or "mean over histories"
    return _layout(fig, title or f"{label} over {x} × {y} ({where})", height=460)


# -- auto-tune ------------------------------------------------------------------------------------

OBJECTIVE_LABELS = {"tokens": "tokens per task", "dollars": "dollars per task"}
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

    fig = go.Figure()
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
    return _layout(fig, f"Pareto front: {x_label} vs fact retention vs overflows ({n} configs tried)", height=460)


def _searched_knobs(trials: pl.DataFrame) -> list[str]:
    """The knob columns a tune varied (every other knob is the base's value in each row)."""
    names = [f.name for f in dataclasses.fields(Knobs)]
    return [n for n in names if n in trials.columns and trials[n].n_unique() > 1]



def reality_figure(frame: pl.DataFrame, session: object, *, threshold: float | None = None,
                   window: int | None = None) -> go.Figure:
    """A real log: the agent's own context measure and the billed calls, real compactions beside predicted ones.

    ``frame`` is ``workbench.analysis.reality.logged_context_frame``; ``session`` a ``SessionReality``.
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=frame["index"], y=frame["measure"], mode="lines", name="agent's measure (log)",
                             line={"color": VERBATIM, "width": 2},
                             hovertemplate="message %{x}<br>%{y:,} tokens<extra>agent's measure</extra>"))
    calls = frame.filter(pl.col("billed_input").is_not_null())
    fig.add_trace(go.Scatter(x=calls["index"], y=calls["billed_input"], mode="markers", name="billed input per call",
                             marker={"color": SYSTEM, "size": 4},
                             hovertemplate="call at message %{x}<br>%{y:,} tokens billed<extra></extra>"))
    if threshold is not None:
        fig.add_hline(y=threshold, line={"color": TRIGGER, "dash": "dash", "width": 1})
        _legend_line(fig, f"trigger {threshold:,.0f}", TRIGGER, "dash")
    if window is not None:
        fig.add_hline(y=window, line={"color": WINDOW, "dash": "dot", "width": 1})
        _legend_line(fig, f"window {window:,}", WINDOW, "dot")
    compactions = list(getattr(session, "compactions", ()))
    top = float(frame["measure"].to_numpy().max()) if frame.height else 0.0
    if compactions:
        fig.add_trace(go.Scatter(
            x=[c.real_index for c in compactions], y=[c.real_tokens_before or top for c in compactions],
            mode="markers", name="logged compaction", marker={"symbol": "line-ns-open", "size": 18, "color": REAL},
            text=[f"{c.trigger}, log line {c.source_line}" for c in compactions],
            hovertemplate="logged: before message %{x}<br>%{text}<br>%{y:,} tokens<extra></extra>"))
        shown = [c for c in compactions if c.predicted_index is not None]
        fig.add_trace(go.Scatter(
            x=[c.predicted_index for c in shown], y=[c.predicted_tokens_before or top for c in shown],
            mode="markers", name="predicted by the replay", marker={"symbol": "triangle-down", "size": 11,
                                                                   "color": PREDICTED},
            text=["+0" if c.error == 0 else f"{c.error:+d} messages" for c in shown],
            hovertemplate="predicted: before message %{x}<br>%{text}<br>%{y:,} tokens<extra></extra>"))
    fig.update_xaxes(title_text="message")
    fig.update_yaxes(title_text="tokens", tickformat=",")
    return _layout(fig, "Context as the agent measured it, and where it compacted")
