"""The A/B tab: pin the current knobs as A, change the sidebar (B), see both on the same charts."""

from __future__ import annotations

import streamlit as st

from workbench import plots
from workbench.display.untrusted import literal
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.replay import Run
from workbench.ui import runs
from workbench.ui import state as ui_state
from workbench.ui.charts import show

PINNED = "ab_pinned"  # the Knobs pinned as A


def _pin() -> None:
    try:
        st.session_state[PINNED] = ui_state.knobs_from_values(st.session_state)
    except ValueError as exc:
        ui_state.flash(st.session_state, "error", literal(exc))


def _unpin() -> None:
    st.session_state.pop(PINNED, None)


def _load_a() -> None:
    """Swap: the sidebar shows A and A becomes what the sidebar showed."""
    a = st.session_state.get(PINNED)
    if a is None:
        return
    st.session_state[PINNED] = ui_state.knobs_from_values(st.session_state)
    ui_state.apply_knobs(st.session_state, a)


def render(run: Run, run_a: Run | None, history: History, knobs: Knobs, briefer: str) -> None:
    from workbench.analysis.compare import display_deltas, knob_differences, metric_deltas

    left, mid, right = st.columns(3)
    left.button("Pin the current knobs as A", on_click=_pin, key="ab_pin", type="primary", width="stretch")
    mid.button("Swap A and B", on_click=_load_a, key="ab_swap", disabled=run_a is None, width="stretch")
    right.button("Clear A", on_click=_unpin, key="ab_clear", disabled=run_a is None, width="stretch")
    if run_a is None:
        st.info("Pin the current knobs as **A**, then move the sliders: the sidebar is **B**, and A is drawn "
                "dashed on the same charts with a table of metric deltas.")
        return
    diff = knob_differences(run_a.knobs, knobs)
    if diff.height:
        import polars as pl

        from workbench.display.labels import knob_title

        titled = diff.select(pl.col("knob").map_elements(knob_title, return_dtype=pl.Utf8).alias("knob"),
                             pl.col("knob").alias("name"), "A", "B")
        st.dataframe(titled, hide_index=True, key="ab_knobs")
    else:
        st.caption("A and B have the same knobs: move a slider to compare.")
    st.dataframe(display_deltas(metric_deltas(run_a.metrics, run.metrics)), hide_index=True, key="ab_metrics")
    key = history.digest
    labels = ("B", "A")
    show(plots.context_spec(run, previews=runs.previews(key, history), compare=run_a, labels=labels), "ab_context")
    c1, c2 = st.columns(2)
    with c1:
        show(plots.briefing_spec(run, compare=run_a, labels=labels), "ab_briefing")
    cost_b = runs.costs(key, knobs, briefer, run, history)
    cost_a = runs.costs(key, run_a.knobs, briefer, run_a, history)
    with c2:
        show(plots.cost_spec(cost_b, compare=cost_a, labels=labels), "ab_cost")
