"""The sidebar's knobs move what a user sees (#21 items 1 and 2): the six knobs the workbench is about are sliders,
the trigger is one live control in tokens for every strategy, written to the knob the strategy reads, and under every
preset each knob shown either changes the run when moved one step or says why it does not; the knobs the run never
reads sit in one folded "not read by <strategy>" group, where moving them changes nothing.

Claude Code presets run on the shipped Claude Code log (``sample_histories/claude_code.jsonl``), Codex's on a Codex
rollout built here that compacts, the others on the tool-heavy sample. The page (AppTest) says what is shown, with
which step and which note; the engine's replay of the knobs says whether a step changes the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_log_builders import CodexLog
from test_app import REPO, app, no_errors, widget

from workbench.analysis.binding import knob_notes, trigger_note, unread_knobs
from workbench.history.model import History
from workbench.history.readers import load_history
from workbench.knobs import KNOB_SPECS, MISSION_KNOBS, Knobs
from workbench.policies.trigger import policy_trigger, with_trigger
from workbench.presets import get_preset, list_preset_names, list_presets
from workbench.replay import Run, simulate
from workbench.ui import sidebar
from workbench.ui import state as ui_state
from workbench.ui.sources import read_upload

CLAUDE_LOG = "sample_histories/claude_code.jsonl"
TRANSCRIPT = "sample_histories/tool_heavy.jsonl"


def codex_rollout() -> bytes:
    """A Codex rollout whose context crosses 0.9 of its 128,000-token raw window (121,600 logged) twice."""
    log = CodexLog(window_logged=121_600)
    total = 6_000
    for turn in range(24):
        log.turn().user(f"Step {turn}: read the next module.").reasoning().call(f"c{turn}", f"cat m{turn}.py")
        log.output(f"c{turn}", f"def f{turn}():\n" + "    return 1  # line\n" * 1_400)
        total += 9_000
        log.say(f"Read module {turn}.").tokens(total, 200, cached=total - 9_000).end_turn()
    return log.text().encode()


def opened(preset: str) -> tuple[Any, History]:
    """The app on the history for ``preset`` with that preset loaded, and the history it replays."""
    agent = get_preset_agent(preset)
    if agent == "codex":
        data = codex_rollout()
        at = app(history=None, **{ui_state.PENDING_HISTORY: ("rollout.jsonl", data)})
        history = read_upload("rollout.jsonl", data)[0]
    else:
        path = CLAUDE_LOG if agent == "claude_code" else TRANSCRIPT
        at = app(history=path)
        history = load_history(REPO / path)
    if at.session_state["preset"] != preset:
        widget(at, "preset").set_value(preset).run()
    no_errors(at)
    return at, history


def get_preset_agent(name: str) -> str | None:
    return next(p.agent for p in list_presets() if p.name == name)


def knobs_of(at: Any) -> Knobs:
    keys = [k for k in ui_state.widget_values(Knobs()) if k in at.session_state]
    return ui_state.knobs_from_values({k: at.session_state[k] for k in keys})


def changed(a: Run, b: Run) -> bool:
    """Whether two replays differ in what a user sees: the cards' metrics, the compressions, the context per check."""
    def compressions(r: Run) -> list[tuple]:
        return [(c.status, c.index_started, c.boundary, c.tokens_before, c.tokens_after, c.briefing_chars)
                for c in r.compressions]

    return (repr(a.metrics) != repr(b.metrics) or compressions(a) != compressions(b)
            or not a.timeline.equals(b.timeline))


def one_step(element: Any) -> Any:
    """A slider's or number box's value one step down (up at its bottom), a toggle flipped, the next choice."""
    kind = type(element).__name__
    if kind in ("Toggle", "Checkbox"):
        return not element.value
    if kind == "Selectbox":
        options = list(element.options)
        return options[(options.index(str(element.value)) + 1) % len(options)]
    step, value, low = element.step, element.value, element.min
    down = value - step
    moved = value + step if low is not None and down < low else down
    return int(moved) if isinstance(value, int) else moved


def unread_group(at: Any) -> Any | None:
    return next((e for e in at.sidebar.expander if "not read by" in e.label), None)


def test_the_six_knobs_are_sliders_with_ranges_for_the_history_shown():
    """Trigger (in tokens), hard cap, kept share, minimum kept, briefing target, overhead: sliders, whole-number ones
    included; the token sliders end a little above this history's peak without compaction, not at 10 million."""
    at = app(history="sample_histories/short.jsonl")
    no_errors(at)
    sliders = {s.key: s for s in at.sidebar.slider}
    assert {sidebar.TRIGGER, *(ui_state.widget_key(n) for n in MISSION_KNOBS if n != "trigger_ratio")} <= set(sliders)
    assert not any(n.key == ui_state.widget_key(name) for n in at.sidebar.number_input for name in MISSION_KNOBS)
    run = simulate(load_history(REPO / "sample_histories" / "short.jsonl"), Knobs())
    peak = run.metrics.baseline_peak_tokens
    cap = sliders[ui_state.widget_key("trigger_hard_cap_tokens")]
    assert peak < cap.max <= max(2.5 * peak, Knobs().trigger_hard_cap_tokens)
    assert sliders[sidebar.TRIGGER].max <= Knobs().context_window_tokens
    assert sliders[ui_state.widget_key("min_kept_messages")].max <= 50


@pytest.mark.parametrize(("preset", "knob"), [("stagewise", "trigger_hard_cap_tokens"),
                                              ("claude_code", "trigger_reserve_tokens"), ("codex_cli", "trigger_ratio")])
def test_the_trigger_control_writes_the_knob_the_strategy_reads(preset, knob):
    """One control in tokens for every strategy: Claude Code's window − reserve, Codex's share of the raw window,
    stagewise's min(ratio × window, cap) (its cap binds by default); the caption gives the share of the window."""
    at, _ = opened(preset)
    before = knobs_of(at)
    target = int(policy_trigger(before).tokens or 0) - 10_000
    widget(at, sidebar.TRIGGER).set_value(target).run()
    no_errors(at)
    after = knobs_of(at)
    assert policy_trigger(after).tokens == pytest.approx(target, abs=1)
    assert after == with_trigger(before, target)
    assert getattr(after, knob) != getattr(before, knob)
    share = f"{target / after.context_window_tokens:.1%} of the {after.context_window_tokens:,}-token window"
    assert any(share in c.value and f"`{knob}`" in c.value for c in at.sidebar.caption)


def test_a_preset_whose_proactive_compaction_is_off_says_so_under_the_trigger():
    """Claude Code 2.1.153 never compacts at its threshold: the control still shows 167,000 tokens (a move turns
    it on), and a note under it says the trigger is off, in ``trigger_words``' words."""
    at, _ = opened("claude_code_2_1_153")
    captions = [c.value for c in at.sidebar.caption]
    assert any("trigger: off (proactive compaction is off" in c for c in captions), captions
    at, _ = opened("claude_code")
    assert not any("trigger: off" in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("preset", list_preset_names())
def test_every_knob_shown_moves_the_run_or_says_why(preset):
    """The rule, under every preset: a mission knob shown outside the folded group changes the replay when moved one
    step, or its note says why not; every knob in the "not read by" group says why and changes nothing."""
    at, history = opened(preset)
    knobs = knobs_of(at)
    run = simulate(history, knobs)
    notes = {name: note.text for name, note in knob_notes(run).items()}
    unread = unread_knobs(run)
    captions = [c.value for c in at.sidebar.caption]
    sliders = {s.key: s for s in at.sidebar.slider}

    def says(text: str | None) -> bool:
        return text is not None and any(text in c for c in captions)

    trigger = sliders[sidebar.TRIGGER]
    if not says(trigger_note(run)):
        moved = with_trigger(knobs, one_step(trigger))
        assert changed(run, simulate(history, moved)), f"{preset}: the trigger control, one step, changes nothing"
    for name in MISSION_KNOBS:
        if name == "trigger_ratio":
            continue
        key = ui_state.widget_key(name)
        if name in unread:
            continue
        assert key in sliders, f"{preset}: {name} is neither shown nor in the folded group"
        if says(notes.get(name)):
            continue
        moved = knobs.replace(**{name: one_step(sliders[key])})
        assert changed(run, simulate(history, moved)), f"{preset}: {name} shown, one step changes nothing, no note"
    if not unread:
        return
    at.session_state[sidebar.UNREAD_GROUP] = True
    at.run()
    captions = [c.value for c in at.sidebar.caption]
    group = unread_group(at)
    assert group is not None and group.label.endswith(f"not read by {knobs.strategy}")
    inside = [w for kind in ("slider", "number_input", "toggle", "selectbox") for w in getattr(group, kind)]
    assert {w.key for w in inside if w.key.startswith(ui_state.KNOB_PREFIX)} >= {
        ui_state.widget_key(n) for n in unread if KNOB_SPECS[n].unit != "regex" and n != "manual_compact_checks"}
    for name, why in unread.items():
        assert says(f"not read: {why}"), f"{preset}: {name} in the group without its reason"
    for w in inside:
        name = w.key.removeprefix(ui_state.KNOB_PREFIX)
        if name not in unread:
            continue
        try:
            moved = knobs.replace(**{name: one_step(w)})
        except ValueError:
            continue
        assert not changed(run, simulate(history, moved)), f"{preset}: {name} is 'not read' but one step changes the run"


def test_a_codex_rollout_compacts_under_its_preset():
    """The Codex case above is a real test: its rollout crosses Codex's trigger."""
    history = read_upload("rollout.jsonl", codex_rollout())[0]
    assert history.log is not None and history.log.agent == "codex"
    assert simulate(history, get_preset("codex_cli").replace(context_window_tokens=128_000)).metrics.compressions


def test_shipped_claude_code_log_is_an_agent_log():
    assert load_history(Path(REPO / CLAUDE_LOG)).log is not None
