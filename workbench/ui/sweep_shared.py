"""What the Sweep tab's grid and its auto-tune panel share: the knobs a search may vary, the per-history table."""

from __future__ import annotations

import dataclasses

import polars as pl
import streamlit as st

from workbench.display import labels
from workbench.knobs import KNOB_SPECS, Knobs


def numeric_knobs() -> list[str]:
    """Knobs a grid can sweep: numbers with a range."""
    out = []
    for f in dataclasses.fields(Knobs):
        t = f.type if isinstance(f.type, str) else f.type.__name__
        spec = KNOB_SPECS.get(f.name)
        if t in ("int", "float") and spec is not None and spec.low is not None and spec.high is not None:
            out.append(f.name)
    return out


def _history_table(rows: pl.DataFrame, key: str, *, briefer: str | None = None) -> None:
    """Per-history rows in words: compressions, cost, overflows, retention (naming its briefer)."""
    if not rows.height:
        return
    out = rows.with_columns(pl.when(pl.col("compresses")).then(pl.lit("yes"))
                            .otherwise(pl.lit("no: these knobs do not touch it")).alias("compresses"))
    names = {**labels.SWEEP_COLUMNS_SHORT, "compresses": "compresses"}
    helps = {c: f"`{c}`" for c in out.columns}
    if briefer is not None:  # the briefer goes in the tooltip: in the header it pushes columns off a 1280 px screen
        for c in ("retention", "sidebar_retention"):
            helps[c] = f"`{c}`: fact retention with the {briefer} briefer"
    config = {c: st.column_config.NumberColumn(names.get(c, c), format="localized", help=helps[c]) for c in out.columns
              if c in ("tokens_per_task", "compressions", "overflows", "thrash_events", "facts_checked",
                       "sidebar_tokens_per_task")}
    if "dollars_per_task" in out.columns:
        config["dollars_per_task"] = st.column_config.NumberColumn(names["dollars_per_task"], format="dollar",
                                                                   help=helps["dollars_per_task"])
    for c in ("peak_ratio", "retention", "sidebar_retention"):
        if c in out.columns:
            config[c] = st.column_config.NumberColumn(names.get(c, c), format="percent", help=helps[c])
    for c in ("history", "config", "compresses", "briefer"):
        if c in out.columns:
            config[c] = st.column_config.TextColumn(names.get(c, c), help=helps[c])
    st.dataframe(out, hide_index=True, key=key, column_config=config)
