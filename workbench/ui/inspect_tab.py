"""The Compressions tab: a table of every compression; the chosen one's folded and kept messages,
the compact history the briefer read, the user message with its budget hint, and the briefing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
import streamlit as st

from workbench.display import labels
from workbench.display.untrusted import literal
from workbench.history.model import History
from workbench.history.words import counted
from workbench.io.files import encodable
from workbench.replay import Run

LIVE_RUN = "live_run"  # set by the Live runs tab: (history digest, Run)
COLUMNS = ("chain_index", "status", "index_started", "index_landed", "boundary", "messages_folded", "kept",
           "stop", "tokens_before", "tokens_after", "previous_chars", "bucket", "briefing_chars", "briefer_model",
           "briefer_cache_hit", "briefer_cost_usd")


def compressions_in_words(frame: pl.DataFrame, columns: Sequence[str]) -> tuple[pl.DataFrame, dict[str, Any]]:
    """``columns`` of a compressions frame with codes (lt60, floor) as words, and a column config whose headers are
    ``labels.COLUMNS``' words, the identifier in each header's tooltip: the Compressions and Live runs tables."""

    shown = frame.select([c for c in columns if c in frame.columns])
    words = {"bucket": labels.bucket_words, "stop": labels.stop_words}
    shown = shown.with_columns(pl.col(col).map_elements(f, return_dtype=pl.Utf8) for col, f in words.items()
                               if col in shown.columns)
    if "briefer_attempts" in shown.columns:  # a list of "outcome:model": one line of text
        shown = shown.with_columns(pl.col("briefer_attempts").list.join(", "))
    config: dict[str, Any] = {
        col: st.column_config.NumberColumn(labels.COLUMNS.get(col, col), format="localized", help=f"`{col}`")
        for col in shown.columns
        if col.endswith(("tokens_before", "tokens_after", "_chars", "index_started", "index_landed", "boundary",
                         "messages_folded", "kept"))}
    if "briefer_cost_usd" in shown.columns:
        config["briefer_cost_usd"] = st.column_config.NumberColumn(labels.COLUMNS["briefer_cost_usd"], format="dollar",
                                                                   help="`briefer_cost_usd`")
    for col in shown.columns:  # every other column: its words as the header, the identifier in the tooltip
        config.setdefault(col, st.column_config.Column(labels.COLUMNS.get(col, col), help=f"`{col}`"))
    return shown, config


def render(run: Run, history: History) -> None:
    from workbench.analysis.inspector import compression_view

    live = st.session_state.get(LIVE_RUN)
    if live is not None and live[0] == history.digest:
        which = st.radio("run", ["current knobs", "last live run"], horizontal=True, key="inspect_run")
        if which == "last live run":
            run = live[1]
    if not run.compressions:
        st.info("No compression in this run: lower trigger_ratio or the hard cap in the sidebar.")
        return
    frame = run.compressions_frame()
    shown, config = compressions_in_words(frame, COLUMNS)
    event = st.dataframe(shown, hide_index=True, key="inspect_table", on_select="rerun", selection_mode="single-row",
                         height=min(400, 38 + 35 * shown.height), column_config=config)
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    options = list(range(len(run.compressions)))
    if rows and rows != st.session_state.get("inspect_rows"):  # a new click in the table wins over the box
        st.session_state["inspect_pick"] = rows[0]
    st.session_state["inspect_rows"] = rows
    if st.session_state.get("inspect_pick") not in options:
        st.session_state["inspect_pick"] = 0
    position = st.selectbox(
        "compression", options, key="inspect_pick",
        format_func=lambda i: f"#{run.compressions[i].chain_index} ({run.compressions[i].status}) at message "
        f"{run.compressions[i].index_started:,}",
        help="Or click a row of the table.",
    )
    view = compression_view(run, history, position)
    c = view.compression
    after = f"{c.tokens_after:,}" if c.tokens_after is not None else "—"
    st.markdown(
        f"**#{c.chain_index}** {c.status}: started at message {c.index_started:,} with {c.tokens_before:,} tokens "
        f"in context → {after} after. Folded messages {c.folded_from:,}–{c.boundary - 1:,} "
        f"({c.messages_folded:,} new), kept {c.kept:,} verbatim from {c.boundary:,}. "
        f"Previous briefing {c.previous_chars:,} chars → budget hint: {labels.bucket_words(c.bucket)} "
        f"({c.percent}% of target). The boundary stopped because: {labels.stop_words(c.stop) or '—'}."
    )
    left, right = st.columns(2)
    with left:
        st.caption(f"Folded into the briefing ({counted(view.folded.height, 'message')})")
        st.dataframe(view.folded, hide_index=True, key="inspect_folded", height=260)
    with right:
        st.caption(f"Kept verbatim ({counted(view.kept.height, 'message')})")
        st.dataframe(view.kept, hide_index=True, key="inspect_kept", height=260)
    with st.expander(f"Compact history the briefer read ({len(view.compact_history):,} chars)"):
        st.code(_clip(view.compact_history), language="xml", wrap_lines=True)
    with st.expander("User message with its budget hint"):
        st.code(_clip(view.user_message, head=2_000), language="xml", wrap_lines=True)
    if view.briefing is not None:
        st.caption(f"Briefing — {literal(view.briefing_label)}")  # a model's name, a provider's error
        st.code(encodable(view.briefing)[0], language="markdown", wrap_lines=True, height=420)
    else:  # one line saying why there is no text (the caption would repeat it)
        st.info(f"Briefing — {literal(view.briefing_label)}")


def _clip(text: str, head: int = 20_000, tail: int = 4_000) -> str:
    """Very long transcripts are cut in the middle so the page stays fast (the chars count is exact)."""
    if len(text) <= head + tail:
        return encodable(text)[0]  # lone surrogates show as U+FFFD: the page is UTF-8
    return encodable(f"{text[:head]}\n\n[… {len(text) - head - tail:,} characters not shown …]\n\n{text[-tail:]}")[0]
