"""Metric cards and the Charts tab: context over time, briefing growth, cumulative cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from workbench import plots
from workbench.analysis.compare import compact_number
from workbench.replay import Metrics, Run

if TYPE_CHECKING:
    import plotly.graph_objects as go

COUNTERFACTUAL = (
    "Counterfactual replay: assumes the agent would have sent the same messages after each compaction."
)


def metric_cards(m: Metrics, a: Metrics | None = None) -> None:
    """Peak context, peak/window, compressions, overflows, failures, tokens and dollars per task (Δ vs A)."""

    def delta(name: str, fmt: str) -> str | None:
        if a is None:
            return None
        d = getattr(m, name) - getattr(a, name)
        return fmt.format(d) if d else None

    cols = st.columns(7)
    cards = (
        ("peak context", compact_number(m.peak_tokens), delta("peak_tokens", "{:+,}"),
         f"{m.peak_tokens:,} tokens; no compaction: {m.baseline_peak_tokens:,}"),
        ("peak / window", f"{m.peak_ratio:.0%}", delta("peak_ratio", "{:+.1%}"), f"window {m.window_tokens:,} tokens"),
        ("compressions", f"{m.compressions:,}", delta("compressions", "{:+,}"), "landed compressions"),
        ("overflows", f"{m.overflows:,}", delta("overflows", "{:+,}"),
         f"checks above the window, in {m.overflow_events} runs"),
        ("failed", f"{m.failed_compressions:,}", delta("failed_compressions", "{:+,}"),
         "failed compressions: the briefer failed and the history stayed uncompressed"),
        ("tokens / task", compact_number(m.tokens_per_task), delta("tokens_per_task", "{:+,}"),
         f"tokens per task: {m.tokens_per_task:,} (agent + briefer, in and out); no compaction: {m.baseline_tokens_per_task:,}"),
        ("dollars / task", compact_number(m.dollars_per_task, dollars=True), delta("dollars_per_task", "{:+,.2f}"),
         f"dollars per task; ${m.dollars_per_task_cached:,.2f} with prompt caching"
         + ("" if m.prices_known else "; model not in the price registry")),
    )
    for col, (label, value, d, help_text) in zip(cols, cards, strict=True):
        col.metric(label, value, d, delta_color="inverse", help=help_text, border=True)


BANDS_NOTE = (
    "Bands: the budget hint the next compression receives, by the previous briefing's size against the target "
    "(< 60%: carry it over in full; 60–85%: condense lightly; ≥ 85%: condense the oldest topics)."
)


def show(fig: go.Figure, key: str, **kwargs: Any) -> Any:
    """Draw a workbench figure as built (its own template, so the app and the notebooks look the same).

    Returns what st.plotly_chart returns: the selection state when ``on_select`` is given, else the element.
    """
    return st.plotly_chart(fig, key=key, theme=None, config={"displaylogo": False}, **kwargs)


def charts_tab(run: Run, previews: list[str], cost: pl.DataFrame) -> None:
    """The three charts of one run."""
    with st.container(key="context_chart"):
        show(plots.context_figure(run, previews=previews), "context")
    left, right = st.columns(2)
    with left:
        show(plots.briefing_figure(run), "briefing")
        st.caption(BANDS_NOTE)
    with right:
        show(plots.cost_figure(cost), "cost")
    st.caption(COUNTERFACTUAL)
