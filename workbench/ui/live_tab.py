"""The Live runs tab: briefings written by real LLMs (a cascade), behind an explicit button.

The API key comes from the provider's environment variable or the password field; it goes to the
LiveBriefer object only: never into session state beyond this run's widget, the disk cache, a
record or the YAML. Answers are cached on disk, so a repeated live run is instant and free.
"""

from __future__ import annotations

import os

import streamlit as st

from workbench import plots
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.replay import Run
from workbench.ui.charts import metric_cards, show
from workbench.ui.inspect_tab import LIVE_RUN

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
            "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "AZURE_API_KEY")


def render(run: Run, history: History, knobs: Knobs) -> None:
    from workbench.briefing.cache import default_cache_dir
    from workbench.counting.prices import list_models

    st.markdown("Replay the current knobs with briefings written by real models, tried in order (a cascade, "
                "as stagewise does). Each compression is one request; answers are cached on disk.")
    st.session_state.setdefault("live_models", [knobs.briefer_model])
    st.session_state.setdefault("live_timeout", 30.0)
    st.session_state.setdefault("live_cache", True)
    options = list_models()
    chosen = [m for m in st.session_state["live_models"] if m not in options]
    c1, c2 = st.columns(2)
    with c1:
        models = st.multiselect("cascade (tried in this order)", chosen + options, key="live_models",
                                accept_new_options=True, help="Models from litellm's registry, or type any name.")
        api_base = st.text_input("API base (optional)", key="live_api_base",
                                 help="For a local or proxy endpoint (OpenAI-compatible).")
    with c2:
        api_key = st.text_input("API key (optional)", type="password", key="live_api_key",
                                help="Used for this run only: never stored, cached or written to YAML. "
                                "Leave empty to use the provider's environment variable.")
        found = [v for v in KEY_VARS if os.environ.get(v)]
        st.caption("Keys in the environment: " + (", ".join(found) if found else "none found"))
        t1, t2 = st.columns(2)
        timeout = t1.number_input("timeout per attempt (s)", min_value=1.0, max_value=600.0, key="live_timeout")
        use_cache = t2.toggle("disk cache", key="live_cache", help=f"{default_cache_dir()}")
    expected = max(1, len(run.compressions))
    st.caption(f"The simulated replay of these knobs makes {len(run.compressions)} compressions: expect about as "
               f"many requests (fewer on cache hits), roughly ${run.metrics.briefer_dollars:,.4f} at "
               f"{knobs.briefer_model} prices.")
    if st.button("Run live", type="primary", key="live_go", disabled=not models):
        _run_live(history, knobs, list(models), api_key or None, api_base or None, float(timeout), use_cache, expected)
    live = st.session_state.get(LIVE_RUN)
    if live is None or live[0] != history.digest:
        return
    live_run: Run = live[1]
    st.subheader("Last live run" + ("" if live_run.knobs == knobs else " (knobs differ from the sidebar)"))
    st.caption("Deltas are against the simulated replay of the sidebar's knobs.")
    metric_cards(live_run.metrics, run.metrics)
    frame = live_run.compressions_frame()
    cols = [c for c in ("chain_index", "status", "briefer_model", "briefer_cache_hit", "briefer_cost_usd",
                        "briefing_chars", "bucket", "briefer_attempts") if c in frame.columns]
    st.dataframe(frame.select(cols), hide_index=True, key="live_table")
    show(plots.briefing_figure(live_run, compare=run, labels=("live", "simulated")), "live_briefing")
    st.caption("Open the Compressions tab and pick “last live run” to read each briefing.")


def _run_live(history: History, knobs: Knobs, models: list[str], api_key: str | None, api_base: str | None,
              timeout: float, use_cache: bool, expected: int) -> None:
    from workbench.briefing.cache import BriefingCache
    from workbench.briefing.live import LiveBriefer, scrub_secrets
    from workbench.replay import simulate

    bar = st.progress(0.0, text="starting…")
    status = st.empty()
    seen = {"hits": 0, "cost": 0.0, "failed": 0}

    def on_compression(count: int, comp) -> None:  # noqa: ANN001 - a Compression
        rec = comp.record
        seen["hits"] += rec.cache_hit
        seen["cost"] += rec.cost_usd
        seen["failed"] += rec.failed
        what = "cache hit" if rec.cache_hit else ("failed" if rec.failed else f"{rec.model}, {rec.latency_s:.1f}s")
        bar.progress(min(count / expected, 1.0), text=f"compression {count} of ~{expected}: {what}")
        status.markdown(f"cache hits **{seen['hits']}** of {count} · failed **{seen['failed']}** · "
                        f"briefer dollars so far **${seen['cost']:,.4f}**")

    try:
        cache = BriefingCache() if use_cache else None
        try:
            briefer = LiveBriefer(models, api_key=api_key, api_base=api_base, timeout_s=timeout, cache=cache)
            result = simulate(history, knobs, briefer, on_compression=on_compression)
        finally:
            if cache is not None:
                cache.close()
    except Exception as exc:  # noqa: BLE001 - any provider or config problem is shown, not raised
        bar.empty()
        st.error("Live run failed: " + scrub_secrets(f"{type(exc).__name__}: {exc}", api_key))
        return
    bar.progress(1.0, text=f"done: {len(result.compressions)} compressions")
    st.session_state[LIVE_RUN] = (history.digest, result)
