"""The Reality tab: a real agent log against a replay with the agent's own settings, compaction by compaction.

Shows the context as the agent measured it (from the log's billed usage) with the logged compactions beside the
predicted ones, the per-compaction table, the real summary beside the extractive briefer's for the same span
with the re-fetches after it, and a button that fits the counting knobs to the log and loads them. Everything read
from the log (its version and model, the summary, file names) is shown as text (``display.untrusted``; the summaries as
code), never rendered as Markdown.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import streamlit as st

from workbench import plots
from workbench.display.untrusted import literal, literals
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import Knobs
from workbench.ui import state as ui_state

USAGE = "reality_usage"
PICK = "reality_pick"


@st.cache_resource(show_spinner=False, max_entries=16)
def _reality(history_key: str, usage: bool, knobs: Knobs | None, _history: History) -> Any:
    from workbench.analysis.real_logs.reality import follow_log

    return follow_log(_history, knobs=knobs, usage=usage)


@st.cache_resource(show_spinner=False, max_entries=16)
def _frame(history_key: str, _history: History) -> pl.DataFrame:
    from workbench.analysis.real_logs.reality import logged_context_frame

    return logged_context_frame(_history)


@st.cache_resource(show_spinner=False, max_entries=16)
def _scores(history_key: str, _history: History) -> Any:
    from workbench.analysis.real_logs.real_briefings import score_briefings

    return score_briefings(_history)


def _threshold(knobs: Knobs) -> float:
    window = knobs.context_window_tokens
    clauses = []
    if knobs.trigger_ratio >= 0:
        clauses += [knobs.trigger_ratio * window, float(knobs.trigger_hard_cap_tokens)]
    if knobs.trigger_reserve_tokens:
        clauses.append(float(window - knobs.trigger_reserve_tokens))
    return min(clauses) if clauses else float(window)


def render(history: History, knobs: Knobs) -> None:
    """The tab for the chosen history (an explanation when it is not an agent log)."""
    log = history.log
    if log is None:
        st.info("This history is a transcript, not an agent's own log: it has no billed usage, version or logged "
                "compactions to check a replay against. Open a Claude Code session (`~/.claude/projects/…/*.jsonl`) "
                "or a Codex rollout (`~/.codex/sessions/…/*.jsonl`).")
        return
    from workbench.analysis.real_logs.agent_settings import agent_settings, agent_words

    settings = agent_settings(history)
    key = history.digest
    usage = st.toggle("measure with the log's billed usage", value=True, key=USAGE,
                      help="Off: the estimate alone, with the preset's hidden prefix and token ratio, as a "
                           "counterfactual replay has it.")
    session = _reality(key, usage, knobs, history)  # the sidebar's knobs: what the user set, or calibrated
    agent = literal(agent_words(log.agent, log.version))  # the version and model are the log's: shown as written
    st.markdown(f"**{agent}** · model {literal(settings.model)} · "
                f"preset `{settings.preset}` · "
                f"window {settings.window or settings.knobs.context_window_tokens:,} · "
                f"{len(log.calls):,} logged calls · {len(log.compactions)} logged compactions")
    for note in session.notes:
        st.warning(note)
    fig = plots.reality_figure(_frame(key, history), session, threshold=_threshold(knobs),
                               window=knobs.context_window_tokens)
    st.plotly_chart(fig, width="stretch", key="reality_chart")
    rows = [{"log line": c.source_line, "real index": c.real_index, "trigger": c.trigger,
             "tokens before (logged)": c.real_tokens_before, "predicted index": c.predicted_index,
             "delta (messages)": c.error, "predicted tokens before": c.predicted_tokens_before,
             "tokens after (logged)": c.logged_tokens_after, "predicted tokens after": c.predicted_tokens_after,
             "note": c.note}
            for c in session.compactions]
    if rows:
        st.dataframe(pl.DataFrame(rows), width="stretch", hide_index=True)
    _bill(history, session)
    if session.extra_predictions:
        st.warning(f"The replay also compacts where the log does not: before message(s) "
                   f"{', '.join(str(i) for i in session.extra_predictions)}.")
    _summaries(history, session)
    _calibrate(history, knobs)
    st.caption("Follows the log: each compaction is predicted from the state right after the previous real one. "
               "Indices are the first message after a compaction.")


def _bill(history: History, session: Any) -> None:
    """The session's bill as the replay models it beside the log's, by class, in bill units and in dollars, with
    how it was priced and which cache rules it follows (plain text: names come from the log)."""
    bill, logged = session.bill, session.logged_bill
    if bill is None:
        return
    from workbench.analysis.real_logs.bill import bill_units, log_cache_rules
    from workbench.counting.prices import get_prices, price_note
    from workbench.counting.registry import registry_source

    log = history.log
    assert log is not None
    rules = log_cache_rules(log)
    prices = get_prices(session.model or "")
    one_hour = rules.one_hour_writes
    classes = (("calls", "calls"), ("uncached input", "input"), ("cache reads", "cache_read"),
               ("cache writes", "cache_write"), ("output (reasoning included)", "output"))
    table = [{"": label, "modelled": getattr(bill, name), "logged": None if logged is None else getattr(logged, name)}
             for label, name in classes]
    st.markdown("**The bill**: the replay's model calls, following the log's compactions, beside the log's own usage")
    st.dataframe(pl.DataFrame(table), width="stretch", hide_index=True)
    units = bill.units(session.agent, session.model)
    w = bill_units(session.agent, session.model)
    lines = [f"bill units (uncached x {w['input']:g} + cache writes x {w['cache_write']:g} + cache reads x "
             f"{w['cache_read']:g} + output x {w['output']:g}): modelled {units:,.0f}"]
    if logged is not None:
        err = session.bill_error
        lines[0] += (f", logged {logged.units(session.agent, session.model):,.0f}"
                     + ("" if err is None else f" ({err:+.1%})"))
    dollars = f"dollars: modelled ${bill.dollars(prices, one_hour_writes=one_hour):,.2f}"
    if logged is not None:
        dollars += f", logged ${logged.dollars(prices, one_hour_writes=one_hour):,.2f}"
    lines += [dollars + f", priced at {price_note(prices)} ({registry_source()})" + (
                  "; cache writes as 1-hour entries" if one_hour else ""),
              f"cache model: {rules.describe()}; a compaction invalidates the cached prefix"
              + ("" if session.usage else "; the log's usage was not read")]
    for line in lines:
        st.text(line)


def _summaries(history: History, session: Any) -> None:
    log = history.log
    assert log is not None
    if not log.compactions:
        return
    labels = [f"#{i + 1}: before message {c.index} ({c.trigger}, log line {c.source_line})"
              for i, c in enumerate(log.compactions)]
    pick = st.selectbox("compaction", range(len(labels)), format_func=lambda i: labels[i], key=PICK)
    chosen = log.compactions[pick]
    scores = _scores(history.digest, history)
    score = next((s for s in scores if s.index == chosen.index and s.source_line == chosen.source_line), None)
    left, right = st.columns(2)
    with left:
        st.markdown("**The agent's real summary**")
        if chosen.summary:
            with st.container(height=360, key=f"real_summary_{pick}"):
                st.code(chosen.summary, language="markdown", wrap_lines=True)
        else:
            kept = "\n\n".join(m.text for m in chosen.kept)
            st.info("Encrypted (Codex remote compaction): only what the agent kept verbatim can be read.")
            if kept:
                with st.container(height=300, key=f"kept_{pick}"):
                    st.text(kept)
    with right:
        st.markdown("**The extractive briefer's, for the same span**")
        if score is not None and score.extractive_text:
            with st.container(height=360, key=f"ours_{pick}"):
                st.code(score.extractive_text, language="markdown", wrap_lines=True)
    if score is not None:
        _score(score)


def _score(score: Any) -> None:
    """Retention of the span's facts by both briefings, the facts at risk and the files read again after it."""
    cols = st.columns(4)
    cols[0].metric("facts in the folded span", f"{score.facts:,}")
    cols[1].metric("kept by the real summary" if score.summary_readable else "kept verbatim (summary encrypted)",
                   _share(score.retention_real), help=f"{score.retained_real} of {score.facts}, with what the "
                   "agent carried over verbatim")
    cols[2].metric("kept by the extractive briefer", _share(score.retention_extractive),
                   help=f"{score.retained_extractive} of {score.facts}, at {score.target_chars:,} chars")
    cols[3].metric("re-fetched after", counted(score.refetches, "file"),
                   help=f"{score.refetch_tokens:,} tokens read again after the compaction; "
                        f"{score.refetches_at_risk} of them files the summary had lost, {score.refetches_restored} "
                        "files the agent had restored itself")
    if score.at_risk:
        st.markdown(f"**At risk** ({len(score.at_risk)}: in the span, in neither the summary nor what was kept): "
                    + literals(score.at_risk_examples(5), "; "))
    if score.refetched:
        st.markdown("**Read again after it**: " + "; ".join(
            f"{literal(r.path)} ({r.tokens:,} tokens{', restored by the agent' if r.restored else ''})"
            for r in score.refetched))
    for note in score.notes:
        st.caption(note)


def _share(value: Any) -> str:
    return "–" if value is None else f"{value:.0%}"


def _calibrate(history: History, knobs: Knobs) -> None:
    st.markdown("**Calibrate**: fit the hidden prefix, token ratio and restore to this log's bill, and load them.")
    if st.button("Calibrate to this log and load the knobs", key="reality_calibrate"):
        from workbench.analysis.real_logs.calibration import fit_agent

        try:
            fit = fit_agent([history])
        except ValueError as exc:
            st.error(literal(exc))
            return
        from workbench.knobs import dump_knobs

        fitted = fit.knobs_for(knobs)  # the sidebar's knobs with the fitted ones: the user's other changes stand
        # Widgets exist by now: the knobs go through the queue every upload uses, applied before the next run.
        source = (f"the calibration of this log (hidden prefix {fit.hidden_prefix_tokens:,}, token ratio "
                  f"{fit.token_ratio:.3f}, restore {fit.compaction_restore_tokens:,}; {counted(fit.checks, 'check')}, median "
                  f"error {fit.residual_tokens_median:,.0f} tokens)")
        st.session_state[ui_state.PENDING_YAML] = (source, dump_knobs(fitted))
        st.rerun()
