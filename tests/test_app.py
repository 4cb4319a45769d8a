"""The Streamlit app, driven headless with AppTest: every tab renders, widgets drive the engine exactly.

Uploads are driven two ways: through AppTest's file uploader (``.upload(name, bytes)``), and through
the door the uploader's callback uses, ``st.session_state[PENDING_YAML | PENDING_HISTORY]``, which
``workbench.ui.state.consume_pending`` applies at the top of the next run, before any widget exists.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import streamlit.testing.v1.app_test as app_test_module
from app_charts import charts, fast_charts
from conftest import REPO
from knob_values import moved_knobs
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest
from upload_samples import format_samples

from workbench.analysis.compare import compact_number, format_delta
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.counting.prices import get_prices
from workbench.explore.sweep import knobs_of_row
from workbench.explore.tune import Constraints, check_config, retention_floor
from workbench.history.readers import load_history
from workbench.knobs import Knobs, dump_knobs
from workbench.replay import simulate
from workbench.ui import fast_chart, sidebar
from workbench.ui import state as ui_state

APP = str(REPO / "workbench" / "app.py")
SHORT = "sample_histories/short.jsonl"
CARDS = 10  # two rows of five metric cards
TABS = ("Charts", "Compressions", "A/B compare", "Live runs", "Sweep", "Reality", "YAML & CLI")


def app(*, tab: str | None = None, history: str | None = SHORT, **state) -> AppTest:
    """A fresh app session on ``history`` (None: the app's own default), opened on ``tab``."""
    at = AppTest.from_file(APP, default_timeout=60)
    if history is not None:
        at.session_state[ui_state.HISTORY] = history
    if tab is not None:
        at.session_state["tab"] = tab
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def widget(at: AppTest, key: str):
    """The widget with this key, whatever its kind."""
    for kind in ("slider", "number_input", "selectbox", "toggle", "checkbox", "text_input", "radio", "multiselect"):
        for element in getattr(at, kind):
            if element.key == key:
                return element
    raise KeyError(key)


def shown(at: AppTest, key: str):
    """What a knob's widget shows: its value when drawn, else what its (closed) group keeps for it."""
    try:
        return widget(at, key).value
    except KeyError:
        return at.session_state[key]


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.fixture
def media(monkeypatch):
    """Capture the in-memory media store so a test can read what a download button would serve."""
    stores: list[MemoryMediaFileStorage] = []

    class Capturing(MemoryMediaFileStorage):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            stores.append(self)

    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", Capturing)

    def read(at: AppTest, key: str) -> bytes:
        button = next(b for b in at.get("download_button") if b.key == key)
        file_id = button.proto.url.rsplit("/", 1)[-1]
        return stores[-1].get_file(file_id).content

    return read


# -- opening -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_opens_ready_on_the_long_sample_with_stagewise_defaults(long_run):
    """With no input at all, the app replays the long sample under the defaults and shows its numbers."""
    at = app(history=None)
    no_errors(at)
    assert widget(at, ui_state.HISTORY).value == "sample_histories/long.jsonl"
    run = long_run
    assert metric(at, "compressions") == f"{run.metrics.compressions:,}"
    assert metric(at, "peak context") == compact_number(run.metrics.peak_tokens)
    assert len(at.metric) == CARDS
    assert len(charts(at)) == 3


@pytest.mark.slow
def test_first_run_starts_plotly_loading_before_the_imports_and_leaves_no_trace():
    """The page's first element on a session's first run is a hidden empty chart (so the browser fetches and
    compiles plotly.js while the script imports and replays: benchmarks/browser.py's cold start); it is
    emptied before the tabs, and a rerun sends none, so only the three real charts remain."""
    at = app()
    assert at.session_state["_plotly_warm"] is True
    assert [i for i, _ in charts(at) if "plotly_warmup" in i] == []
    assert len(charts(at)) == 3
    main = at._tree.children[0].children  # the main block, in order
    assert main[0].type == "empty"  # the warm-up's placeholder keeps its place on every run
    source = Path(APP).read_text(encoding="utf-8")
    assert source.index("first_paint.warm_plotly(") < source.index("from workbench.ui import agent_open")
    at.run()
    assert len(charts(at)) == 3 and at._tree.children[0].children[0].type == "empty"


@pytest.mark.slow
def test_the_charts_tab_draws_with_plotly_basic_bundle_and_the_same_figures(long_run):
    """The Charts tab's three figures go to the basic-bundle component (plotly.js 4's scatter/bar/pie build,
    served from workbench/static/), each with the figure JSON st.plotly_chart would send and its config;
    nothing goes through st.plotly_chart, so the browser never loads Streamlit's full 4.7 MB plotly.js."""
    import json

    from workbench import plots

    at = app(history=None)
    no_errors(at)
    assert len(at.get("plotly_chart")) == 0
    drawn = dict(fast_charts(at))
    assert sorted(k.rsplit("-", 1)[-1] for k in drawn) == ["briefing", "context", "cost"]
    context = json.loads(next(v for k, v in drawn.items() if k.endswith("-context")))
    expected = json.loads(plots.context_figure(long_run).to_json())
    assert [t["name"] for t in context["data"]] == [t["name"] for t in expected["data"]]
    assert context["layout"]["yaxis"]["range"] == expected["layout"]["yaxis"]["range"]
    assert context["config"] == {"displaylogo": False}


@pytest.mark.slow
def test_without_static_serving_the_charts_fall_back_to_st_plotly_chart():
    """Started without the repository's .streamlit/config.toml (static serving off), the same figures go through
    st.plotly_chart: nothing depends on the bundle being served."""
    from streamlit import config

    before = config.get_option("server.enableStaticServing")
    config.set_option("server.enableStaticServing", False)
    try:
        at = app(history=None)
    finally:
        config.set_option("server.enableStaticServing", before)
    no_errors(at)
    assert fast_charts(at) == [] and len(at.get("plotly_chart")) == 3


def test_the_bundled_plotly_is_the_version_plotly_py_writes_for():
    """workbench/static/plotly-basic.min.js must match the plotly.js that plotly.py (installed) targets, or a
    figure could use an attribute the bundle does not know; its MIT licence ships beside it."""
    import re as _re
    from importlib.resources import files

    full = (files("plotly") / "package_data" / "plotly.min.js").open("r", encoding="utf-8").read(300)
    ours = (REPO / "workbench" / "static" / "plotly-basic.min.js").open(encoding="utf-8").read(300)
    version = _re.compile(r"plotly\.js(?: \(basic - minified\))? v(\d+\.\d+\.\d+)")
    assert version.search(ours)[1] == version.search(full)[1] == fast_chart.BUNDLE_VERSION
    assert fast_chart._compatible()
    assert "MIT" in (REPO / "workbench" / "static" / "PLOTLY_LICENSE").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("tab", TABS)
def test_every_tab_renders(tab):
    """Each tab draws without an exception or an error box (on a window small enough to compress)."""
    at = app(tab=tab, knob_context_window_tokens=20_000)
    no_errors(at)
    assert at.session_state["tab"] == tab
    expected = {"Charts": "chart", "Compressions": "dataframe", "A/B compare": "button",
                "Live runs": "button", "Sweep": "button", "Reality": "info", "YAML & CLI": "download_button"}[tab]
    assert charts(at) if expected == "chart" else at.get(expected)


@pytest.mark.slow
def test_default_run_never_imports_litellm():
    """The offline run stays offline: litellm is imported only by a live run."""
    code = (
        "import sys\nfrom streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({APP!r}, default_timeout=60)\nat.session_state['history'] = {SHORT!r}\n"
        "at.run()\nassert not at.exception\nprint('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_without_sample_files_it_opens_on_a_generated_history(monkeypatch):
    """Installed without the repository (no sample_histories/), the app generates a small history."""
    import workbench.history.samples.datasets

    monkeypatch.setattr(workbench.history.samples.datasets, "sample_dirs", lambda: [])
    monkeypatch.delenv("WORKBENCH_HISTORIES", raising=False)
    at = app(history=None)
    no_errors(at)
    assert widget(at, ui_state.HISTORY).value == "generated sample"
    assert len(at.metric) == CARDS


@pytest.mark.slow
def test_histories_folder_from_the_environment_joins_the_picker(monkeypatch):
    """WORKBENCH_HISTORIES adds its files to the history picker."""
    monkeypatch.setenv("WORKBENCH_HISTORIES", str(REPO / "tests" / "fixtures" / "histories"))
    at = app()
    assert "histories/openai_chat.json" in widget(at, ui_state.HISTORY).options
    widget(at, ui_state.HISTORY).set_value("histories/openai_chat.json").run()
    no_errors(at)


def test_histories_folder_on_the_command_line_opens_on_the_users_first_file(monkeypatch, tmp_path):
    """`streamlit run workbench/app.py -- --histories DIR` opens on DIR's first file, not on the bundled sample, and
    lists the user's files before the samples (#21 item 10)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("b_second.jsonl", "a_first.jsonl"):
        (mine / name).write_bytes((REPO / SHORT).read_bytes())
    monkeypatch.delenv("WORKBENCH_HISTORIES", raising=False)
    monkeypatch.setattr(sys, "argv", [APP, "--histories", str(mine)])
    at = app(history=None)
    no_errors(at)
    picker = widget(at, ui_state.HISTORY)
    assert picker.value == "mine/a_first.jsonl"
    assert picker.options[:2] == ["mine/a_first.jsonl", "mine/b_second.jsonl"]
    assert "sample_histories/long.jsonl" in picker.options


# -- knobs drive the engine ----------------------------------------------------------------------


@pytest.mark.slow
def test_threshold_slider_changes_compressions_exactly_as_the_engine():
    """Moving trigger_ratio gives the compression count simulate() gives for the same knobs."""
    history = load_history(REPO / SHORT)
    at = app(knob_context_window_tokens=20_000)
    for ratio in (0.65, 0.4, 0.9):  # the trigger control writes the ratio, which binds under a 20,000 window
        widget(at, sidebar.TRIGGER).set_value(int(ratio * 20_000)).run()
        no_errors(at)
        expected = simulate(history, Knobs(context_window_tokens=20_000, trigger_ratio=ratio)).metrics
        assert metric(at, "compressions") == f"{expected.compressions:,}"
        assert metric(at, "peak context") == compact_number(expected.peak_tokens)
    counts = {simulate(history, Knobs(context_window_tokens=20_000, trigger_ratio=r)).metrics.compressions
              for r in (0.4, 0.9)}
    assert len(counts) == 2  # the slider really matters on this history


def test_a_full_run_reads_the_knobs_once(monkeypatch):
    """A full run reads the sidebar's knobs from session state once (``sidebar.knob_panel``): the knob page takes
    the panel that decided the page's places; on opening, after the trigger moves, and on another tab."""
    calls = []
    real = sidebar.knob_panel

    def counting() -> sidebar.KnobPanel:
        calls.append(1)
        return real()

    monkeypatch.setattr(sidebar, "knob_panel", counting)
    at = app(knob_context_window_tokens=20_000)
    runs = [len(calls)]
    widget(at, sidebar.TRIGGER).set_value(8_000).run()
    runs.append(len(calls) - sum(runs))
    at.session_state["tab"] = "Sweep"
    at.run()
    runs.append(len(calls) - sum(runs))
    no_errors(at)
    assert runs == [1, 1, 1] and len(at.metric) == CARDS  # and the page got as far as its cards


def test_off_box_disables_compression():
    """Ticking 'off' sets trigger_ratio = -1: no compression at all."""
    at = app(knob_context_window_tokens=20_000, knob_group_trigger=True)
    widget(at, ui_state.off_key("trigger_ratio")).check().run()
    assert metric(at, "compressions") == "0"
    assert any("disabled" in w.value for w in at.warning)


@pytest.mark.slow
def test_model_picker_fills_the_window_from_the_registry():
    """Choosing an agent model sets context_window_tokens to its max input tokens."""
    at = app(knob_group_model=True)  # open the "Models, window and prices" group
    widget(at, "knob_model").set_value("gpt-4o").run()
    no_errors(at)
    assert widget(at, "knob_context_window_tokens").value == get_prices("gpt-4o").max_input_tokens


@pytest.mark.slow
def test_kept_budget_reaching_the_trigger_shows_the_invariant_warning():
    """When the verbatim budget reaches the trigger, the sidebar says compression cannot free room."""
    at = app(knob_group_keep=True)  # the kept budget's cap sits with what stays verbatim
    at.session_state[ui_state.PENDING_YAML] = ("kept.yaml", "kept_budget_ratio: 0.9\n")  # past the slider's range
    at.run()
    widget(at, "knob_kept_budget_cap_tokens").set_value(500_000).run()
    assert any("reaches the trigger" in w.value for w in at.sidebar.warning)


@pytest.mark.slow
def test_closed_groups_draw_no_widgets_and_keep_their_values():
    """Only the open knob groups draw widgets (a faster page); a value set in a group survives closing it."""
    at = app(knob_group_model=True)
    widget(at, "knob_briefer_model").set_value("gpt-4o-mini").run()
    at.session_state["knob_group_model"] = False
    at.run()
    no_errors(at)
    assert "knob_briefer_model" not in [w.key for w in at.selectbox]
    assert ui_state.knobs_from_values(at.session_state).briefer_model == "gpt-4o-mini"
    at.session_state["knob_group_model"] = True
    at.run()
    assert widget(at, "knob_briefer_model").value == "gpt-4o-mini"


@pytest.mark.slow
def test_knobs_and_tables_speak_words_with_the_identifier_one_hover_away():
    """Knob titles in words (identifier first in the help); the compressions table says "85% of target or more"
    and "min kept messages reached first", not gte85 and floor."""
    at = app(tab="Compressions", knob_context_window_tokens=20_000, knob_group_trigger=True)
    no_errors(at)
    ratio = widget(at, "knob_trigger_ratio")
    assert ratio.label == "Trigger at share of window" and ratio.help.startswith("`trigger_ratio`")
    table = next(d for d in at.dataframe if "bucket" in d.value.columns).value
    assert not set(table["bucket"]) & {"none", "lt60", "60to85", "gte85"}
    assert set(table["stop"]) <= {"min kept messages reached first", "kept budget reached",
                                  "newest message alone exceeds the budget"}


@pytest.mark.slow
def test_cards_format_deltas_like_their_values_and_judge_each_metric_its_own_way():
    """Against a pinned A, deltas read like the values ("-9.6M", "-$28.8"); a smaller largest briefing is
    neither better nor worse (no red), fewer tokens are green."""
    at = app(tab="A/B compare", knob_context_window_tokens=20_000, knob_group_trigger=True)
    at.button(key="ab_pin").click().run()
    widget(at, "knob_trigger_ratio").set_value(0.4).run()
    history = load_history(REPO / SHORT)
    a = simulate(history, Knobs(context_window_tokens=20_000)).metrics
    b = simulate(history, Knobs(context_window_tokens=20_000, trigger_ratio=0.4)).metrics
    cards = {m.label: m for m in at.metric}
    assert cards["tokens / task"].proto.delta == format_delta("tokens_per_task", b.tokens_per_task - a.tokens_per_task,
                                                              b.tokens_per_task)
    assert cards["tokens / task"].proto.delta.endswith("k") and cards["tokens / task"].proto.body.endswith("k")
    assert cards["peak context"].proto.delta.endswith("k")  # "-5.8k" under "13.0k", not "-5,830"
    assert "GREEN" in str(cards["tokens / task"].proto)
    assert b.max_briefing_chars != a.max_briefing_chars and "GRAY" in str(cards["largest briefing"].proto)
    table = next(d for d in at.dataframe if d.value.columns[0] == "metric").value
    row = table[table["metric"] == "largest briefing (chars)"].iloc[0]
    assert row["B better"] in ("neither", "")


@pytest.mark.slow
def test_thrash_and_a_large_briefing_target_are_cards_and_warnings(long_history):
    """A 16k window with the 30,000-char target: the briefing target is ~47% of the window and compactions
    thrash; the cards count them and the warnings say what to change."""
    at = app(history="sample_histories/long.jsonl", knob_context_window_tokens=16_000)
    no_errors(at)
    run = simulate(long_history, Knobs(context_window_tokens=16_000))
    assert metric(at, "thrash") == f"{run.metrics.thrash_events:,}" != "0"
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Thrash:") and f"{run.metrics.compressions:,} compactions in" in w for w in warnings)
    assert any("47% of the 16,000-token window" in w for w in warnings)


@pytest.mark.slow
def test_a_dead_knob_says_why_under_its_widget():
    """On the long sample the 100k cap binds, so the trigger ratio does nothing: the note says so and how to fix it."""
    at = app(history="sample_histories/long.jsonl", knob_group_trigger=True)  # the ratio sits with "When to compact"
    notes = [c.value for c in at.sidebar.caption]
    assert any("no effect: the hard cap binds (100,000 < 0.65 × window = 130,000)" in n for n in notes)
    assert any("10-message floor" in n for n in notes)
    at.session_state[ui_state.PENDING_YAML] = ("cap.yaml", "trigger_hard_cap_tokens: 1000000\n")  # past the window
    at.run()
    notes = [c.value for c in at.sidebar.caption]
    assert not any("hard cap binds" in n for n in notes)
    assert any("the cap matters below 130,000" in n for n in notes)


@pytest.mark.slow
def test_preset_sets_every_knob():
    """Choosing the chat-agent preset moves the widgets to its values."""
    at = app()
    widget(at, "preset").set_value("stagewise_chat").run()
    assert shown(at, "knob_trigger_ratio") == 0.5
    assert widget(at, "knob_min_kept_messages").value == 12


def test_briefer_choice_switches_to_extractive_text():
    """The extractive briefer writes real text that the inspector shows."""
    at = app(tab="Compressions", knob_context_window_tokens=20_000)
    widget(at, "briefer").set_value("extractive").run()
    no_errors(at)
    assert any("extractive" in c.value for c in at.caption)
    assert any(c.language == "markdown" and "## " in c.value for c in at.code)


def test_compressions_tab_says_once_why_a_briefing_has_no_text():
    """With the size-only briefer the tab states "simulated size only" once, not in a caption and a box (issue 13)."""
    at = app(tab="Compressions", knob_context_window_tokens=20_000)
    no_errors(at)
    shown = [e.value for e in (*at.caption, *at.info, *at.markdown)]
    assert sum("simulated size only" in v for v in shown) == 1, shown


# -- YAML ----------------------------------------------------------------------------------------


def test_yaml_download_is_the_engine_dump(media):
    """The download button serves exactly dump_knobs() of the widgets' knobs."""
    at = app(tab="YAML & CLI", knob_trigger_ratio=0.42)
    no_errors(at)
    expected = dump_knobs(Knobs(trigger_ratio=0.42))
    assert media(at, "yaml_download").decode() == expected
    assert at.code[0].value == expected.rstrip("\n")  # st.code drops the final newline


@pytest.mark.slow
def test_uploading_a_yaml_restores_every_widget_and_round_trips(media):
    """Every knob moved off its default comes back through the uploader, and downloads as the same text."""
    knobs = moved_knobs()
    text = dump_knobs(knobs)
    at = app(tab="YAML & CLI")
    at.file_uploader(key="yaml_upload").upload("mine.yaml", text.encode(), "application/x-yaml").run()
    assert not at.exception
    for key, value in ui_state.widget_values(knobs).items():
        assert shown(at, key) == value, key
    assert ui_state.knobs_from_values(at.session_state) == knobs
    assert media(at, "yaml_download").decode() == text
    assert any("Loaded every knob" in s.value for s in at.success)


@pytest.mark.slow
def test_queued_yaml_and_pasted_yaml_take_the_same_path():
    """The uploader's session-state door and the paste box both set the widgets."""
    knobs = Knobs(trigger_ratio=0.5, min_kept_messages=3, check_point="message")
    at = app(tab="YAML & CLI", **{ui_state.PENDING_YAML: ("queued.yaml", dump_knobs(knobs))})
    assert ui_state.knobs_from_values(at.session_state) == knobs
    other = Knobs(target_briefing_chars=12_345)
    at.text_area(key="yaml_paste").input(dump_knobs(other)).run()
    at.button(key="yaml_apply").click().run()
    assert ui_state.knobs_from_values(at.session_state) == other


@pytest.mark.slow
def test_a_partial_yaml_changes_only_the_knobs_it_names_unless_replace_all_is_chosen():
    """Pasting one knob keeps every other widget; "replace all" sends the unnamed knobs back to their defaults."""
    at = app(tab="YAML & CLI", knob_min_kept_messages=3)
    at.text_area(key="yaml_paste").input("trigger_ratio: 0.5\n").run()
    at.button(key="yaml_apply").click().run()
    no_errors(at)
    assert ui_state.knobs_from_values(at.session_state) == Knobs(trigger_ratio=0.5, min_kept_messages=3)
    assert any("Changed only the 1 knob(s)" in s.value and "trigger_ratio" in s.value for s in at.success)
    widget(at, ui_state.YAML_MODE).set_value("replace").run()
    at.button(key="yaml_apply").click().run()
    assert ui_state.knobs_from_values(at.session_state) == Knobs(trigger_ratio=0.5)
    assert any("went back to its default" in s.value for s in at.success)


@pytest.mark.slow
@pytest.mark.parametrize(("text", "expected"), [
    ("min_kept_messages: 4\ntriger_ratio: 0.5\n", "pasted YAML:2: unknown knob 'triger_ratio' (did you mean trigger_ratio?)"),
    ("trigger_ratio: 0.5\ntrigger_ratio: 0.6\n", "pasted YAML:2: duplicate knob 'trigger_ratio' (also on line 1)"),
], ids=["unknown", "duplicate"])
def test_a_yaml_mistake_is_named_with_its_line_and_nothing_changes(text, expected):
    at = app(tab="YAML & CLI", knob_min_kept_messages=3)
    at.text_area(key="yaml_paste").input(text).run()
    at.button(key="yaml_apply").click().run()
    assert not at.exception
    assert any(expected in e.value for e in at.error), [e.value for e in at.error]
    assert ui_state.knobs_from_values(at.session_state) == Knobs(min_kept_messages=3)


def test_bad_yaml_shows_an_error_naming_the_line():
    """An out-of-range value is an error box naming source and line; the widgets keep their values."""
    at = app(tab="YAML & CLI", **{ui_state.PENDING_YAML: ("bad.yaml", "version: 1\ntrigger_ratio: 7\n")})
    assert not at.exception
    assert any("bad.yaml:2" in e.value for e in at.error)
    assert shown(at, "knob_trigger_ratio") == 0.65


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("version: 1\ntrigger_ratio: " + "[" * 100_000 + "\n", "hostile.yaml:2: nested more than"),
        ("version: 1\ntrigger_ratio:\n  a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n  b: [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
         "hostile.yaml:4: aliases (*a) are not allowed"),
        ("version: 1\n1: 2\n", "hostile.yaml:2: knob names must be text"),
        ("version: 1\ncontext_window_tokens: " + "9" * 400 + "\n", "a 400-digit number"),
    ],
    ids=["deep", "alias-bomb", "int-key", "huge-number"],
)
def test_hostile_yaml_is_one_error_box_not_a_broken_page(text, needle):
    """Issue 12 items 4-5: what replaced the whole page (RecursionError, TypeError, MemoryError) is an error box."""
    at = app(tab="YAML & CLI", **{ui_state.PENDING_YAML: ("hostile.yaml", text)})
    assert not at.exception
    assert any(needle in e.value for e in at.error), [e.value[:200] for e in at.error]
    assert shown(at, "knob_trigger_ratio") == 0.65


def test_cli_command_lists_the_changed_knobs():
    """'Copy as CLI command' names the history and only the knobs that differ from the defaults."""
    at = app(tab="YAML & CLI", knob_trigger_ratio=0.5)
    assert at.code[1].value == f"workbench simulate {SHORT} --set trigger_ratio=0.5"


# -- history uploads -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(format_samples()))
def test_each_reader_format_uploads(fmt):
    """A file in each supported format uploads, becomes the chosen history and replays."""
    name, data = format_samples()[fmt]
    at = app()
    at.sidebar.file_uploader(key="history_upload").upload(name, data).run()
    no_errors(at)
    assert widget(at, ui_state.HISTORY).value.startswith(ui_state.UPLOAD_PREFIX + name)
    assert len(at.metric) == CARDS


def test_several_files_upload_at_once_and_join_the_sweep():
    """Three files in one upload: all join the picker, the first is shown, the Sweep tab runs over all three."""
    samples = format_samples()
    files = [(samples[f][0], samples[f][1], "application/octet-stream") for f in ("claude_code", "openai",
                                                                                     "codex")]
    at = app()
    at.sidebar.file_uploader(key="history_upload").set_value(files).run()
    no_errors(at)
    labels = [ui_state.UPLOAD_PREFIX + name for name, _, _ in files]
    assert all(label in widget(at, ui_state.HISTORY).options for label in labels)
    assert widget(at, ui_state.HISTORY).value == labels[0]
    assert at.session_state["sweep_histories"] == labels
    assert any("Loaded 3 histories" in s.value for s in at.success)
    at.session_state["tab"] = "Sweep"
    at.run()
    assert widget(at, "sweep_histories").value == labels


@pytest.mark.slow
def test_a_folder_upload_loads_its_histories_and_names_what_it_skipped():
    """A folder with two histories, a README and a broken file: two load, the README is skipped, the broken
    file is named in an error, and nothing else is lost."""
    samples = format_samples()
    folder = [("logs/a.jsonl", samples["claude_code"][1], "application/octet-stream"),
              ("logs/README.md", b"# notes", "text/markdown"),
              ("logs/broken.json", b'{"messages": [{"role": ', "application/json"),
              ("logs/b.json", samples["openai"][1], "application/json")]
    at = app()
    at.sidebar.file_uploader(key="history_folder").set_value(folder).run()
    assert not at.exception
    options = widget(at, ui_state.HISTORY).options
    assert ui_state.UPLOAD_PREFIX + "logs/a.jsonl" in options and ui_state.UPLOAD_PREFIX + "logs/b.json" in options
    assert any("logs/broken.json" in e.value for e in at.error)
    assert any("README.md" in i.value for i in at.info)
    assert any("Loaded 2 histories" in s.value for s in at.success)
    assert len(at.metric) == CARDS


@pytest.mark.slow
def test_history_upload_through_the_session_state_door():
    """Bytes queued under PENDING_HISTORY go through the same reader as the uploader."""
    name, data = format_samples()["claude_code"]
    at = app(**{ui_state.PENDING_HISTORY: (name, data)})
    no_errors(at)
    assert widget(at, ui_state.HISTORY).value == ui_state.UPLOAD_PREFIX + name


@pytest.mark.slow
@pytest.mark.parametrize("data", [b'{"messages": [{"role": ', b"\x89PNG\r\n\x1a\n\x00\x00", b"[1, 2, 3]"],
                         ids=["truncated", "binary", "wrong-shape"])
def test_a_corrupt_upload_shows_an_error_not_a_traceback(data):
    """A bad file is one error line naming it; the previous history stays chosen and replayed."""
    at = app()
    at.sidebar.file_uploader(key="history_upload").upload("broken.json", data).run()
    assert not at.exception
    assert any("broken.json" in e.value for e in at.error)
    assert widget(at, ui_state.HISTORY).value == SHORT
    assert len(at.metric) == CARDS


# -- A/B, sweep, live ----------------------------------------------------------------------------


@pytest.mark.slow
def test_ab_compare_pins_a_and_shows_deltas():
    """Pin A, move a slider: the delta table and the metric cards compare B with A."""
    history = load_history(REPO / SHORT)
    at = app(tab="A/B compare", knob_context_window_tokens=20_000, knob_group_trigger=True)
    at.button(key="ab_pin").click().run()
    widget(at, "knob_trigger_ratio").set_value(0.4).run()
    no_errors(at)
    a = simulate(history, Knobs(context_window_tokens=20_000)).metrics
    b = simulate(history, Knobs(context_window_tokens=20_000, trigger_ratio=0.4)).metrics
    table = next(d for d in at.dataframe if d.value.columns[0] == "metric").value
    row = table[table["metric"] == "compressions"].iloc[0]
    assert (row["A"], row["B"]) == (f"{a.compressions:,}", f"{b.compressions:,}")
    card = next(m for m in at.metric if m.label == "compressions")
    assert card.proto.delta == f"{b.compressions - a.compressions:+,}"
    assert len(charts(at)) == 3
    at.button(key="ab_swap").click().run()
    assert widget(at, "knob_trigger_ratio").value == 0.65


@pytest.mark.slow
def test_sweep_runs_a_grid_and_loads_a_cell():
    """A 2 × 2 sweep draws a heatmap; loading a cell sets both knobs in the sidebar."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    widget(at, "sweep_x_steps").set_value(2).run()
    widget(at, "sweep_y_steps").set_value(2).run()
    at.button(key="sweep_go").click().run()
    no_errors(at)
    frame = at.session_state["sweep_result"]["frame"]
    assert frame.height == 4
    assert at.get("plotly_chart")
    widget(at, "sweep_cell").set_value(3).run()
    at.button(key="sweep_load").click().run()
    x, y = frame.select("trigger_ratio", "kept_budget_ratio").unique(maintain_order=True).rows()[3]
    assert shown(at, "knob_trigger_ratio") == x
    assert widget(at, "knob_kept_budget_ratio").value == y


TUNED = Constraints(max_overflows=0, min_retention=0.2, max_compressions=10)


def tuned_app() -> AppTest:
    """The Sweep tab on the short sample (20k window) after an auto-tune for dollars under ``TUNED``."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    widget(at, "tune_objective").set_value("dollars").run()
    widget(at, "tune_floor_from_base").uncheck().run()
    widget(at, "tune_min_retention").set_value(TUNED.min_retention).run()
    widget(at, "tune_limit_from_base").uncheck().run()
    widget(at, "tune_max_compressions").set_value(TUNED.max_compressions).run()
    at.button(key="tune_go").click().run()
    no_errors(at)
    return at


def test_sweep_tab_has_an_auto_tune_section():
    """The Sweep tab offers auto-tune: objective, constraints with no overflow allowed by default, a run button."""
    at = app(tab="Sweep")
    no_errors(at)
    assert any(h.value == "Auto-tune" for h in at.subheader)
    assert widget(at, "tune_objective").value == "tokens"
    assert widget(at, "tune_max_overflows").value == 0
    assert widget(at, "tune_floor_from_base").value is True  # a retention floor by default
    assert widget(at, "tune_briefer").value == "extractive"
    assert widget(at, "tune_limit_from_base").value is True  # a compaction limit from the sidebar's config
    assert widget(at, "tune_max_compressions").disabled
    assert not at.button(key="tune_go").disabled
    assert "tune_result" not in at.session_state


@pytest.mark.slow
def test_auto_tune_winner_meets_its_constraints_on_a_fresh_replay(media):
    """The winner replays afresh within the constraints; the download is dump_knobs of it; the front is drawn."""
    at = tuned_app()
    result = at.session_state["tune_result"]["result"]
    winner = result.best
    assert winner is not None and result.objective == "dollars" and result.constraints == TUNED
    assert winner != Knobs(context_window_tokens=20_000)  # the constraints move it off the sidebar's knobs
    history = load_history(REPO / SHORT)
    fresh = check_config(winner, [history], TUNED, objective="dollars", briefer=ExtractiveBriefer())
    assert fresh["feasible"] and fresh["retention"] >= TUNED.min_retention
    assert fresh["objective"] == pytest.approx(result.best_row["objective"])
    run = simulate(history, winner).metrics
    assert run.overflows == 0 and run.compressions <= TUNED.max_compressions
    assert media(at, "tune_download").decode() == dump_knobs(winner)
    assert next(m for m in at.metric if m.label == "fact retention").value == f"{fresh['retention']:.1%}"
    assert charts(at)


@pytest.mark.slow
def test_load_the_winner_sets_every_sidebar_widget():
    """'Load the winner' goes through the YAML door: every sidebar widget shows the winner's value."""
    at = tuned_app()
    winner = at.session_state["tune_result"]["result"].best
    at.button(key="tune_load").click().run()
    no_errors(at)
    for key, value in ui_state.widget_values(winner).items():
        assert shown(at, key) == value, key
    assert ui_state.knobs_from_values(at.session_state) == winner
    assert any("tuned winner" in s.value for s in at.success)
    assert at.button(key="tune_load").disabled  # nothing left to load


def default_tune() -> tuple[AppTest, Any, dict]:
    """The Sweep tab on the short sample (20k window) after an auto-tune with the defaults; the sidebar config's
    score with the extractive briefer."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    at.button(key="tune_go").click().run()
    no_errors(at)
    base = check_config(Knobs(context_window_tokens=20_000), [load_history(REPO / SHORT)], Constraints(),
                        briefer=ExtractiveBriefer())
    return at, at.session_state["tune_result"]["result"], base


@pytest.mark.slow
def test_default_auto_tune_floors_retention_names_its_briefer_and_offers_to_widen_an_edge():
    """With the defaults the floor is the sidebar config's retention less 5 points (extractive briefer); a winner
    on the end of a range gets a warning and a button that widens that range and tunes again."""
    at, result, base = default_tune()
    assert result.constraints.min_retention == pytest.approx(retention_floor(base["retention"]))
    assert result.briefer == "extractive" and result.best_row["retention"] >= result.constraints.min_retention
    assert any("extractive briefer" in c.value for c in at.caption)
    table = next(d for d in at.dataframe if "compresses" in d.value.columns).value
    assert list(table["history"]) == ["short", "short"] and list(table["config"]) == ["winner", "sidebar"]
    edges = result.edges()
    assert edges, "the cheapest config sits on the edge of its range on this history"
    edge = edges[0]
    at.button(key=f"tune_widen_{edge.knob}").click().run()
    no_errors(at)
    again = at.session_state["tune_result"]["result"]
    assert again.space[edge.knob] == pytest.approx(edge.widened)


@pytest.mark.slow
def test_default_auto_tune_compacts_at_most_twice_as_often_as_the_sidebars_config():
    """Fewer tokens always favour compacting more often: by default the winner may compact at most twice as often
    as the sidebar's config on any history, and the result says the limit and who scored retention."""
    at, result, base = default_tune()
    assert result.constraints.max_compressions == 2 * base["max_compressions"]
    assert result.best_row["max_compressions"] <= 2 * base["max_compressions"]
    assert any(f"at most {2 * base['max_compressions']} compactions on any history" in c.value for c in at.caption)
    assert any("fact retention scored by the extractive briefer" in m.value for m in at.markdown)


@pytest.mark.slow
def test_auto_tune_with_impossible_constraints_says_so():
    """When no config meets the constraints there is a warning with the closest miss, and nothing to download."""
    at = app(tab="Sweep", knob_context_window_tokens=20_000)
    widget(at, "tune_floor_from_base").uncheck().run()
    widget(at, "tune_min_retention").set_value(1.0).run()
    widget(at, "tune_limit_from_base").uncheck().run()
    widget(at, "tune_max_compressions").set_value(0).run()  # and no overflow: the history outgrows a 20k window
    at.button(key="tune_go").click().run()
    assert not at.exception
    assert any("No config met the constraints" in w.value for w in at.warning)
    assert not [b for b in at.get("download_button") if b.key == "tune_download"]


def test_an_auto_tune_replays_the_sidebars_config_once_per_history(monkeypatch):
    """A click on Run auto-tune replays the sidebar's config once on each history: its score under the defaults,
    its score under the constraints and its row in the per-history table all come from that replay."""
    import workbench.replay

    base = Knobs(context_window_tokens=20_000)
    histories = [SHORT, "sample_histories/tool_heavy.jsonl"]
    at = app(tab="Sweep", knob_context_window_tokens=20_000, sweep_histories=histories, tune_space=["trigger_ratio"],
             tune_points=2, tune_rounds=0)  # a small grid: the count, not the search, is under test
    replays: list[str] = []
    real = workbench.replay.simulate

    def counting(history, knobs, *args, **kwargs):
        if knobs == base:
            replays.append(history.id)
        return real(history, knobs, *args, **kwargs)

    monkeypatch.setattr(workbench.replay, "simulate", counting)
    at.button(key="tune_go").click().run()
    no_errors(at)
    found = at.session_state["tune_result"]
    assert found["labels"] == histories and found["base_rows"].height == len(histories)
    tried = {knobs_of_row(row) for row in found["result"].runs.iter_rows(named=True)}
    assert base not in tried  # the tune's own grid never replays the sidebar's config: every replay counted is its
    assert sorted(replays) == ["short", "tool_heavy"]


@pytest.mark.slow
def test_live_run_against_a_local_provider_then_from_the_cache(tmp_path, monkeypatch):
    """A live run calls the model once per compression; the same run again comes from the disk cache."""
    from fake_provider import FakeProvider

    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    secret = "sk-test-0123456789abcdef"
    with FakeProvider() as provider:
        at = app(tab="Live runs", knob_context_window_tokens=20_000)
        widget(at, "live_models").set_value(["openai/fake-good"]).run()
        widget(at, "live_api_base").input(provider.api_base).run()
        widget(at, "live_api_key").input(secret).run()
        at.button(key="live_go").click().run()
        no_errors(at)
        digest, live = at.session_state["live_run"]
        simulated = simulate(load_history(REPO / SHORT), Knobs(context_window_tokens=20_000))
        assert len(live.compressions) == len(simulated.compressions) == provider.total_requests > 0
        assert all(c.record.model == "openai/fake-good" and c.record.text for c in live.compressions)
        at.button(key="live_go").click().run()
        assert provider.total_requests == len(simulated.compressions)  # no new request: cache hits
        assert all(c.record.cache_hit for c in at.session_state["live_run"][1].compressions)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert secret.encode() not in stored
    assert secret not in str(at.session_state["live_run"][1].to_json_dict())


def _live(at: AppTest, provider, model: str, key: str | None = "sk-test-0123456789abcdef") -> AppTest:
    widget(at, "live_models").set_value([f"openai/{model}"]).run()
    widget(at, "live_api_base").input(provider.api_base).run()
    if key:
        widget(at, "live_api_key").input(key).run()
    return at


@pytest.mark.slow
def test_live_run_without_a_key_sends_nothing_and_says_why(monkeypatch):
    """The pre-flight check finds no credentials: an error naming the variable, nothing sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = app(tab="Live runs", knob_context_window_tokens=20_000)
    widget(at, "live_models").set_value(["openai/fake-good"]).run()
    at.button(key="live_go").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "OPENAI_API_KEY" in errors and "Nothing was sent" in errors
    assert "live_run" not in at.session_state


# -- where the environment's key may go (a page anyone can open must not send it wherever it says) -------------

ENV_KEY = "sk-env-operator-0123456789abcdef"


def _authorizations(provider) -> list[str]:
    """Every Authorization header that reached the server, on any path."""
    return [r["headers"].get("authorization", "") for r in provider.wire]


@pytest.mark.slow
@pytest.mark.parametrize("button", ["live_go", "live_test"])
def test_an_api_base_typed_in_the_page_never_receives_the_environments_key(monkeypatch, button):
    """The attack: the operator's OPENAI_API_KEY is set, someone types their own server as API base and starts a
    run (or a test request) with no key of their own. Nothing reaches the server, and the page says why."""
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good", key=None)
        at.button(key=button).click().run()
        assert not at.exception
        assert provider.wire == []  # no request at all, so no Authorization carrying the key
    errors = " ".join(e.value for e in at.error)
    assert "Nothing was sent" in errors and "gets only a key typed in this page" in errors
    assert ENV_KEY not in errors and "live_run" not in at.session_state


@pytest.mark.slow
def test_a_key_typed_in_the_page_is_the_only_key_a_typed_base_receives(monkeypatch):
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    page_key = "sk-typed-in-the-page-0123456789"
    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good", key=page_key)
        at.button(key="live_go").click().run()
        no_errors(at)
        sent = _authorizations(provider)
    assert sent and set(sent) == {f"Bearer {page_key}"}
    assert not any(ENV_KEY in h for r in provider.wire for h in r["headers"].values())


@pytest.mark.slow
@pytest.mark.parametrize("model", ["gigachat/GigaChat", "bedrock/anthropic.claude-3-haiku"])
def test_a_typed_base_is_refused_for_a_provider_that_signs_with_other_credentials(monkeypatch, model):
    """litellm's gigachat sent its environment credential instead of the key given; bedrock signs with AWS's."""
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with FakeProvider() as provider:
        at = app(tab="Live runs", knob_context_window_tokens=20_000)
        widget(at, "live_models").set_value([model]).run()
        widget(at, "live_api_base").input(provider.api_base).run()
        widget(at, "live_api_key").input("sk-typed-in-the-page-0123456789").run()
        at.button(key="live_go").click().run()
        assert not at.exception and provider.wire == []
    errors = " ".join(e.value for e in at.error)
    assert "Nothing was sent" in errors and "may sign requests with credentials from the environment" in errors


@pytest.mark.slow
def test_the_operators_api_base_gets_the_environments_key(monkeypatch):
    """WORKBENCH_API_BASE is the operator's choice: the field shows it (without its credentials) and a run sends
    the environment's key there."""
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    with FakeProvider() as provider:
        monkeypatch.setenv("WORKBENCH_API_BASE", provider.api_base)
        at = app(tab="Live runs", knob_context_window_tokens=20_000)
        assert widget(at, "live_api_base").value == provider.api_base
        assert any("the base the app was started with" in c.value for c in at.caption)
        widget(at, "live_models").set_value(["openai/fake-good"]).run()
        at.button(key="live_go").click().run()
        no_errors(at)
        assert set(_authorizations(provider)) == {f"Bearer {ENV_KEY}"}


@pytest.mark.slow
def test_allow_page_api_base_lets_a_typed_base_use_the_environments_key(monkeypatch):
    """``streamlit run workbench/app.py -- --allow-page-api-base``: the operator opted in."""
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setattr(sys, "argv", [APP, "--allow-page-api-base"])
    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good", key=None)
        assert any("--allow-page-api-base" in c.value for c in at.caption)
        at.button(key="live_go").click().run()
        no_errors(at)
        assert set(_authorizations(provider)) == {f"Bearer {ENV_KEY}"}


@pytest.mark.slow
def test_live_run_stops_after_three_failures_and_shows_the_provider_error():
    """A provider that always answers 500: three requests, the run so far, and the error on the page."""
    from fake_provider import FakeProvider

    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-fail")
        at.button(key="live_go").click().run()
        assert not at.exception
        errors = " ".join(e.value for e in at.error)
        assert "3 compressions failed in a row" in errors and "HTTP 500" in errors and "3 provider requests" in errors
        assert provider.total_requests == 3
        live = at.session_state["live_run"][1]
        assert [c.status for c in live.compressions] == ["failed"] * 3
        assert "sk-test-0123456789abcdef" not in errors


@pytest.mark.slow
def test_live_caps_follow_the_estimate_and_a_request_cap_stops_the_run():
    from fake_provider import FakeProvider

    dry = simulate(load_history(REPO / SHORT), Knobs(context_window_tokens=20_000))
    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good")
        assert widget(at, "live_max_requests").value >= len(dry.compressions)  # room above the estimate
        widget(at, "live_max_requests").set_value(2).run()
        assert any("below the estimate" in w.value for w in at.warning)
        at.button(key="live_go").click().run()
        assert provider.total_requests == 2
        assert any("request cap reached (2 requests)" in e.value for e in at.error)
        assert [c.status for c in at.session_state["live_run"][1].compressions] == ["landed", "landed"]


@pytest.mark.slow
def test_after_a_live_run_the_compressions_tab_shows_its_briefings():
    """The Compressions tab opens on the live run and shows the text the model wrote, not "size only"."""
    from fake_provider import FakeProvider

    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good")
        at.button(key="live_go").click().run()
        no_errors(at)
        at.session_state["tab"] = "Compressions"
        at.run()
        no_errors(at)
        assert widget(at, "inspect_run").value == "last live run"
        assert any(c.language == "markdown" and "## Conversation so far" in c.value for c in at.code)
        assert not any("size only" in v.value for v in (*at.caption, *at.info))


@pytest.mark.slow
def test_test_the_models_sends_one_tiny_request_each():
    from fake_provider import FakeProvider

    with FakeProvider() as provider:
        at = _live(app(tab="Live runs", knob_context_window_tokens=20_000), provider, "fake-good")
        at.button(key="live_test").click().run()
        assert provider.total_requests == 1 and any("answered" in s.value for s in at.success)


# -- a large upload (its speed is benchmarks/run.py's ``app`` row: a rerun after a slider move) ---------------


@pytest.mark.slow
def test_a_5000_message_upload_reruns_after_each_slider_move(long_history):
    """An uploaded 5,000-message history opens with its compactions and reruns without an error at each move."""
    import dataclasses

    from workbench.history.model import History

    copies = [dataclasses.replace(m, id=f"{m.id}-{k}") for k in range(3) for m in long_history.messages]
    big = History(id="big", messages=tuple(copies[:5_000]))
    label = ui_state.UPLOAD_PREFIX + "big.jsonl"
    at = app(history=label, knob_group_trigger=True, **{ui_state.UPLOADED: {label: big}})
    no_errors(at)
    assert metric(at, "compressions") != "0"
    for ratio in (0.5, 0.55, 0.6):
        widget(at, "knob_trigger_ratio").set_value(ratio).run()
        no_errors(at)
