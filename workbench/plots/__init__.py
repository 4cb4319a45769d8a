"""Plotly figures of a run: context over time, briefing growth across the chain, cumulative cost, sweeps, tuning.

Each builder takes engine values (a Run, a polars frame) and returns a ``go.Figure``; no ``st.``, no
``.show()``. The app passes them to ``st.plotly_chart``, a notebook just displays them. ``compare``
arguments overlay a second run (the pinned A of an A/B comparison) on the same axes.

One module per figure family: ``context``, ``briefing``, ``cost``, ``sweep`` (the heatmap), ``pareto``
(auto-tune), ``reality`` (a real log); ``style`` holds what they share (colours, template, layout,
thinning). Import from here: ``from workbench import plots; plots.context_figure(run)``.
"""

from workbench.plots.briefing import BANDS, briefing_figure, briefing_spec
from workbench.plots.context import binding_caption, context_figure, context_spec
from workbench.plots.cost import cost_figure, cost_spec
from workbench.plots.pareto import MET, MISSED, OBJECTIVE_LABELS, WINNER, pareto_figure
from workbench.plots.reality import reality_figure
from workbench.plots.style import (
    BASELINE,
    BRIEFING,
    COMPARE,
    FAILED,
    FONT,
    HARD_CAP,
    KEPT,
    LANDED,
    LEGEND,
    MAX_POINTS,
    OVERFLOW,
    PINNED,
    PREDICTED,
    REAL,
    RESTORED,
    STARTED,
    SYSTEM,
    TEMPLATE_JSON,
    TRIGGER,
    VERBATIM,
    WINDOW,
    thin,
)
from workbench.plots.sweep import cell_key, pivot_metric, sweep_figure, tick

__all__ = [
    "BANDS",
    "BASELINE",
    "BRIEFING",
    "COMPARE",
    "FAILED",
    "FONT",
    "HARD_CAP",
    "KEPT",
    "LANDED",
    "LEGEND",
    "MAX_POINTS",
    "MET",
    "MISSED",
    "OBJECTIVE_LABELS",
    "OVERFLOW",
    "PINNED",
    "PREDICTED",
    "REAL",
    "RESTORED",
    "STARTED",
    "SYSTEM",
    "TEMPLATE",
    "TEMPLATE_JSON",
    "TRIGGER",
    "VERBATIM",
    "WINDOW",
    "WINNER",
    "binding_caption",
    "briefing_figure",
    "briefing_spec",
    "cell_key",
    "context_figure",
    "context_spec",
    "cost_figure",
    "cost_spec",
    "pareto_figure",
    "pivot_metric",
    "reality_figure",
    "sweep_figure",
    "thin",
    "tick",
]


def __getattr__(name: str) -> object:
    if name == "TEMPLATE":  # a plotly object built on first use (plots.style.template)
        from workbench.plots.style import template

        return template()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
