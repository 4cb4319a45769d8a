"""Briefing growth across the chain of compressions, against the target and its budget-hint bands."""

from __future__ import annotations

import plotly.graph_objects as go

from workbench.plots.style import BASELINE, COMPARE, FAILED, _layout, _legend_line, figure, hline, hrect
from workbench.replay import Run

BANDS = (("< 60% of target", 0.0, 0.6, "#2ca02c"), ("60–85%", 0.6, 0.85, "#f2a900"),
         ("≥ 85%", 0.85, None, "#d62728"))


def briefing_figure(run: Run, *, compare: Run | None = None, labels: tuple[str, str] = ("B", "A")) -> go.Figure:
    """Briefing size per compression of the chain against the target, over the budget-hint bands."""
    target = run.knobs.target_briefing_chars
    comps = [c for c in run.compressions if c.summarize]
    fig = figure()
    sizes = [c.briefing_chars for c in comps if c.status != "failed"]
    top = max([target * 1.25, *(s * 1.1 for s in sizes)])
    if compare is not None:
        top = max([top, *(c.briefing_chars * 1.1 for c in compare.compressions if c.summarize)])
    for label, lo, hi, color in BANDS:
        y0, y1 = lo * target, (hi * target if hi is not None else top)
        hrect(fig, y0, y1, color, 0.08)
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
    hline(fig, target, {"color": "#333333", "dash": "dash", "width": 1.3})
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
