"""Session state of the app as plain values: widget keys, knobs to widgets and back, queued uploads.

No streamlit import: ``state`` is any mutable mapping (``st.session_state`` in the app, a dict in
tests). Uploads never touch widgets directly; the uploader's callback queues the bytes under
``PENDING_YAML`` / ``PENDING_HISTORY`` and ``consume_pending`` applies them at the top of the next run,
before any widget exists. Tests use the same door: put text or bytes under those keys and rerun.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from workbench.display.untrusted import literal, literals
from workbench.history.errors import HistoryError
from workbench.history.words import counted
from workbench.knobs import KNOB_SPECS, Knobs, knobs_from_dict, load_knobs, read_knobs_yaml
from workbench.ui.sources import SUFFIXES, read_upload

# What ``state`` is: st.session_state (a SessionStateProxy, typed MutableMapping[str | int, Any]) or a dict.
# Mapping types are invariant in their key, so neither MutableMapping[str, Any] nor [str | int, Any] would
# accept both; the keys used here are always str.
SessionState = MutableMapping[Any, Any]
ReadOnlyState = Mapping[Any, Any]

KNOB_PREFIX = "knob_"
PENDING_YAML = "pending_yaml"  # (source name, YAML text[, "merge" | "replace"]); merge is the default
YAML_MODE = "yaml_mode"  # the YAML tab's choice: a partial YAML changes only its knobs, or replaces all
PENDING_HISTORY = "pending_history"  # (file name, bytes), or a list of them (several files, a folder)
UPLOADED = "uploaded_histories"  # label -> History
HISTORY = "history"  # the history picker's widget key (a label)
FLASH = "flash"  # [(kind, text)] shown once: kind is success | error | info
UPLOAD_PREFIX = "uploaded: "
SWEEP_HISTORIES = "sweep_histories"  # the Sweep tab's multiselect of histories
# Widgets inside tabs: Streamlit forgets a widget's value while it is not drawn (a closed lazy tab),
# so the app re-asserts these at the top of every run. The API key is deliberately not among them.
PERSISTENT = (
    "live_models", "live_api_base", "live_timeout", "live_cache",
    "sweep_x", "sweep_y", "sweep_x_from", "sweep_x_to", "sweep_x_steps", "sweep_y_from", "sweep_y_to",
    "sweep_y_steps", "sweep_histories", "sweep_metric", "sweep_cell", "inspect_pick", "inspect_run", "yaml_paste",
    "tune_objective", "tune_max_overflows", "tune_min_retention", "tune_max_compressions", "tune_space", "tune_points",
    "tune_rounds", "sweep_over", "tune_floor_from_base", "tune_briefer", "yaml_mode",
)


def widget_key(name: str) -> str:
    """The widget key of a knob."""
    return KNOB_PREFIX + name


def off_key(name: str) -> str:
    """The key of the checkbox that sets a knob to its special value (e.g. trigger_ratio = -1)."""
    return KNOB_PREFIX + name + "__off"


def _type_name(name: str) -> str:
    return _type_names()[name]


@functools.cache
def _type_names() -> dict[str, str]:
    """Knob name → its field's type name, read once: ``widget_values`` asks for every knob on every knob move."""
    return {f.name: f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "") for f in dataclasses.fields(Knobs)}


def _coerce(name: str, value: Any) -> Any:
    """The Python type the knob's widget holds (float sliders refuse ints and the other way round)."""
    kind = _type_name(name)
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    return value


def widget_values(knobs: Knobs) -> dict[str, Any]:
    """Every knob widget's value for ``knobs`` (keys from ``widget_key`` and ``off_key``)."""
    default = Knobs()
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Knobs):
        value = getattr(knobs, f.name)
        spec = KNOB_SPECS.get(f.name)
        if spec is not None and spec.allow:
            off = value in spec.allow
            out[off_key(f.name)] = off
            if off:  # the slider keeps a value in range while the checkbox says "off"
                fallback = getattr(default, f.name)
                value = fallback if fallback not in spec.allow else spec.low
        out[widget_key(f.name)] = _coerce(f.name, value)
    return out


def knobs_from_values(values: ReadOnlyState) -> Knobs:
    """Knobs from widget values; knobs without a widget value keep their defaults. Raises ValueError."""
    data: dict[str, Any] = {}
    for f in dataclasses.fields(Knobs):
        key = widget_key(f.name)
        if key not in values:
            continue
        value = values[key]
        spec = KNOB_SPECS.get(f.name)
        if spec is not None and spec.allow and values.get(off_key(f.name)):
            value = spec.allow[0]
        data[f.name] = value
    return knobs_from_dict(data, source="widgets")


def apply_knobs(state: SessionState, knobs: Knobs) -> None:
    """Set every knob widget to show ``knobs``."""
    for key, value in widget_values(knobs).items():
        state[key] = value


def apply_yaml(state: SessionState, text: str, *, source: str = "uploaded YAML",
               mode: str = "merge") -> Knobs:
    """Parse knob YAML and set the widgets from it; raises ValueError naming the line.

    ``merge``: only the knobs the YAML names change, the others keep what the widgets show; ``replace``:
    the knobs it does not name go back to their defaults (a full ``dump_knobs`` text is the same either way).
    """
    base = None
    if mode == "merge":
        try:
            base = knobs_from_values(state)
        except ValueError:  # the widgets hold something invalid: start from the defaults
            base = None
    knobs = load_knobs(text, source=source, base=base)
    apply_knobs(state, knobs)
    return knobs


def flash(state: SessionState, kind: str, text: str) -> None:
    state.setdefault(FLASH, []).append((kind, text))


def add_uploaded_history(state: SessionState, name: str, data: bytes, *, select: bool = True
                         ) -> list[str]:
    """Read an uploaded history, remember it under a picker label and (``select``) choose it; returns the labels."""
    histories = read_upload(name, data)
    store = state.setdefault(UPLOADED, {})
    labels = []
    for h in histories:
        label = UPLOAD_PREFIX + name
        if len(histories) > 1:
            label += f" — {h.meta.get('title') or h.id}"
        store[label] = h
        labels.append(label)
    if select:
        state[HISTORY] = labels[0]
    return labels


def history_files(files: list[tuple[str, bytes]]) -> tuple[list[tuple[str, bytes]], list[str]]:
    """(history files, names skipped): a folder upload brings READMEs and images too; only history formats stay."""
    keep = [(name, data) for name, data in files if Path(name).suffix.lower() in SUFFIXES]
    skipped = [name for name, _ in files if Path(name).suffix.lower() not in SUFFIXES]
    return keep, skipped


def pending(state: ReadOnlyState) -> bool:
    """Whether a YAML or history upload waits for ``consume_pending``."""
    return PENDING_YAML in state or PENDING_HISTORY in state


def consume_pending(state: SessionState) -> None:
    """Apply a queued YAML or history upload; problems become an error message, never an exception."""
    pending = state.pop(PENDING_YAML, None)
    if pending is not None:
        source, text, mode = (tuple(pending) + ("merge",))[:3] if isinstance(pending, tuple) else (
            "uploaded YAML", pending, "merge")
        try:
            named = read_knobs_yaml(text, source=source)
            apply_yaml(state, text, source=source, mode=mode)
        except ValueError as exc:
            flash(state, "error", literal(exc))
        else:
            every = len(named) == len(dataclasses.fields(Knobs))
            where = literal(source)  # an upload's name: shown as written
            if every:
                flash(state, "success", f"Loaded every knob from {where}.")
            elif mode == "replace":
                flash(state, "success", f"Loaded {len(named)} knob(s) from {where} ({', '.join(named)}); every "
                      "other knob went back to its default.")
            else:
                flash(state, "success", f"Changed only the {len(named)} knob(s) {where} names "
                      f"({', '.join(named)}); the others kept their values. Choose \"replace all\" to reset them.")
    pending = state.pop(PENDING_HISTORY, None)
    if pending is not None:
        _consume_histories(state, [pending] if isinstance(pending, tuple) else list(pending))


def _consume_histories(state: SessionState, files: list[tuple[str, bytes]]) -> None:
    """Read every queued file; a bad one is reported by name and skipped, the others load (the first is chosen)."""
    many = len(files) > 1
    if many:
        files, skipped = history_files(files)
        if skipped:
            flash(state, "info", f"Skipped {len(skipped)} file(s) that are not histories: {literals(skipped[:5])}"
                  + (" …" if len(skipped) > 5 else ""))
    loaded: list[tuple[str, list[str]]] = []
    for name, data in files:
        try:
            labels = add_uploaded_history(state, name, data, select=not loaded)
        except HistoryError as exc:
            flash(state, "error", f"Could not read this history: {literal(exc)}")
        except Exception as exc:  # noqa: BLE001 - a reader bug must still reach the user as one line
            flash(state, "error", f"Could not read this history: {literal(f'{name}: {type(exc).__name__}: {exc}')}")
        else:
            loaded.append((name, labels))
    if not loaded:
        return
    if len(loaded) == 1:
        name, labels = loaded[0]
        chats = f" ({len(labels)} chats)" if len(labels) > 1 else ""
        flash(state, "success", f"Loaded {literal(name)}{chats}.")
        return
    every = [label for _, labels in loaded for label in labels]
    state[SWEEP_HISTORIES] = every  # the Sweep tab compares them all at once
    names = literals(name for name, _ in loaded[:4]) + (" …" if len(loaded) > 4 else "")
    flash(state, "success", f"Loaded {counted(len(loaded), 'history', 'histories')} ({names}); the first is shown, and the Sweep tab "
          "runs over all of them.")
