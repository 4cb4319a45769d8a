"""The app's state helpers (plain Python): knobs ↔ widget values, queued YAML and history uploads."""

from __future__ import annotations

from pathlib import Path

from knob_values import moved_knobs

from workbench.knobs import Knobs, dump_knobs
from workbench.ui import state as ui_state

FIXTURES = Path(__file__).parent / "fixtures" / "histories"


def test_widget_values_round_trip_every_knob():
    """Knobs → widget values → Knobs is the identity, with every knob moved off its default."""
    for knobs in (Knobs(), moved_knobs(), Knobs(trigger_ratio=-1.0)):
        values = ui_state.widget_values(knobs)
        assert ui_state.knobs_from_values(values) == knobs


def test_a_special_value_ticks_the_off_box_and_keeps_the_slider_in_range():
    """trigger_ratio = -1 shows as 'off' with the slider left at a legal value."""
    values = ui_state.widget_values(Knobs(trigger_ratio=-1.0))
    assert values[ui_state.off_key("trigger_ratio")] is True
    assert 0.0 <= values[ui_state.widget_key("trigger_ratio")] <= 1.0


def test_widget_values_have_the_widget_types():
    """Float knobs hold floats and int knobs ints, as sliders and number inputs require."""
    values = ui_state.widget_values(Knobs())
    assert isinstance(values["knob_trigger_ratio"], float)
    assert isinstance(values["knob_context_window_tokens"], int)
    assert isinstance(values["knob_keep_existing_briefings"], bool)


def test_queued_yaml_sets_every_widget():
    """The uploader's queue: YAML text in, every widget value out, and a success message."""
    knobs = moved_knobs()
    state: dict = {ui_state.PENDING_YAML: ("mine.yaml", dump_knobs(knobs))}
    ui_state.consume_pending(state)
    assert ui_state.knobs_from_values(state) == knobs
    assert state[ui_state.FLASH][0][0] == "success"
    assert ui_state.PENDING_YAML not in state


def test_bad_yaml_becomes_an_error_message_naming_the_line():
    """An out-of-range knob is reported with its file and line; the widgets are left alone."""
    state: dict = {ui_state.PENDING_YAML: ("mine.yaml", "version: 1\ntrigger_ratio: 3\n")}
    ui_state.consume_pending(state)
    (kind, text), = state[ui_state.FLASH]
    assert kind == "error" and "mine.yaml:2" in text and "trigger_ratio" in text
    assert ui_state.widget_key("trigger_ratio") not in state


def test_queued_history_upload_is_stored_and_selected():
    """A good upload joins the picker under 'uploaded: name' and becomes the chosen history."""
    path = FIXTURES / "openai_chat.json"
    state: dict = {ui_state.PENDING_HISTORY: (path.name, path.read_bytes())}
    ui_state.consume_pending(state)
    label = ui_state.UPLOAD_PREFIX + path.name
    assert state[ui_state.HISTORY] == label and len(state[ui_state.UPLOADED][label]) > 0


def test_corrupt_history_upload_is_an_error_message_not_an_exception():
    """Broken bytes give one error line and leave the picker as it was."""
    state: dict = {ui_state.PENDING_HISTORY: ("broken.json", b'{"messages": [{"role": '), ui_state.HISTORY: "x"}
    ui_state.consume_pending(state)
    (kind, text), = state[ui_state.FLASH]
    assert kind == "error" and "broken.json" in text
    assert state[ui_state.HISTORY] == "x"
