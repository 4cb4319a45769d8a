"""Context over the conversation: the stacked context per check with its limits, events and a logged overlay."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import polars as pl

from workbench.display.untrusted import hover
from workbench.plots.style import (
    BASELINE,
    BRIEFING,
    COMPARE,
    FAILED,
    HARD_CAP,
    KEPT,
    LANDED,
    MAX_POINTS,
    OVERFLOW,
    PINNED,
    REAL,
    RESTORED,
    STARTED,
    SYSTEM,
    TRIGGER,
    VERBATIM,
    WINDOW,
    hline_spec,
    layout_spec,
    legend_line,
    scatter,
    thin,
    vline_spec,
)
from workbench.replay import Run


@functools.lru_cache(maxsize=65_536)
def _wrap(text: str, width: int = 60) -> str:
    """Break a preview into lines for a hover box (plotly needs <br>)."""
    text = hover(text)  # a transcript's words: its tags and entities shown, not rendered
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "<br>".join(lines[:2])  # two lines: a third added 70 KB to every slider move on the long sample


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
    A real agent log adds ``logged`` (``workbench.analysis.real_logs.reality.logged_context_frame``): the context as
    the agent measured it from its bill; its own compactions (``logged_compactions``, first message after) are a
    line and a diamond each, beside the replay's own compaction marks. The figure of ``context_spec``.
    """
    return go.Figure(context_spec(run, previews=previews, compare=compare, labels=labels, logged=logged,
                                  logged_compactions=logged_compactions))


def context_spec(
    run: Run,
    *,
    previews: Sequence[str] | None = None,
    compare: Run | None = None,
    labels: tuple[str, str] = ("B", "A"),
    logged: pl.DataFrame | None = None,
    logged_compactions: Sequence[int] = (),
) -> dict:
    """``context_figure`` as plotly's JSON structure (``{"data": [...], "layout": {...}}``), built without plotly.py's
    validation: the app redraws this chart on every slider move, and building it as ``go`` objects took ~0.4 s of
    each move on the long sample; a dict takes under a millisecond (benchmarks/browser.py)."""
    tl = run.timeline
    if tl.height > MAX_POINTS:  # markers below use the run's own compressions, so every event stays exact
        tl = tl[thin(tl["total"].to_numpy())]
    k = run.knobs
    window = k.context_window_tokens
    x = tl["index"].to_numpy()
    data: list[dict] = []
    shapes: list[dict] = []
    stack = [("system", "hidden prefix", SYSTEM), ("briefing", "briefing", BRIEFING),
             ("restored", "restored after compaction", RESTORED), ("pinned", "pinned", PINNED),
             ("verbatim", "verbatim messages", VERBATIM)]
    for col, name, color in stack:
        if col not in tl.columns:
            continue
        values = tl[col].to_numpy()
        if col != "verbatim" and not values.any():
            continue
        data.append(scatter(x=x, y=values, name=name, stackgroup="context", mode="lines",
                            line={"width": 0.5, "color": color}, fillcolor=color,
                            hovertemplate=f"{name}: %{{y:,}}<extra></extra>"))
    roles = tl["role"].to_list()
    idx = tl["index"].to_list()
    texts = [_wrap(previews[i]) if previews is not None and i < len(previews) else "" for i in idx]
    data.append(scatter(
        x=x, y=tl["total"].to_numpy(), name="context", mode="lines", line={"width": 1.2, "color": "#1f3b5c"},
        # lists, not a numpy array of strings: plotly's orjson encoder takes those as they are, but an array of
        # strings sends the whole figure through its slow cleaning walk (~15-40 ms a slider move here)
        customdata=[[str(i), r, t] for i, r, t in zip(idx, roles, texts, strict=True)] if idx else None,
        hovertemplate="<b>context %{y:,} tokens</b><br>message %{customdata[0]} (%{customdata[1]})"
        "<br>%{customdata[2]}<extra></extra>",
        showlegend=False,
    ))
    baseline = tl["baseline"].to_numpy()
    total = tl["total"].to_numpy()
    other = compare.timeline if compare is not None else None
    top = max(window, int(total.max()) if len(total) else 0)
    if other is not None and other.height:
        top = max(top, int(other["total"].to_numpy().max()))
    peak_base = int(baseline.max()) if tl.height else 0
    base_name = "no compaction" if peak_base <= top * 1.08 else f"no compaction (peak {peak_base:,}, off the chart)"
    data.append(scatter(x=x, y=baseline, name=base_name, mode="lines",
                        line={"width": 1.2, "color": BASELINE, "dash": "dot"}, opacity=0.55,
                        hovertemplate="no compaction: %{y:,}<extra></extra>"))
    trigger = tl["trigger"].to_numpy()
    lim = run.limits
    bind = lim.trigger.binding if lim is not None else None
    if np.isfinite(trigger).any():
        name = f"trigger ({bind.label})" if bind is not None else "trigger"
        data.append(scatter(x=x, y=trigger, name=name, mode="lines",
                            line={"width": 1.5, "color": TRIGGER, "dash": "dash", "shape": "hv"},
                            hovertemplate="trigger: %{y:,.0f}<extra></extra>", connectgaps=False))
    if lim is not None:  # the terms that do not bind, faint, so the chart shows why the trigger sits where it does
        for term in lim.trigger.terms:
            if term.name != lim.trigger.binds and term.tokens <= top * 1.08:
                shapes.append(hline_spec(term.tokens, {"color": HARD_CAP, "dash": "dot", "width": 1}))
                data.append(legend_line(f"{term.label} (not binding)", HARD_CAP, "dot"))
        kept = lim.kept
        if kept is not None and kept.tokens is not None and kept.tokens <= top * 1.08:
            shapes.append(hline_spec(kept.tokens, {"color": KEPT, "dash": "dot", "width": 1.2}))
            data.append(legend_line("kept budget", KEPT, "dot"))
    elif k.trigger_hard_cap_tokens < window and not np.isfinite(trigger).any():
        shapes.append(hline_spec(k.trigger_hard_cap_tokens, {"color": HARD_CAP, "dash": "dot", "width": 1.2}))
        data.append(legend_line("hard cap", HARD_CAP, "dot"))
    shapes.append(hline_spec(window, {"color": WINDOW, "width": 1.6}))
    data.append(legend_line("window", WINDOW, "solid"))
    data += _markers(run)
    if compare is not None:
        ct = compare.timeline
        if ct.height > MAX_POINTS:
            ct = ct[thin(ct["total"].to_numpy())]
        data.append(scatter(x=ct["index"].to_numpy(), y=ct["total"].to_numpy(), name=f"{labels[1]}: context",
                            mode="lines", line={"width": 1.8, "color": COMPARE, "dash": "dash"},
                            hovertemplate=f"{labels[1]} context: %{{y:,}}<extra></extra>"))
    if logged is not None and logged.height:
        measured = logged["measure"].to_numpy()
        top = max(top, int(measured.max()))
        data.append(scatter(x=logged["index"].to_numpy(), y=measured, name="logged: the agent's measure",
                            mode="lines", line={"width": 1.6, "color": REAL},
                            hovertemplate="logged (the agent's bill): %{y:,}<extra></extra>"))
    for j, index in enumerate(logged_compactions):
        shapes.append(vline_spec(index, {"color": REAL, "width": 1.2, "dash": "longdash"}))
        if j == 0:
            data.append(legend_line("logged compaction", REAL, "longdash"))
    if len(logged_compactions):
        # A mark where the agent compacted, at the context it measured just before (the replay's without a log
        # frame), beside the replay's own "compression started" marks.
        if logged is not None and logged.height:
            measure = logged["measure"].to_numpy()
            ys = [int(measure[max(0, min(i - 1, len(measure) - 1))]) for i in logged_compactions]
        else:
            ys = [int(total[max(0, int(np.searchsorted(x, i, side="left")) - 1)]) if len(x) else 0
                  for i in logged_compactions]
        data.append(scatter(
            x=list(logged_compactions), y=ys, name="the agent compacted", mode="markers",
            marker={"symbol": "diamond", "size": 11, "color": REAL, "line": {"width": 1, "color": "white"}},
            hovertemplate="the agent compacted before message %{x:,} (%{y:,} tokens)<extra></extra>"))
    right = max(int(x.max()) if len(x) else 1, int(other["index"].to_numpy().max()) if other is not None
                and other.height else 0, 1)
    layout = layout_spec(f"Context over the conversation — {hover(run.history_id)}", height=540)
    # Eleven entries wrap on a laptop screen: below the axis they push the plot down, above it they hit the title.
    layout["legend"] = {**layout["legend"], "y": -0.16, "yanchor": "top"}
    layout["margin"] = {**layout["margin"], "t": 45, "b": 40}
    layout.update(
        hovermode="x unified" if tl.height <= 4000 else "closest",
        yaxis={"range": [0, top * 1.08], "title": {"text": "context (tokens)"}, "tickformat": "~s",
               "rangemode": "tozero"},
        xaxis={"title": {"text": "message index"}, "tickformat": ",d", "range": [0, right]},
        shapes=shapes,
    )
    return {"data": data, "layout": layout}


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



def _markers(run: Run) -> list[dict]:
    tl = run.timeline
    total = tl["total"].to_numpy()
    out: list[dict] = []
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
        out.append(scatter(
            x=[p[0] for p in points], y=[p[1] for p in points], name=name, mode="markers",
            marker={"symbol": symbol, "size": size, "color": color, "line": {"width": 1, "color": "white"}},
            customdata=[[c.chain_index, c.messages_folded, c.kept, c.briefing_chars] for _, _, c in points],
            hovertemplate=f"{name} #%{{customdata[0]}}: %{{y:,}} tokens<br>folded %{{customdata[1]:,}} messages,"
            " kept %{customdata[2]:,}, briefing %{customdata[3]:,} chars<extra></extra>",
        ))
    over = [e for e in run.events if e.kind == "overflow"]
    if over:
        out.append(scatter(
            x=[e.index for e in over], y=[int(total[e.check]) for e in over], name="overflow", mode="markers",
            marker={"symbol": "star", "size": 13, "color": OVERFLOW, "line": {"width": 1, "color": "white"}},
            hovertemplate="overflow: %{y:,} tokens > window<extra></extra>",
        ))
    return out
