"""The sidebar: which history, which preset, every knob (built from KNOB_SPECS), which briefer.

Knob widgets are generated from ``KNOB_SPECS``: the six mission knobs are sliders over the range where they matter
for the history shown (the trigger as one control in tokens, written to the knob the strategy reads:
``policies.trigger``), other bounded floats are sliders, whole numbers are number inputs, choices are select boxes,
booleans are toggles; a knob with a special value outside its range (``trigger_ratio = -1``) gets an "off" checkbox.
The knobs the run does not read (``analysis.binding.unread_knobs``) fold into one "not read by <strategy>" group.
New knobs appear without changes here.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from workbench.display import labels
from workbench.display.untrusted import literal
from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import KNOB_SPECS, MISSION_KNOBS, KnobGroup, Knobs, KnobSpec
from workbench.ui import state as ui_state

if TYPE_CHECKING:
    from workbench.replay.results import Run

BRIEFERS = {"simulated": "simulated (size model, instant)", "extractive": "extractive (offline text)"}


# -- histories --------------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=32)
def _load_file(path: str, mtime: float) -> History:
    from workbench.ui.sources import read_file

    return read_file(Path(path))


@st.cache_resource(show_spinner=False)
def _generated() -> History | None:
    from workbench.ui.sources import generated_history

    return generated_history()


def _history_files() -> dict[str, Path]:
    from workbench.history.samples.datasets import sample_dirs
    from workbench.ui.sources import list_history_files, user_dirs

    files = list_history_files(user_dirs(sys.argv[1:], os.environ) + sample_dirs())  # the user's files first
    return {f.label: f.path for f in files}


@dataclass(frozen=True)
class HistoryChoice:
    """The history picker before it is drawn: its options, the chosen label, the history read (None when there is
    none or it could not be read) and the path a CLI command names. The app reads it first and draws the picker
    after the context chart (``draw_sidebar``)."""

    options: tuple[str, ...]
    label: str | None
    history: History | None
    path: str
    error: str | None = None


def choose_history() -> HistoryChoice:
    """The chosen history, read from session state (the picker's value) without drawing anything."""
    from workbench.history.samples.datasets import sample_dirs
    from workbench.ui.sources import HistoryFile, default_history_file

    files = _history_files()
    uploaded: dict[str, History] = st.session_state.get(ui_state.UPLOADED, {})
    generated = _generated() if not files else None
    options = (*files, *uploaded, *(["generated sample"] if generated is not None else []))
    if not options:
        return HistoryChoice(options=(), label=None, history=None, path="")
    if st.session_state.get(ui_state.HISTORY) not in options:
        default = default_history_file([HistoryFile(label, path) for label, path in files.items()], sample_dirs())
        st.session_state[ui_state.HISTORY] = default.label if default else options[0]
    label = st.session_state[ui_state.HISTORY]
    if label in uploaded:
        return HistoryChoice(options=options, label=label, history=uploaded[label],
                             path=label.removeprefix(ui_state.UPLOAD_PREFIX))
    if label == "generated sample" and generated is not None:
        return HistoryChoice(options=options, label=label, history=generated, path="HISTORY.jsonl")
    path = files[label]
    try:
        history = _load_file(str(path), path.stat().st_mtime)
    except (HistoryError, OSError) as exc:
        return HistoryChoice(options=options, label=label, history=None, path=str(path),
                             error=f"Could not read this history: {literal(exc)}")
    return HistoryChoice(options=options, label=label, history=history, path=str(path))


def draw_history_picker(choice: HistoryChoice) -> None:
    """The picker, the upload widgets and what reading the chosen history said."""
    st.subheader("History")
    if not choice.options:
        st.info("No sample history found: upload one below.")
        _upload_widget()
        return
    st.selectbox(
        "history", list(choice.options), key=ui_state.HISTORY,
        help="Shipped samples, folders named with `-- --histories DIR` or $WORKBENCH_HISTORIES, and uploads.",
    )
    _upload_widget()
    if choice.error is not None:
        st.error(choice.error)
    elif choice.history is not None:
        show_load_warnings(choice.history)


def _file_loader(path: Path) -> Callable[[], History]:
    return lambda: _load_file(str(path), path.stat().st_mtime)  # stat at load time: a rewritten file reloads


def _given(history: History) -> Callable[[], History]:
    return lambda: history


def show_load_warnings(history: History) -> None:
    """The reader's warnings (cut-off last line, skipped records), each naming file and line, folded away."""
    if not history.warnings:
        return
    with st.expander(f"⚠ {len(history.warnings)} load warning(s)"):
        for w in history.warnings:  # they quote the file: shown as written
            st.caption(literal(w))


def history_loaders() -> dict[str, Callable[[], History]]:
    """Picker label → a function that loads that history (for the sweep's multi-history choice)."""
    files = _history_files()
    out: dict[str, Callable[[], History]] = {label: _file_loader(path) for label, path in files.items()}
    for label, h in st.session_state.get(ui_state.UPLOADED, {}).items():
        out[label] = _given(h)
    if not files:
        generated = _generated()
        if generated is not None:
            out["generated sample"] = lambda: generated
    return out


def _queue_history_upload(key: str = "history_upload") -> None:
    """The uploader's callback: queue every file's bytes; ``consume_pending`` reads them before the next run."""
    upload = st.session_state.get(key)
    files = upload if isinstance(upload, list) else [upload] if upload is not None else []
    if files:
        queued = [(f.name, f.getvalue()) for f in files]
        st.session_state[ui_state.PENDING_HISTORY] = queued[0] if len(queued) == 1 else queued


def _upload_widget() -> None:
    st.file_uploader(
        "upload histories", key="history_upload", on_change=_queue_history_upload, accept_multiple_files=True,
        help="One file or several. Any supported format: canonical / OpenAI / Anthropic / Claude Code / Codex "
        "JSON(L), stagewise JSON or SQLite store. The format is detected; a file that cannot be read is named "
        "and skipped.",
    )
    with st.expander("or a whole folder"):
        st.file_uploader(
            "folder", key="history_folder", on_change=_queue_history_upload, args=("history_folder",),
            accept_multiple_files="directory", label_visibility="collapsed",
            help="Every .jsonl, .json, .ndjson, .sqlite or .db file in the folder joins the picker and the Sweep "
            "tab; other files are skipped.",
        )


# -- knobs ------------------------------------------------------------------------------------------


def _option_sources() -> dict[str, Callable[[], list[str]]]:
    from workbench.counting.prices import list_models
    from workbench.policies import list_policy_names

    return {"strategy": list_policy_names, "model": list_models, "briefer_model": list_models}


def _nice_step(span: float) -> float:
    return 10 ** math.floor(math.log10(span / 100)) if span > 0 else 0.01


def _int_step(default: int) -> int:
    return 10 ** max(0, int(math.floor(math.log10(default))) - 1) if default >= 10 else 1


def _label(name: str, spec: KnobSpec | None) -> str:
    """The knob's title in words; the identifier is the first thing its help says."""
    return labels.knob_title(name)


def _on_model_change() -> None:
    """A new agent model fills the window from litellm's registry (when it states one)."""
    from workbench.counting.prices import get_prices

    p = get_prices(st.session_state[ui_state.widget_key("model")])
    if p.max_input_tokens:
        key = ui_state.widget_key("context_window_tokens")
        spec = KNOB_SPECS["context_window_tokens"]
        st.session_state[key] = int(min(max(p.max_input_tokens, spec.low or 0), spec.high or p.max_input_tokens))


def knob_widget(name: str, field_type: str, default: Any) -> None:
    """One knob's widget, chosen from its type and spec; its value lives in session state."""
    spec = KNOB_SPECS.get(name)
    key = ui_state.widget_key(name)
    label = _label(name, spec)
    help_text = labels.knob_help(name)
    sources = _option_sources()
    if field_type == "bool":
        st.toggle(label, key=key, help=help_text)
    elif spec is not None and spec.choices:
        st.selectbox(label, list(spec.choices), key=key, help=help_text)
    elif field_type == "str":
        if name in sources:
            options = sources[name]()
            current = st.session_state.get(key, default)
            if current not in options:
                options = [current, *options]
            on_change = _on_model_change if name == "model" else None
            st.selectbox(label, options, key=key, help=help_text, on_change=on_change)
        else:
            st.text_input(label, key=key, help=help_text)
    elif field_type == "float" and spec is not None and spec.low is not None and spec.high is not None:
        off = bool(spec.allow) and st.session_state.get(ui_state.off_key(name), False)
        st.slider(label, float(spec.low), float(spec.high), step=_nice_step(spec.high - spec.low), key=key,
                  help=help_text, disabled=off)
    elif field_type == "float":
        st.number_input(label, key=key, help=help_text, format="%g")
    else:
        kwargs: dict[str, Any] = {}
        if spec is not None and spec.low is not None:
            kwargs["min_value"] = int(spec.low)
        if spec is not None and spec.high is not None:
            kwargs["max_value"] = int(spec.high)
        off = bool(spec and spec.allow) and st.session_state.get(ui_state.off_key(name), False)
        st.number_input(label, step=_int_step(int(default)), key=key, help=help_text, disabled=off, **kwargs)
    if spec is not None and spec.allow:
        special = ", ".join(f"{a:g}" for a in spec.allow)
        st.checkbox("off", key=ui_state.off_key(name), help=f"`{name}` = {special}")
    if name == "model":
        _price_caption(st.session_state.get(key, default))


def _price_caption(model: str) -> None:
    from workbench.counting.prices import get_prices

    p = get_prices(model)
    if not p.known:
        st.caption(f"{literal(model)}: not in litellm's registry, so dollars are 0.")
        return
    window = f", window {p.max_input_tokens:,} tokens" if p.max_input_tokens else ""
    st.caption(f"${p.input_per_token * 1e6:,.2f} in / ${p.output_per_token * 1e6:,.2f} out per M tokens{window}")


def _apply_preset() -> None:
    from workbench.presets import get_preset

    name = st.session_state.get("preset")
    if name:
        ui_state.apply_knobs(st.session_state, get_preset(name))
        ui_state.flash(st.session_state, "success", f"Loaded preset {name}.")


TRIGGER = "trigger_tokens"  # the trigger control's widget key: not a knob, it writes the knob the strategy reads
UNREAD_GROUP = "knob_group_unread"  # the folded group of the knobs this run does not read


@dataclass(frozen=True)
class KnobPanel:
    """The sidebar's knobs in two steps: the knobs from session state before the run (``knob_panel``), their
    widgets after it (``draw_mission``, ``draw_groups``), whose ranges and notes come from the run (the history's
    peak, what binds, which knobs the strategy reads)."""

    knobs: Knobs | None
    presets: tuple[Any, ...]  # the presets offered (workbench.presets.Preset)
    error: str | None = None  # why session state holds no valid knobs


def knob_panel() -> KnobPanel:
    """The knobs as session state holds them (every knob keeps a value there, drawn or not), and the presets; the
    widgets are drawn once the run is known."""
    from workbench.presets import list_presets

    for key, value in ui_state.widget_values(Knobs()).items():
        st.session_state.setdefault(key, value)
        # Closed groups draw no widgets (lazy, like the tabs), and Streamlit forgets an undrawn widget's value
        # at the end of a run: re-asserting it makes it a value of the session, kept while the group is shut.
        st.session_state[key] = st.session_state[key]
    presets = tuple(list_presets())
    names = [p.name for p in presets]
    st.session_state.setdefault("preset", "stagewise" if "stagewise" in names else (names[0] if names else None))
    try:
        return KnobPanel(knobs=ui_state.knobs_from_values(st.session_state), presets=presets)
    except ValueError as exc:
        return KnobPanel(knobs=None, presets=presets, error=str(exc))


# The knob groups open on a first visit. Not the models group: its two pickers list litellm's ~3,500 chat models, and
# rendering them took ~0.5 s of the browser's main thread at every full run (benchmarks/README.md, seventh round);
# the cards' pricing line and the trigger's caption already name the model and the window.
OPEN_GROUPS = (KnobGroup.POLICY,)


def draw_presets(panel: KnobPanel) -> None:
    """The "Knobs" heading and the preset picker (choosing one sets every knob: a full rerun)."""
    presets = panel.presets
    st.subheader("Knobs")
    st.selectbox(
        "preset", [p.name for p in presets], key="preset", on_change=_apply_preset,
        format_func=lambda n: next((p.title for p in presets if p.name == n), n),
        help="Choosing a preset sets every knob from it; then adjust from there.",
    )


def draw_mission(panel: KnobPanel, run: Run | None) -> None:
    """What changed from the preset, the trigger control and the mission sliders (ranges from ``run``), each with
    why it has no effect right now (``analysis.binding.knob_notes``): what a knob move changes in the sidebar."""
    from workbench.analysis.binding import trigger_note

    view = _KnobView.of(panel, run)
    if panel.knobs is not None:
        _preset_caption(panel.knobs)
        _trigger_control(panel.knobs, run, trigger_note(run) if run is not None else None)
    for name in MISSION_KNOBS:
        if name != "trigger_ratio" and name not in view.unread:
            view.draw(name)


def draw_checks(panel: KnobPanel) -> None:
    """Why the knobs are invalid, or what they warn about."""
    if panel.error is not None:
        st.error(panel.error)
    elif panel.knobs is not None:
        for warning in panel.knobs.warnings():
            st.warning(warning)


def draw_groups(panel: KnobPanel, run: Run | None) -> None:
    """Every other knob, one expander per group (only an open one draws its widgets), and the knobs ``run`` never
    reads folded into one "not read by <strategy>" group, each saying why."""
    view = _KnobView.of(panel, run)
    for group, names in view.groups().items():
        box = st.expander(group.heading, expanded=group in OPEN_GROUPS, key=f"knob_group_{group}", on_change="rerun")
        with box:
            if box.open is not False:  # only an open group draws its widgets: a faster page
                for name in names:
                    view.draw(name)
    if view.unread:
        strategy = view.knobs.strategy
        box = st.expander(f"{counted(len(view.unread), 'knob')} not read by {strategy}", expanded=False,
                          key=UNREAD_GROUP, on_change="rerun")
        with box:
            if box.open is not False:
                st.caption(f"Moving these changes nothing in this run ({strategy} on this history); each says why.")
                for name in (n for n in view.fields if n in view.unread):
                    view.draw(name, why=view.unread[name])


def groups_shown(panel: KnobPanel, run: Run | None) -> tuple[Any, ...]:
    """What ``draw_groups`` shows for these knobs and this run: which knobs are unread and why, and in every open
    group its widgets' values and notes. The app draws the groups in full runs only; a knob move reruns the rest
    (a fragment) and asks for a full run when this changed (workbench/app.py)."""
    view = _KnobView.of(panel, run)
    state = st.session_state

    def shown(names: list[str]) -> tuple[Any, ...]:
        keys = [k for n in names for k in (ui_state.widget_key(n), ui_state.off_key(n))]
        return (tuple(state.get(k) for k in keys), tuple(view.notes.get(n) for n in names))

    out: list[Any] = [tuple(view.unread.items()), view.knobs.strategy]
    for group, names in view.groups().items():
        if _opened(f"knob_group_{group}", group in OPEN_GROUPS):
            out.append((group, shown(names)))
    if view.unread and _opened(UNREAD_GROUP, False):
        out.append(shown(list(view.unread)))
    return tuple(out)


def _opened(key: str, default: bool) -> bool:
    value = st.session_state.get(key)
    return default if value is None else bool(value)


@dataclass(frozen=True)
class _KnobView:
    """What the knob widgets are drawn from: the knobs, the run's unread knobs and notes, the fields' types."""

    knobs: Knobs
    run: Run | None
    unread: dict[str, str]
    notes: dict[str, str]
    fields: dict[str, Any]

    @classmethod
    def of(cls, panel: KnobPanel, run: Run | None) -> _KnobView:
        from workbench.analysis.binding import knob_notes, unread_knobs

        return cls(knobs=panel.knobs or (run.knobs if run is not None else Knobs()), run=run,
                   unread=unread_knobs(run) if run is not None else {},
                   notes={n: note.text for n, note in knob_notes(run).items()} if run is not None else {},
                   fields={f.name: f for f in dataclasses.fields(Knobs)})

    def groups(self) -> dict[KnobGroup, list[str]]:
        """Group → its knobs that are read and not mission sliders (the trigger ratio sits in its group)."""
        out: dict[KnobGroup, list[str]] = {}
        for name in self.fields:
            if (name not in MISSION_KNOBS or name == "trigger_ratio") and name not in self.unread:
                out.setdefault(KNOB_SPECS[name].group, []).append(name)
        return out

    def draw(self, name: str, *, why: str | None = None) -> None:
        ftype = self.fields[name].type
        kind = ftype if isinstance(ftype, str) else ftype.__name__
        if name in MISSION_KNOBS and name != "trigger_ratio":  # the ratio is written by the trigger control
            _mission_slider(name, kind, self.knobs, self.run)
        else:
            knob_widget(name, kind, getattr(Knobs(), name))
        if why is not None:
            st.caption(f"not read: {why}")
        elif name in self.notes:
            st.caption(f":orange[{self.notes[name]}]")


def _nice_up(x: float) -> float:
    """``x`` rounded up to 1, 2 or 5 times a power of ten (a slider's end)."""
    if x <= 0:
        return 1.0
    p = 10 ** math.floor(math.log10(x))
    return next(m * p for m in (1, 2, 5, 10) if m * p >= x)


def mission_range(name: str, knobs: Knobs, peak: float | None, messages: int) -> tuple[float, float]:
    """The range of a mission slider where it matters for the history shown: token knobs up to a little above the
    context's peak without compaction (``peak``, None before a run) and never past the window, the kept share
    up to the peak's share of the window, counts and chars around their values; always holding the current value and
    inside the knob's spec."""
    spec = KNOB_SPECS[name]
    value = float(getattr(knobs, name))
    window = float(knobs.context_window_tokens)
    reach = min(window, peak * 1.1) if peak else window
    if name == "trigger_hard_cap_tokens":
        lo, hi = 0.0, _nice_up(reach)
    elif name == "kept_budget_ratio":
        lo, hi = 0.0, min(1.0, math.ceil(reach / window * 20) / 20)
    elif name == "min_kept_messages":
        lo, hi = 0.0, float(max(10, min(messages, 50)))
    elif name == "target_briefing_chars":
        lo, hi = float(spec.low or 0), _nice_up(max(2 * value, 10_000))
    else:  # overhead_chars_per_message
        lo, hi = 0.0, _nice_up(max(2 * value, 1_000))
    if spec.low is not None:
        lo = max(lo, float(spec.low))
    hi = max(hi, value)
    if spec.high is not None:
        hi = min(hi, float(spec.high))
    return lo, hi


def _mission_slider(name: str, kind: str, knobs: Knobs, run: Run | None) -> None:
    """One of the six knobs the workbench is about, as a slider over ``mission_range``."""
    lo, hi = mission_range(name, knobs, run.metrics.baseline_peak_tokens if run is not None else None,
                           len(run.timeline) if run is not None else 0)
    key = ui_state.widget_key(name)
    label, help_text = _label(name, KNOB_SPECS.get(name)), labels.knob_help(name)
    if kind == "float":
        st.slider(label, lo, hi, step=_nice_step(hi - lo), key=key, help=help_text)
    else:
        step = max(1, int(_nice_step(hi - lo)))
        st.slider(label, int(lo), int(hi), step=step, key=key, help=help_text, format="localized")


def _set_trigger() -> None:
    """The trigger control's callback: its tokens go into the knob the strategy's trigger reads."""
    from workbench.policies.trigger import with_trigger

    try:
        knobs = ui_state.knobs_from_values(st.session_state)
    except ValueError:
        return
    ui_state.apply_knobs(st.session_state, with_trigger(knobs, st.session_state[TRIGGER]))


def _trigger_control(knobs: Knobs, run: Run | None, note: str | None) -> None:
    """ONE trigger control for every strategy, in tokens, with its share of the window and the knob it writes
    (Claude Code's window − reserve, Codex's share of the raw window, stagewise's min(ratio × window, cap))."""
    from workbench.policies.trigger import policy_trigger, trigger_knob, trigger_words

    limit = policy_trigger(knobs)
    window = knobs.context_window_tokens
    peak = run.metrics.baseline_peak_tokens if run is not None else None
    hi = int(min(window - 1, _nice_up(min(window, peak * 1.1)) if peak else window - 1))
    value = int(round(limit.tokens)) if limit.tokens is not None else window - 1
    hi = max(hi, min(value, window - 1))
    step = max(1, int(_nice_step(hi)))
    st.session_state[TRIGGER] = min(max(value, 1), hi)  # what the knobs say, every run (the knobs are the truth)
    st.slider("Trigger threshold (tokens)", 1, hi, step=step, key=TRIGGER, on_change=_set_trigger, format="localized",
              help="Compact when the context reaches this many tokens. One control for every strategy: it is "
              "written to the knob the strategy's trigger reads (the term that binds: window − reserve for Claude "
              "Code, a share of the window for Codex, min(ratio × window, hard cap) for stagewise).")
    knob = trigger_knob(knobs)
    bind = limit.binding
    what = f"set by {bind.label}" if bind is not None else "trigger off: a move turns the ratio on"
    st.caption(f"{value:,} tokens = {value / window:.1%} of the {window:,}-token window · {what} · writes `{knob}`")
    words = trigger_words(knobs)
    if words.startswith("trigger: off"):  # e.g. Claude Code 2.1.153: the threshold is shown but never fires
        st.caption(f":orange[{words.split(';')[0]}]")
    if note:
        st.caption(f":orange[{note}]")


def _preset_caption(knobs: Knobs) -> None:
    from workbench.knobs.command import changed_knobs
    from workbench.presets import get_preset

    name = st.session_state.get("preset")
    if not name:
        return
    changed = changed_knobs(knobs, get_preset(name))
    if changed:
        st.caption(f"Changed from preset {name}: {', '.join(changed)}")


def briefer_choice() -> str:
    """Which offline briefer writes the briefings of the main run (the radio's value; it is drawn by ``draw_sidebar``)."""
    st.session_state.setdefault("briefer", "simulated")
    return str(st.session_state["briefer"])


def _draw_briefer() -> None:
    st.subheader("Briefer")
    st.radio("briefer", list(BRIEFERS), format_func=BRIEFERS.get, key="briefer", label_visibility="collapsed",
                     help="Live LLM briefings run in the Live runs tab, behind an explicit button.")


def draw_top(choice: HistoryChoice, panel: KnobPanel) -> None:
    """The sidebar above the knobs: title, history picker and uploads, briefer, preset picker (full runs only)."""
    st.title("Compaction Workbench")
    draw_history_picker(choice)
    _draw_briefer()
    draw_presets(panel)


def draw_sidebar(choice: HistoryChoice, panel: KnobPanel, run: Run | None) -> None:
    """The whole sidebar, top to bottom, in one go (a page with no run: no history, or knobs that are not valid)."""
    with st.sidebar:
        draw_top(choice, panel)
        draw_mission(panel, run)
        draw_groups(panel, run)
        draw_checks(panel)


def flashes() -> None:
    """Show and clear the one-off messages queued by callbacks (loads, upload errors), above the results."""
    for kind, text in st.session_state.pop(ui_state.FLASH, []):
        getattr(st, kind if kind in ("success", "error", "info", "warning") else "info")(text)
