"""Metric cards and the Charts tab: context over time, briefing growth, cumulative cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from workbench import plots
from workbench.analysis.compare import compact_number, format_delta
from workbench.analysis.real_logs.free_replay import AgainstLog
from workbench.history.session_log import START_NOTE_PREFIX
from workbench.history.words import counted
from workbench.replay import METRIC_SPECS, Metrics, Run
from workbench.ui import fast_chart, first_paint

if TYPE_CHECKING:
    import plotly.graph_objects as go

COUNTERFACTUAL = (
    "Counterfactual replay: assumes the agent would have sent the same messages after each compaction."
)


def metric_cards(m: Metrics, a: Metrics | None = None, place: str = "page") -> None:
    """Ten cards in two rows (context and cost, then what the compactions did), each with its Δ against A.

    Two rows of five fit a 1280 px screen with the sidebar open; values use the short forms of
    ``compact_number`` and deltas the same form, with the colour saying whether the move is better. ``place`` names
    the rows' keys (one set of cards per place on a page).
    """

    def card(col: object, name: str, value: str, help_text: str) -> None:
        d = None
        if a is not None:
            diff = getattr(m, name) - getattr(a, name)
            d = format_delta(name, diff, getattr(m, name)) if diff else None
        spec = METRIC_SPECS[name]
        colour = "off" if spec.lower_is_better is None else "inverse" if spec.lower_is_better else "normal"
        col.metric(spec.short, value, d, delta_color=colour, help=help_text, border=True)  # type: ignore[attr-defined]

    prices = "" if m.prices_known else "; model not in the price registry"
    first = (
        ("peak_tokens", compact_number(m.peak_tokens),
         f"{m.peak_tokens:,} tokens at the fullest check; no compaction: {m.baseline_peak_tokens:,}"),
        ("peak_ratio", f"{m.peak_ratio:.0%}", f"peak context over the {m.window_tokens:,}-token window"),
        ("overflows", f"{m.overflows:,}", f"checks above the window, in {counted(m.overflow_events, 'run')}"),
        ("tokens_per_task", compact_number(m.tokens_per_task),
         f"{m.tokens_per_task:,} tokens per task (agent + briefer, in and out); no compaction: "
         f"{m.baseline_tokens_per_task:,}"),
        ("dollars_per_task", compact_number(m.dollars_per_task, dollars=True),
         f"${m.dollars_per_task:,.2f} per task at list price; ${m.dollars_per_task_cached:,.2f} with prompt caching"
         + prices),
    )
    second = (
        ("compressions", f"{m.compressions:,}", f"landed compactions in {counted(m.checks, 'check')}"),
        ("failed_compressions", f"{m.failed_compressions:,}", METRIC_SPECS["failed_compressions"].help),
        ("thrash_events", f"{m.thrash_events:,}", METRIC_SPECS["thrash_events"].help),
        ("ineffective_compressions", f"{m.ineffective_compressions:,}", METRIC_SPECS["ineffective_compressions"].help),
        ("max_briefing_chars", compact_number(m.max_briefing_chars),
         f"{m.max_briefing_chars:,} chars, the longest briefing of the chain; the last one: {m.final_briefing_chars:,}"),
    )
    for i, row in enumerate((first, second)):
        # A row, not columns: the same five cards of equal width (the page style), and 6 elements instead of 11 for
        # the browser to re-render on every knob move (benchmarks/README.md, browser_slider).
        box = st.container(horizontal=True, key=f"{first_paint.CARDS}_{place}_{i}")
        for name, value, help_text in row:
            card(box, name, value, help_text)


def pricing_note(run: Run, history: Any = None, logged: Any = None) -> None:
    """How the dollar cards were priced (model, price source, list vs cached) and, for a real agent log, the
    log's own bill at the same prices beside the replay's. Plain text: the model's name comes from the log."""
    from workbench.counting.prices import get_prices, price_note
    from workbench.counting.registry import registry_source

    m = run.metrics
    prices = get_prices(run.knobs.model)
    lines = [f"$ / task: the replay's calls, {price_note(prices)} ({registry_source()}); list price "
             f"${m.dollars_per_task:,.2f}, with prompt caching ${m.dollars_per_task_cached:,.2f}."]
    log = getattr(history, "log", None)
    if logged is not None and log is not None:
        from workbench.analysis.real_logs.bill import log_cache_rules

        rules = log_cache_rules(log)
        lines.append(f"This log's own bill, from its usage ({logged.calls:,} calls: {logged.input:,} uncached input, "
                     f"{logged.cache_read:,} cache reads, {logged.cache_write:,} cache writes, {logged.output:,} output "
                     f"tokens), at the same prices: ${logged.dollars(prices, one_hour_writes=rules.one_hour_writes):,.2f}"
                     " with its caching. The Reality tab sets the replay's model of it beside it.")
    for line in lines:
        st.text(line)


def run_warnings(run: Run) -> None:
    """Thrash, ineffective compactions and an oversized briefing target, above the tabs (``analysis.health``)."""
    from workbench.analysis.health import run_findings

    for finding in run_findings(run):
        st.warning(finding.text, icon="⚠️")


def log_lines(run: Run, against: AgainstLog | None, counterfactual: bool) -> None:
    """Above the context chart of an agent log: where its context starts, how far the replay's compactions are
    from the agent's (or that the knobs make it a counterfactual), and which counter counted it. Engine text,
    drawn as plain text."""
    for note in run.log_notes:
        if note.lower().startswith(START_NOTE_PREFIX):
            st.warning(note, icon="⚠️")
    if against is not None:
        with st.container(key="against_log"):
            st.text(against.sentence(counterfactual=counterfactual))
    for note in run.log_notes:
        if not note.lower().startswith(START_NOTE_PREFIX):
            st.caption(note)


BANDS_NOTE = (
    "Bands: the budget hint the next compression receives, by the previous briefing's size against the target "
    "(< 60%: carry it over in full; 60–85%: condense lightly; ≥ 85%: condense the oldest topics)."
)


def show(fig: go.Figure | dict, key: str, *, after_paint: bool = False, **kwargs: Any) -> Any:
    """Draw a workbench figure as built (its own template, so the app and the notebooks look the same); ``fig`` may
    be its JSON structure (``plots.context_spec``: no plotly.py validation on every slider move).

    Returns what st.plotly_chart returns: the selection state when ``on_select`` is given, else the element (None
    for a figure drawn with plotly.js's basic bundle: ``fast_chart``, the faster cold start). ``after_paint``: with the
    basic bundle, draw it after the browser's next frame (``fast_chart.chart``).
    """
    config = {"displaylogo": False}
    if not kwargs and fast_chart.available(fig):
        fast_chart.chart(fig, key, config, after_paint=after_paint)
        return None
    if isinstance(fig, dict):
        import plotly.graph_objects as go

        fig = go.Figure(fig)
    return st.plotly_chart(fig, key=key, theme=None, config=config, **kwargs)


def context_chart(run: Run, previews: list[str], logged: pl.DataFrame | None = None,
                  logged_compactions: tuple[int, ...] = (), *, against: AgainstLog | None = None,
                  counterfactual: bool = False) -> None:
    """The Charts tab's first chart: the context over the conversation (a real agent log adds its logged context and
    compactions, and a line that says how far the replay's compactions are from the agent's). The app sends it before
    anything else on the page is drawn, and ``lower_charts`` after it (benchmarks/browser.py)."""
    log_lines(run, against, counterfactual)
    with st.container(key="context_chart"):
        show(plots.context_spec(run, previews=previews, logged=logged, logged_compactions=logged_compactions),
             "context")
        st.caption(plots.binding_caption(run))


def lower_charts(run: Run, cost: pl.DataFrame) -> None:
    """The Charts tab's briefing and cost charts, side by side, and the counterfactual caveat. Both figures are built
    before either is sent: on a cold start the browser draws the context chart alone first."""
    briefing, cost_chart = plots.briefing_spec(run), plots.cost_spec(cost)
    left, right = st.columns(2)
    with left:  # drawn after the context chart is on screen (a knob move is watched on that one)
        show(briefing, "briefing", after_paint=True)
        st.caption(BANDS_NOTE)
    with right:
        show(cost_chart, "cost", after_paint=True)
    st.caption(COUNTERFACTUAL)
