"""The Live runs tab: briefings written by real LLMs (a cascade), behind an explicit button and three guards.

Before the first request: an estimate of requests and dollars from the size model's replay, caps set
above it, and litellm's offline check of every model's credentials (a run with no key sends nothing).
During the run: it stops after N failed compressions in a row or before a request that would pass a
cap, and shows the provider's error, scrubbed. The API key comes from the provider's environment
variable or the password field; it goes to the LiveBriefer object only: never into session state beyond
this run's widget, the disk cache, a record or the YAML. Answers are cached on disk.

Where a key may go is ``workbench.briefing.endpoints``' rule: the environment's keys reach the provider's own
endpoint or the API base the operator started the app with (``-- --api-base URL`` / ``WORKBENCH_API_BASE``),
which the API base field shows first; a base typed in the page gets only the key typed beside it, unless the
operator started the app with ``-- --allow-page-api-base``. Model names, provider errors and the status are
shown through ``display.untrusted``.
"""

from __future__ import annotations

import os
import sys

import streamlit as st

from workbench import plots
from workbench.display.untrusted import literal
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import Knobs
from workbench.replay import Run
from workbench.ui import runs
from workbench.ui.charts import metric_cards, show
from workbench.ui.inspect_tab import LIVE_RUN, compressions_in_words

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
            "MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "AZURE_API_KEY")
LIVE_BASELINE = "live_baseline"  # (history digest, the size model's replay of what a stopped run covers, or None)
LIVE_COLUMNS = ("chain_index", "status", "briefer_model", "briefer_cache_hit", "briefer_cost_usd", "briefing_chars",
                "bucket", "briefer_attempts")  # their words: labels.COLUMNS
LIVE_STATUS = "live_status"  # (history digest, {"ok": bool, "lines": [...], "checks": [...]}) of the last attempt


def render(run: Run, history: History, knobs: Knobs) -> None:
    from workbench.analysis.live_runs import estimate_live, suggested_limits
    from workbench.briefing.endpoints import operator_settings
    from workbench.counting.prices import list_models
    from workbench.counting.registry import default_cache_dir

    operator = operator_settings(sys.argv[1:], os.environ)
    st.session_state.setdefault("live_api_base", operator.shown_base)
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
        st.caption(_where_keys_go(operator))
    with c2:
        api_key = st.text_input("API key (optional)", type="password", key="live_api_key",
                                help="Used for this run only: never stored, cached or written to YAML. "
                                "Leave empty to use the provider's environment variable.")
        found = [v for v in KEY_VARS if os.environ.get(v)]
        st.caption("Keys in the environment: " + (", ".join(f"`{v}`" for v in found) if found else "none found"))
        t1, t2 = st.columns(2)
        timeout = t1.number_input("timeout per attempt (s)", min_value=1.0, max_value=600.0, key="live_timeout")
        use_cache = t2.toggle("disk cache", key="live_cache", help=f"{default_cache_dir()}")
    dry = runs.replay(history.digest, knobs, "simulated", history)
    estimate = estimate_live(dry, models[0] if models else knobs.briefer_model, cascade=max(1, len(models)))
    suggested = suggested_limits(estimate)
    st.session_state.setdefault("live_max_failures", 3)
    _follow("live_max_requests", suggested.max_requests or 0)
    _follow("live_max_dollars", suggested.max_dollars if suggested.max_dollars is not None else 1.0)
    g1, g2, g3 = st.columns(3)
    failures = g1.number_input("stop after failed compressions in a row", min_value=0, max_value=100, step=1,
                               key="live_max_failures", help="0 = never stop on failures.")
    max_requests = g2.number_input("request cap", min_value=0, max_value=100_000, step=1, key="live_max_requests",
                                   help="At most this many provider requests (cache hits count for none).")
    max_dollars = g3.number_input("dollar cap ($)", min_value=0.0, max_value=10_000.0, step=0.05, format="%.2f",
                                  key="live_max_dollars", disabled=estimate.dollars is None,
                                  help="Stops before a request whose estimated cost would take spending past this. "
                                  "Needs the model's registry prices: off for a model the registry does not know.")
    st.caption(f"The simulated replay of these knobs makes {len(dry.compressions)} compressions: "
               f"{literal(estimate.summary())}. Caps below it stop the run early.")  # it names the typed model
    if estimate.requests and max_requests < estimate.requests:
        st.warning(f"The request cap ({max_requests:,}) is below the estimate ({estimate.requests:,}): the run "
                   "will stop before the end of the conversation.")
    b1, b2, b3 = st.columns([1, 1, 2])
    skip = b3.checkbox("skip the pre-flight check", key="live_skip_preflight",
                       help="Start even if litellm finds no credentials for a model (e.g. cloud roles it cannot see).")
    go = b1.button("Run live", type="primary", key="live_go", disabled=not models)
    probe = b2.button("Test the models", key="live_test", disabled=not models,
                      help="One tiny real request to each model of the cascade (a few tokens each).")
    if go or probe:
        from workbench.briefing.guard import LiveLimits

        limits = LiveLimits(max_consecutive_failures=int(failures), max_requests=int(max_requests),
                            max_dollars=float(max_dollars) if estimate.dollars is not None else None)
        _start(history, knobs, list(models), api_key or None, api_base or None, float(timeout), use_cache, limits,
               estimate, skip=skip, test_only=probe, operator=operator)
    _status(history)
    live = st.session_state.get(LIVE_RUN)
    if live is None or live[0] != history.digest:
        return
    live_run: Run = live[1]
    base = st.session_state.get(LIVE_BASELINE)
    baseline = base[1] if base is not None and base[0] == history.digest and base[1] is not None else None
    st.subheader("Last live run" + ("" if live_run.knobs == knobs else " (knobs differ from the sidebar)"))
    if baseline is None:
        st.caption("Deltas are against the simulated replay of the sidebar's knobs.")
        metric_cards(live_run.metrics, run.metrics, place="live")
    else:  # a stopped run covers only the messages before the stop: compare the same messages
        st.caption(f"The run stopped early: it covers {counted(live_run.metrics.messages, 'message')} of "
                   f"{len(history):,}. Deltas are against the simulated replay of those same messages.")
        metric_cards(live_run.metrics, baseline.metrics, place="live")
    shown, config = compressions_in_words(live_run.compressions_frame(), LIVE_COLUMNS)
    st.dataframe(shown, hide_index=True, key="live_table", column_config=config)
    written = [c for c in live_run.compressions if c.record.text]
    if written:
        with st.expander(f"Last briefing written (#{written[-1].chain_index}, {literal(written[-1].record.model)})"):
            st.code(written[-1].record.text or "", language="markdown", wrap_lines=True, height=300)
    show(plots.briefing_figure(live_run, compare=baseline or run, labels=("live", "simulated")), "live_briefing")
    st.caption("The Compressions tab shows this run (“last live run”): every briefing's text and what it read.")


def _where_keys_go(operator) -> str:  # noqa: ANN001 - an endpoints.Operator
    """One line under the API base field: which endpoints get the environment's keys."""
    from workbench.briefing.endpoints import ALLOW_FLAG

    if operator.allow_page_api_base:
        return (f"Started with `{ALLOW_FLAG}`: an API base typed here receives the keys in the environment too.")
    own = f" or to {literal(operator.shown_base)}, the base the app was started with" if operator.api_base else ""
    return ("Keys in the environment go only to the provider's own endpoint" + own + ". An API base typed here "
            f"gets only the key typed beside it (`-- --api-base URL` or `-- {ALLOW_FLAG}` when starting the app "
            "changes that).")


def _follow(key: str, suggestion: float) -> None:
    """A cap that follows the estimate until the user sets it themselves."""
    shadow = f"_{key}_suggested"
    if key not in st.session_state or st.session_state[key] == st.session_state.get(shadow):
        st.session_state[key] = suggestion
    st.session_state[shadow] = suggestion


def _status(history: History) -> None:
    """What the last attempt said: pre-flight findings, a stop with the provider's error, or what it cost."""
    found = st.session_state.get(LIVE_STATUS)
    if found is None or found[0] != history.digest:
        return
    status = found[1]
    for level, message in status.get("checks", []):  # they name models and quote providers: shown as typed
        (st.error if level == "error" else st.warning if level == "warning" else st.success)(literal(message))
    if status.get("lines"):
        text = "  \n".join(literal(line) for line in status["lines"])
        (st.success if status.get("ok") else st.error)(text)


def _start(history: History, knobs: Knobs, models: list[str], api_key: str | None, api_base: str | None,
           timeout: float, use_cache: bool, limits, estimate, *, skip: bool, test_only: bool,  # noqa: ANN001
           operator) -> None:  # noqa: ANN001 - an endpoints.Operator
    from workbench.analysis.live_runs import run_live
    from workbench.briefing.cache import BriefingCache
    from workbench.briefing.endpoints import page_route, providers_of
    from workbench.briefing.guard import blocking, preflight
    from workbench.briefing.live import LiveBriefer
    from workbench.briefing.provider_errors import error_line
    from workbench.briefing.scrub import scrub_secrets

    digest = history.digest
    route = page_route(operator, page_base=api_base, page_key=api_key, providers=providers_of(models, api_base))
    if route.refused:  # before the pre-flight check: a refused endpoint is never even asked
        lines = [f"Nothing was sent: {route.refused}."]
        st.session_state[LIVE_STATUS] = (digest, {"ok": False, "checks": [], "lines": lines})
        return
    api_key, api_base = route.api_key, route.api_base
    checks = preflight(models, api_key=api_key, api_base=api_base,
                       largest_request_tokens=estimate.largest_request_tokens)
    shown = [(c.level, f"Pre-flight: {c.message}") for c in checks if c.level != "ok"]
    if blocking(checks) and not skip:
        lines = ["Nothing was sent: fix the pre-flight errors above (or tick “skip the pre-flight check”)."]
        st.session_state[LIVE_STATUS] = (digest, {"ok": False, "checks": shown, "lines": lines})
        return
    bar = st.progress(0.0, text="starting…")
    status = st.empty()
    seen = {"hits": 0, "cost": 0.0, "failed": 0}
    expected = max(1, estimate.requests)

    def on_compression(count: int, comp) -> None:  # noqa: ANN001 - a Compression
        rec = comp.record
        seen["hits"] += rec.cache_hit
        seen["cost"] += rec.cost_usd
        seen["failed"] += rec.failed
        what = "cache hit" if rec.cache_hit else ("failed" if rec.failed else f"{literal(rec.model)}, {rec.latency_s:.1f}s")
        bar.progress(min(count / expected, 1.0), text=f"compression {count} of ~{expected}: {what}")
        status.markdown(f"cache hits **{seen['hits']}** of {count} · failed **{seen['failed']}** · "
                        f"briefer dollars so far **${seen['cost']:,.4f}**")

    cache = BriefingCache() if use_cache and not test_only else None
    try:
        briefer = LiveBriefer(models, api_key=api_key, api_base=api_base, timeout_s=timeout, cache=cache,
                              limits=limits)
        if test_only:
            tested = briefer.check_models()
            shown += [(c.level, f"Test request: {c.message}") for c in tested]
            lines = [f"{counted(briefer.requests, 'test request')}, ${briefer.spent_usd:,.6f}."]
            st.session_state[LIVE_STATUS] = (digest, {"ok": not blocking(tested), "checks": shown, "lines": lines})
            return
        outcome = run_live(history, knobs, briefer, on_compression=on_compression)
    except Exception as exc:  # noqa: BLE001 - any provider or config problem is shown, not raised
        lines = ["Live run failed: " + scrub_secrets(error_line(exc), api_key, api_base)]
        st.session_state[LIVE_STATUS] = (digest, {"ok": False, "checks": shown, "lines": lines})
        return
    finally:
        bar.empty()
        status.empty()
        if cache is not None:
            cache.close()
    lines = [line[:1].upper() + line[1:] for line in outcome.summary().splitlines()]
    if cache is not None and cache.problem:  # a disk fault: the run went on with answers kept in memory
        lines.append(cache.problem)
    st.session_state[LIVE_STATUS] = (digest, {"ok": outcome.complete, "checks": shown, "lines": lines})
    if outcome.run is None:
        st.session_state.pop(LIVE_RUN, None)  # stopped before the first check: nothing to show
    else:
        st.session_state[LIVE_RUN] = (digest, outcome.run)
        st.session_state[LIVE_BASELINE] = (digest, outcome.baseline)
        st.session_state["inspect_run"] = "last live run"  # the Compressions tab opens on it (its widget is not drawn now)
