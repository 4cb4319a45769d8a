"""A/B comparison of two runs: which knobs differ and how each headline metric moved.

Rows, not prose, so the app shows them as a table and a notebook can filter them. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses

import polars as pl

from workbench.knobs import Knobs
from workbench.replay import METRIC_SPECS, Metrics

# The metrics of the A/B table, in the order the app shows them; their labels and which way is better come from
# ``METRIC_SPECS`` (None: neither, as for the largest briefing: less context but also less carried over).
HEADLINE_METRICS: tuple[str, ...] = (
    "peak_tokens", "peak_ratio", "compressions", "overflows", "failed_compressions", "thrash_events",
    "ineffective_compressions", "tokens_per_task", "dollars_per_task", "dollars_per_task_cached",
    "mean_context_tokens", "max_briefing_chars", "briefer_dollars",
)


def metric_deltas(a: Metrics, b: Metrics) -> pl.DataFrame:
    """One row per headline metric: A, B, B - A, relative change and whether B is better."""
    rows = []
    for name in HEADLINE_METRICS:
        label, lower_better = METRIC_SPECS[name].label, METRIC_SPECS[name].lower_is_better
        va, vb = float(getattr(a, name)), float(getattr(b, name))
        delta = vb - va
        rows.append(
            {
                "name": name,
                "metric": label,
                "A": va,
                "B": vb,
                "delta": delta,
                "change": delta / va if va else None,
                "better": None if delta == 0 or lower_better is None else (delta < 0) == lower_better,
            }
        )
    schema = {"name": pl.Utf8, "metric": pl.Utf8, "A": pl.Float64, "B": pl.Float64, "delta": pl.Float64, "change": pl.Float64,
              "better": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def format_metric(name: str, value: float | None, *, signed: bool = False) -> str:
    """A metric as a person reads it: 51.8%, $205.40, 63,330,000 (``signed`` adds + for deltas)."""
    if value is None:
        return ""
    sign = "+" if signed and value > 0 else ""
    if name.endswith("_ratio"):
        return f"{sign}{value:.1%}"
    if "dollars" in name:
        sign = "-" if value < 0 else sign
        return f"{sign}${abs(value):,.2f}" if abs(value) >= 1 else f"{sign}${abs(value):,.4f}"
    return f"{sign}{value:,.0f}"


def compact_number(value: float, *, dollars: bool = False) -> str:
    """A short form for a metric card (104k, 63.3M, $205): cards are narrow on a laptop screen.

    >>> compact_number(103_570), compact_number(63_329_610), compact_number(205.38, dollars=True)
    ('104k', '63.3M', '$205')
    """
    if dollars:
        a = abs(value)
        body = f"{a:,.0f}" if a >= 100 else f"{a:.1f}" if a >= 10 else f"{a:.2f}" if a >= 0.01 else f"{a:.4f}"
        return ("-" if value < 0 else "") + "$" + body
    a = abs(value)
    if a >= 999_950_000:  # where one decimal would round up to the next unit
        return f"{value / 1e9:.1f}B"
    if a >= 999_950:
        return f"{value / 1e6:.1f}M"
    if a >= 99_950:
        return f"{value / 1e3:.0f}k"
    if a >= 1e4:
        return f"{value / 1e3:.1f}k"
    return f"{value:,.0f}"


def format_delta(name: str, delta: float, value: float | None = None) -> str:
    """A card's delta in the card's own short form: "-9.6M" under "63.3M", "-5.8k" under "13.0k", "-$28.8"
    under "$205", "+3%" under "52%". ``value`` (the card's value) sets the unit, so both read alike."""
    if name.endswith("_ratio"):
        return f"{delta:+.0%}" if abs(delta) >= 0.01 else f"{delta:+.1%}"
    sign = "+" if delta > 0 else ""  # compact_number writes the minus itself
    if "dollars" in name:
        return sign + compact_number(delta, dollars=True)
    scale = max(abs(delta), abs(value) if value is not None else 0.0)
    if 1e4 <= scale < 999_950 and abs(delta) < 99_950:
        return f"{sign}{delta / 1e3:.1f}k"
    if 999_950 <= scale < 999_950_000 and abs(delta) < 999_950:
        return f"{sign}{delta / 1e6:.2f}M"
    return sign + compact_number(delta)


def display_deltas(frame: pl.DataFrame) -> pl.DataFrame:
    """``metric_deltas`` as text, each row in its own unit (the app's table)."""
    rows = [
        {
            "metric": r["metric"],
            "A": format_metric(r["name"], r["A"]),
            "B": format_metric(r["name"], r["B"]),
            "B − A": format_metric(r["name"], r["delta"], signed=True),
            "change": "" if r["change"] is None else f"{r['change']:+.1%}",
            "B better": "neither" if r["better"] is None and r["delta"] and METRIC_SPECS[r["name"]].lower_is_better is None
            else {True: "yes", False: "no", None: ""}[r["better"]],
        }
        for r in frame.iter_rows(named=True)
    ]
    return pl.DataFrame(rows, schema=dict.fromkeys(("metric", "A", "B", "B − A", "change", "B better"), pl.Utf8))


def knob_differences(a: Knobs, b: Knobs) -> pl.DataFrame:
    """The knobs whose values differ between A and B (values as text, so mixed types fit one column)."""
    rows = [
        {"knob": f.name, "A": str(getattr(a, f.name)), "B": str(getattr(b, f.name))}
        for f in dataclasses.fields(Knobs)
        if getattr(a, f.name) != getattr(b, f.name)
    ]
    return pl.DataFrame(rows, schema={"knob": pl.Utf8, "A": pl.Utf8, "B": pl.Utf8})
