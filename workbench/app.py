"""The Compaction Workbench in the browser: ``streamlit run workbench/app.py [-- --histories DIR]``.

Read top to bottom: a hidden chart that starts plotly.js loading in the browser, page style → the imports →
queued uploads → the sidebar's values (history, briefer, knobs), read from session state → one cached replay → tabs,
the Charts tab's context chart first → the history's line, metric cards and notes (into a place kept above the tabs)
→ the open tab's content (``st.tabs(on_change="rerun")`` makes the others lazy) → the whole sidebar, whose knob ranges
and notes come from the run. Every number comes from the engine (``workbench.replay``, ``costs``, ``inspector``,
``compare``, ``sweep``); this file and ``workbench/ui/`` only draw. The default run is offline and free; live LLM
briefings sit behind a button in the Live runs tab.
"""

from __future__ import annotations

import streamlit as st

from workbench.ui import first_paint

warmup = first_paint.warm_plotly(st.session_state)  # first: the browser loads plotly.js while the rest runs
# A Material icon, not an emoji: Streamlit checks an emoji against a regex of every emoji, built on first use
# (streamlit/emojis.py: ~35 ms of each fresh server's first run, before anything is drawn).
st.set_page_config(page_title="Compaction Workbench", page_icon=":material/compress:", layout="wide")
first_paint.page_style()

from workbench.display.untrusted import literal  # noqa: E402
from workbench.history.words import counted  # noqa: E402
from workbench.ui import agent_open, charts, compare_tab, runs, sidebar  # noqa: E402 - after the warm-up on purpose
from workbench.ui import state as ui_state  # noqa: E402

ui_state.consume_pending(st.session_state)  # YAML and history uploads, before any widget exists
for key in ui_state.PERSISTENT:  # keep tab widgets' values while their tab is closed (lazy tabs)
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]

# Read first, drawn last: the sidebar's values (history, briefer, knobs) come from session state, and its widgets
# are drawn once the context chart is out (sidebar.draw_sidebar); so are the cards and notes above the tabs (into
# ``head``). On a slider move the browser then draws the chart before it renders the ~60 other elements
# (benchmarks/README.md, browser_slider).
choice = sidebar.choose_history()
if choice.history is not None:
    agent_open.adopt(st.session_state, choice.history)  # a real agent log opens with its own preset, window and model
briefer = sidebar.briefer_choice()
panel = sidebar.knob_panel()  # the knobs from session state; their widgets are drawn once the run is known
knobs = panel.knobs
if choice.history is None or choice.label is None or knobs is None:
    sidebar.flashes()
    sidebar.draw_sidebar(choice, panel, None)
    st.stop()
label, history, history_path = choice.label, choice.history, choice.path
key = history.digest

head = st.container()  # the history's line, the metric cards and the run's notes: drawn after the context chart
run = None
try:
    run = runs.replay(key, knobs, briefer, history)
    pinned = st.session_state.get(compare_tab.PINNED)
    run_a = runs.replay(key, pinned, briefer, history) if pinned is not None else None
    warmup.empty()  # the browser has had the hidden chart since the imports; the page keeps only the real charts
    tabs = st.tabs(["Charts", "Compressions", "A/B compare", "Live runs", "Sweep", "Reality", "YAML & CLI"], key="tab",
                   on_change="rerun")
    charts_open = tabs[0].open is not False
    if charts_open:
        with tabs[0]:
            charts.context_chart(run, runs.previews(key, history), runs.logged(key, history),
                                 tuple(c.index for c in history.log.compactions) if history.log else (),
                                 against=runs.against(run, history),
                                 counterfactual=runs.counterfactual(key, knobs, history))
    with head:
        sidebar.flashes()
        st.markdown(f"**{literal(history.id)}** · {counted(len(history), 'message')} · "
                    f"{counted(run.metrics.checks, 'check')} · strategy `{knobs.strategy}` · briefer `{run.briefer}`")
        charts.metric_cards(run.metrics, run_a.metrics if run_a is not None else None)
        charts.pricing_note(run, history, runs.logged_bill(key, history))
        charts.run_warnings(run)
        for note in run.notes[:-1]:  # the last note is the counterfactual caveat, shown under the charts
            if note not in run.log_notes:  # those about an agent log are on the Charts tab, beside its chart
                st.warning(note)
    if charts_open:
        with tabs[0]:
            charts.lower_charts(run, runs.costs(key, knobs, briefer, run, history))
    # The other tabs' modules are imported when their tab opens: the first chart does not wait for them.
    with tabs[1]:
        if tabs[1].open:
            from workbench.ui import inspect_tab

            inspect_tab.render(run, history)
    with tabs[2]:
        if tabs[2].open:
            compare_tab.render(run, run_a, history, knobs, briefer)
    with tabs[3]:
        if tabs[3].open:
            from workbench.ui import live_tab

            live_tab.render(run, history, knobs)
    with tabs[4]:
        if tabs[4].open:
            from workbench.ui import sweep_tab

            sweep_tab.render(label, history, knobs, sidebar.history_loaders())
    with tabs[5]:
        if tabs[5].open:
            from workbench.ui import reality_tab

            reality_tab.render(history, knobs)
    with tabs[6]:
        if tabs[6].open:
            from workbench.ui import config_tab

            config_tab.render(knobs, history_path)
finally:
    sidebar.draw_sidebar(choice, panel, run)  # ranges for this history, notes, the knobs this run does not read
