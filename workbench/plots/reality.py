"""A real agent log: its own context measure and billed calls, logged compactions beside predicted ones."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from workbench.plots.style import PREDICTED, REAL, SYSTEM, TRIGGER, VERBATIM, WINDOW, _layout, _legend_line, figure


def reality_figure(frame: pl.DataFrame, session: object, *, threshold: float | None = None,
                   window: int | None = None) -> go.Figure:
    """A real log: the agent's own context measure and the billed calls, real compactions beside predicted ones.

    ``frame`` is ``workbench.analysis.real_logs.reality.logged_context_frame``; ``session`` a ``SessionReality``.
    """
    fig = figure()
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
