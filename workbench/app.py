"""The Compaction Workbench in the browser: ``streamlit run workbench/app.py [-- --histories DIR]``.

Read top to bottom: a hidden chart that starts plotly.js loading in the browser, page style → the imports →
queued uploads → the history and briefer, read from session state → the sidebar's places, the place above the tabs
and the tabs (``st.tabs(on_change="rerun")`` makes the others lazy) → ``knob_page``, the fragment a knob move reruns,
writing into those places: the knobs from session state, one cached replay, the Charts tab's context chart first, the
history's line, metric cards and notes (above the tabs), the open tab's content, the trigger control and mission
sliders, whose ranges and notes come from the run → the rest of the sidebar (history picker, briefer, presets, knob groups), in full runs only. Every number comes from the engine (``workbench.replay``, ``costs``, ``inspector``,
``compare``, ``sweep``); this file and ``workbench/ui/`` only draw. The default run is offline and free; live LLM
briefings sit behind a button in the Live runs tab.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from workbench.ui import first_paint

warmup = first_paint.warm_plotly(st.session_state)  # first: the browser loads plotly.js while the rest runs
# A Material icon, not an emoji: Streamlit checks an emoji against a regex of every emoji, built on first use
# (streamlit/emojis.py: ~35 ms of each fresh server's first run, before anything is drawn).
st.set_page_config(page_title="Compaction Workbench", page_icon=":material/compress:", layout="wide")
first_paint.page_style()

from workbench.display.untrusted import literal  # noqa: E402
from workbench.history.words import counted  # noqa: E402
from workbench.knobs import Knobs  # noqa: E402
from workbench.replay import Run  # noqa: E402
from workbench.ui import agent_open, charts, compare_tab, runs, sidebar  # noqa: E402 - after the warm-up on purpose
from workbench.ui import state as ui_state  # noqa: E402

ui_state.consume_pending(st.session_state)  # YAML and history uploads, before any widget exists

# Read first, drawn last: the history and the briefer come from session state (their widgets are drawn once the
# context chart is out), and so do the knobs, inside ``knob_page``.
choice = sidebar.choose_history()
if choice.history is not None:
    agent_open.adopt(st.session_state, choice.history)  # a real agent log opens with its own preset, window and model
briefer = sidebar.briefer_choice()
if choice.history is None or choice.label is None:
    panel = sidebar.knob_panel()
    sidebar.flashes()
    sidebar.draw_sidebar(choice, panel, None)
    st.stop()
label, history, history_path = choice.label, choice.history, choice.path
key = history.digest
# The sidebar's places, top to bottom: what a full run draws (history, briefer, presets), what a knob move redraws
# (the trigger control and the mission sliders), the knob groups (full runs), the knobs' warnings.
side_top, side_mission, side_groups, side_checks = (st.sidebar.container() for _ in range(4))
FULL_RUN = "_full_run"  # set while a full run runs ``knob_page``; a knob move reruns the fragment alone


@st.fragment(key="knob_page")
def knob_page() -> tuple[sidebar.KnobPanel, Run | None]:
    """Everything a knob move changes: the replay, the Charts tab's context chart first, the history's line, the
    metric cards and notes (into the place above the tabs), the open tab, and in the sidebar the trigger control
    and the mission sliders with their notes; the places and the tabs themselves are drawn by full runs. A knob widget drawn here reruns only this (``st.fragment``): the
    history picker, the briefer, the presets and the knob groups (full runs only: the model pickers list ~3,500
    names) are not sent or rendered again (benchmarks/README.md, browser_slider). When what the groups show changes
    (a value or a note in an open group, the unread knobs), the fragment asks for a full run once the chart is out."""
    if not st.session_state.get(FULL_RUN) and ui_state.pending(st.session_state):
        st.rerun()  # a YAML queued by a tab's callback: the full run applies it before any widget exists
    for name in ui_state.PERSISTENT:  # keep tab widgets' values while their tab is closed (lazy tabs)
        if name in st.session_state:
            st.session_state[name] = st.session_state[name]
    # The knobs from session state (their widgets come after the run): a full run read them just above, to decide
    # on the places; a knob move, which reruns this alone, reads them here.
    panel = drawn["panel"] = full_run_panel if st.session_state.get(FULL_RUN) else sidebar.knob_panel()
    knobs = panel.knobs
    if (knobs is None) != (places is None) and not st.session_state.get(FULL_RUN):
        st.rerun()  # the knobs turned valid or invalid: the full run draws the places and tabs, or takes them away
    run = None
    try:
        if knobs is None or places is None:
            sidebar.flashes()
            return panel, None
        head, tabs = places
        run = runs.replay(key, knobs, briefer, history)
        pinned = st.session_state.get(compare_tab.PINNED)
        run_a = runs.replay(key, pinned, briefer, history) if pinned is not None else None
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
        _other_tabs(tabs, run, run_a, knobs)
    finally:
        with side_mission:
            sidebar.draw_mission(panel, run)  # ranges for this history, the notes of this run
        with side_checks:
            sidebar.draw_checks(panel)
    if not st.session_state.get(FULL_RUN) and sidebar.groups_shown(panel, run) != st.session_state.get(GROUPS):
        st.rerun()  # the knob groups show something else now (e.g. a value written into an open group)
    return panel, run


def _other_tabs(tabs: Any, run: Run, run_a: Run | None, knobs: Knobs) -> None:
    """The open tab other than Charts. Their modules are imported when their tab opens: the first chart does not
    wait for them."""
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

            # With the simulated briefer in the sidebar, the page's replay is the one the Sweep tab's ranges read
            sweep_tab.render(label, history, knobs, sidebar.history_loaders(),
                             simulated=run if briefer == "simulated" else None)
    with tabs[5]:
        if tabs[5].open:
            from workbench.ui import reality_tab

            reality_tab.render(history, knobs)
    with tabs[6]:
        if tabs[6].open:
            from workbench.ui import config_tab

            config_tab.render(knobs, history_path)


GROUPS = "_knob_groups_shown"  # what the knob groups showed when a full run last drew them
page: tuple[sidebar.KnobPanel, Run | None] | None = None
drawn: dict[str, sidebar.KnobPanel] = {}  # the panel ``knob_page`` drew its widgets from, if it got that far
# The place of the history's line, cards and notes (filled after the context chart) and the tabs, drawn by full runs
# only: a knob move fills them again (a fragment writes into containers made outside it), so the browser does not
# re-render the tab bar and its seven tabs on every move (benchmarks/README.md, browser_slider).
places: tuple[Any, Any] | None = None
full_run_panel = sidebar.knob_panel()  # once a full run (~4 ms): ``knob_page`` takes it in a full run
if full_run_panel.knobs is not None:
    places = (st.container(), st.tabs(["Charts", "Compressions", "A/B compare", "Live runs", "Sweep", "Reality",
                                       "YAML & CLI"], key="tab", on_change="rerun"))
st.session_state[FULL_RUN] = True
try:
    page = knob_page()
finally:
    st.session_state[FULL_RUN] = False
    warmup.empty()  # the browser has had the hidden chart since the imports; the page keeps only the real charts
    page_panel, page_run = page if page is not None else (drawn.get("panel") or full_run_panel, None)
    with side_top:
        sidebar.draw_top(choice, page_panel)
    with side_groups:
        sidebar.draw_groups(page_panel, page_run)  # full runs only: a knob move reruns ``knob_page`` alone
    st.session_state[GROUPS] = sidebar.groups_shown(page_panel, page_run)
    runs.freeze_heap()  # once per process, after its first full run: the page is out, no full collection walks it
