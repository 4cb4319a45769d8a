"""Calibrate an agent's counting knobs to its own logs: hidden prefix, token ratio, restore after compaction.

What a transcript lacks, the agent's log measures. At every check of a window that follows the log (see
``workbench.analysis.real_logs.reality``), the agent's own measure of its context is known from its billed usage (the
usage counter); the counted tokens of the same messages are known from the estimate. Fitting

    measure = hidden_prefix + token_ratio x counted (+ restore, in a window that starts after a compaction)

(counted includes what the agent re-attaches after a compaction, worked out by ``counting.restore``)

by least squares over every check gives the knobs a counterfactual replay needs to fire where the agent
fires when no usage is at hand. Image tokens are measured where a call's bill brackets a message with an
image. The trigger (opt-in) is the tightest threshold every logged automatic compaction allows: above the
measure at every earlier check of its window, at most the measure where it fired. The leave-one-session-out
error fits on all sessions but one and predicts that one's compactions without usage. Pure: histories in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.analysis.real_logs.estimate_fit import NO_STRUCTURE, fit_growth, growth_rows
from workbench.analysis.real_logs.reality import SessionReality, _segment, _windows, follow_log, reality_summary
from workbench.counting.checks import check_indices
from workbench.counting.counters import trigger_tokens
from workbench.counting.images import image_tokens
from workbench.counting.restore import restore_args, restored_tokens
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs, clamp_knob
from workbench.policies.trigger import with_trigger

# A session that starts mid-session reads context its transcript lacks: it would inflate the fitted prefix.
MID_SESSION_NOTE = "first window left out of the fit: the log starts mid-session"


@dataclass(frozen=True, kw_only=True)
class Fit:
    """Fitted counting knobs for one agent and how well they explain its logs."""

    agent: str
    sessions: tuple[str, ...]
    hidden_prefix_tokens: int
    token_ratio: float
    compaction_restore_tokens: int
    checks: int
    residual_tokens_median: float  # |measure - fitted| over every check used
    residual_tokens_p90: float
    image_tokens_measured: tuple[tuple[str, int, int], ...] = ()  # (file, measured, by the rule)
    # per preset: (exclusive low, inclusive high) of the trigger threshold, as a share of the window
    trigger_intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # What the messages' structure adds to the estimate (``counting.structure``; ``estimate_fit.STRUCTURE_KNOBS``),
    # fitted on the billed growth between calls (``prefix_from="growth"``); empty: the counted text alone.
    structure: dict[str, float] = field(default_factory=dict)

    def knobs_for(self, knobs: Knobs, *, trigger: bool = False, preset: str | None = None) -> Knobs:
        """``knobs`` with the fitted values (and, when asked, the trigger fitted on the logs of ``preset``)."""
        out = knobs.replace(hidden_prefix_tokens=self.hidden_prefix_tokens, token_ratio=round(self.token_ratio, 3),
                            compaction_restore_tokens=self.compaction_restore_tokens,
                            **{k: structure_knob(k, v) for k, v in self.structure.items()})
        measured = [billed for _, billed, _ in self.image_tokens_measured if billed > 0]
        if measured:  # what an image of unknown pixel size costs, as the bill showed it
            out = out.replace(image_default_tokens=int(clamp_knob("image_default_tokens", int(np.median(measured)))))
        if trigger and preset in self.trigger_intervals:
            low, high = self.trigger_intervals[preset]
            threshold = math.floor((low + high) / 2 * out.context_window_tokens)
            out = with_trigger(out, threshold)  # into the knob the strategy's trigger reads (policies.trigger)
        return out


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Fits per agent, their leave-one-session-out check, and the sessions each fit was made on."""

    fits: tuple[Fit, ...]
    held_out: tuple[SessionReality, ...] = ()  # each session predicted (without usage) by a fit that left it out
    held_out_summary: dict[str, Any] = field(default_factory=dict)

    def fit_for(self, agent: str) -> Fit | None:
        return next((f for f in self.fits if f.agent == agent), None)


@dataclass
class _Rows:
    measure: list[int] = field(default_factory=list)
    counted: list[int] = field(default_factory=list)
    after: list[int] = field(default_factory=list)  # 1 in a window that starts after a compaction
    first_prefix: int | None = None  # the first call's measure minus the counted messages before it


def _session_rows(
    history: History, cache: CountCache, notes: list[str], counter: str | None = None
) -> tuple[_Rows, tuple[str, int, int] | None]:
    """(agent measure, counted tokens, after-compaction flag) at every check of every window, up to its compaction."""
    settings = agent_settings(history)
    knobs = settings.knobs
    rows = _Rows()
    log = history.log
    assert log is not None
    counter = counter or (knobs.trigger_counter if knobs.trigger_counter != "usage" else "estimate")
    counted_knobs = knobs.replace(trigger_counter=counter, token_ratio=1.0, hidden_prefix_tokens=0, **NO_STRUCTURE)
    usage_knobs = knobs.replace(trigger_counter="usage", hidden_prefix_tokens=0)
    for w in _windows(history):
        if w.after is None and log.starts_mid_session:
            notes.append(f"{_name(history)}: {MID_SESSION_NOTE}")
            continue
        seg, offset = _segment(history, w, use_usage=True)
        cut = (w.real.index if w.real is not None else w.end) - offset
        counts = cache.counts_for(seg)
        measure = np.cumsum(trigger_tokens(counts, usage_knobs))
        counted = np.cumsum(trigger_tokens(counts, counted_knobs))
        calls = [i for i, m in enumerate(seg.messages) if m.role == "assistant" and m.usage is not None]
        if not calls:
            continue
        first_call = calls[0]
        if w.after is None and rows.first_prefix is None:  # the knob's definition: billed input minus what came before
            usage = seg.messages[first_call].usage
            assert usage is not None
            rows.first_prefix = usage.context_tokens - (int(counted[first_call - 1]) if first_call else 0)
        restored = 0
        if w.after is not None:  # what the agent re-attached (files, skills, todo list) is worked out, not fitted:
            # counted like the rest of the context, so it takes the fitted ratio (and the fit no preset's ratio)
            restored = restored_tokens(history.messages[: w.after.index],
                                       **restore_args(counted_knobs), cache=cache)
        for i in check_indices(seg, knobs.check_point).tolist():
            if not first_call <= i < cut:  # only checks the bill describes: from the first call to the compaction
                continue
            rows.measure.append(int(measure[i]))
            rows.counted.append(int(counted[i]) + restored)
            rows.after.append(1 if w.after is not None else 0)
    return rows, _image_measure(history, knobs, cache)


def _threshold(knobs: Knobs) -> float:
    """The trigger's tokens under ``knobs`` (the smallest of its clauses that is on)."""
    clauses = []
    window = knobs.context_window_tokens
    if knobs.trigger_ratio >= 0:
        clauses.append(knobs.trigger_ratio * window)
        clauses.append(float(knobs.trigger_hard_cap_tokens))
    if knobs.trigger_reserve_tokens:
        clauses.append(float(window - knobs.trigger_reserve_tokens))
    return min(clauses) if clauses else float(window)


def _image_measure(history: History, knobs: Knobs, cache: CountCache) -> tuple[str, int, int] | None:
    """Tokens an image cost as billed: the growth between the calls around it minus the counted text."""
    msgs = history.messages
    counts = cache.counts_for(history)
    est = trigger_tokens(counts, knobs.replace(trigger_counter="estimate", token_ratio=1.0, image_token_rule="fixed",
                                               image_default_tokens=0, log_counter="estimate"))
    for j in counts.image_messages().tolist():
        before = next((i for i in range(j - 1, -1, -1) if msgs[i].role == "assistant" and msgs[i].usage), None)
        after = next((i for i in range(j + 1, len(msgs)) if msgs[i].role == "assistant" and msgs[i].usage), None)
        if before is None or after is None:
            continue
        u0, u1 = msgs[before].usage, msgs[after].usage
        assert u0 is not None and u1 is not None
        growth = u1.context_tokens - u0.total_tokens
        text = int(sum(est[before + 1 : after]))
        between = sum(len(msgs[i].images()) for i in range(before + 1, after))
        if between > 1:  # the calls bracket several images: what one of them cost
            return (_name(history), (growth - text) // between, sum(
                image_tokens(r, knobs.image_token_rule if knobs.image_token_rule != "serialized" else "anthropic",
                             knobs.image_default_tokens) for i in range(before + 1, after)
                for r in msgs[i].images()) // between)
        rule = sum(image_tokens(r, knobs.image_token_rule if knobs.image_token_rule != "serialized" else "anthropic",
                                knobs.image_default_tokens) for r in msgs[j].images())
        return (_name(history), growth - text, rule)
    return None


def _name(history: History) -> str:
    return (history.source_path or history.id).replace("\\", "/").rsplit("/", 1)[-1]


def structure_knob(name: str, value: float) -> float:
    """A fitted structure weight as its knob takes it (a whole number of tokens, or a ratio), in its range."""
    value = float(clamp_knob(name, value))
    return round(value, 4) if isinstance(getattr(Knobs(), name), float) else int(round(value))


def fit_agent(histories: Sequence[History], *, cache: CountCache | None = None, fit_trigger: bool = False,
              rows_of: dict[Any, Any] | None = None, prefix_from: str = "growth") -> Fit:
    """Fit hidden prefix, token ratio and restore tokens to the logs of one agent.

    ``prefix_from="growth"`` (the default) fits the estimate on the billed growth between consecutive calls
    (``analysis.real_logs.estimate_fit``): the token ratio and what the messages' structure adds (tool calls, user turns,
    reasoning blocks by their encrypted forms), then measures the hidden prefix at the first calls and the restore
    at the first call after each compaction with those weights. The other two fit the ratio alone:
    ``prefix_from="first_call"`` measures the hidden prefix as the knob describes it, the median over the logs of
    the first call's billed context minus the counted messages before it (logs that start mid-session left out),
    and fits the ratio and restore with it held; ``prefix_from="fit"`` fits all three by least squares over every check,
    which trades prefix against ratio to match the long contexts where the trigger fires (on
    ../shared/real_sessions_large: 47,319 and 1.030, where the first calls measure ~40,000). ``rows_of`` keeps
    each history's rows (keyed by the object) for the next fit: folds of a held-out check fit the same sessions
    over and over."""
    cache = cache or CountCache()
    if prefix_from == "growth":
        return _fit_growth(histories, cache, fit_trigger=fit_trigger, rows_of=rows_of)
    notes: list[str] = []
    rows = _Rows()
    images = []
    firsts: list[int] = []
    for h in histories:
        found = rows_of.get(id(h)) if rows_of is not None else None
        if found is None:
            fresh: list[str] = []
            found = (*_session_rows(h, cache, fresh), tuple(fresh))
            if rows_of is not None:
                rows_of[id(h)] = found
        r, image, session_notes = found
        notes.extend(session_notes)
        if r.first_prefix is not None:
            firsts.append(r.first_prefix)
        rows.measure += r.measure
        rows.counted += r.counted
        rows.after += r.after
        if image is not None:
            images.append(image)
    if not rows.measure:
        raise ValueError("no check with billed usage to fit: are these agent logs (Claude Code, Codex)?")
    y = np.asarray(rows.measure, dtype=float)
    x = np.asarray(rows.counted, dtype=float)
    a = np.asarray(rows.after, dtype=float)
    with_after = a.any() and (1 - a).any()
    if prefix_from == "first_call" and firsts:
        prefix = float(np.median(firsts))
        columns = [x] + ([a] if with_after else [])
        coef, *_ = np.linalg.lstsq(np.vstack(columns).T, y - prefix, rcond=None)
        ratio = float(coef[0])
        restore = float(coef[1]) if len(coef) > 1 else 0.0
    else:
        columns = [np.ones_like(x), x] + ([a] if with_after else [])
        coef, *_ = np.linalg.lstsq(np.vstack(columns).T, y, rcond=None)
        prefix, ratio = float(coef[0]), float(coef[1])
        restore = float(coef[2]) if len(coef) > 2 else 0.0
    fitted = prefix + ratio * x + restore * a
    residual = np.abs(y - fitted)
    agent = histories[0].log.agent if histories[0].log else "unknown"
    intervals = trigger_intervals(histories, cache=cache) if fit_trigger else {}
    fitted_knobs = {name: _in_range(name, value, notes) for name, value in
                    (("hidden_prefix_tokens", max(0, round(prefix))), ("token_ratio", max(0.1, ratio)),
                     ("compaction_restore_tokens", max(0, round(restore))))}
    return Fit(agent=agent, sessions=tuple(_name(h) for h in histories),
               hidden_prefix_tokens=int(fitted_knobs["hidden_prefix_tokens"]), token_ratio=fitted_knobs["token_ratio"],
               compaction_restore_tokens=int(fitted_knobs["compaction_restore_tokens"]), checks=len(y),
               residual_tokens_median=float(np.median(residual)), residual_tokens_p90=float(np.percentile(residual, 90)),
               image_tokens_measured=tuple(images), trigger_intervals=intervals, notes=tuple(notes))


def _fit_growth(histories: Sequence[History], cache: CountCache, *, fit_trigger: bool,
                rows_of: dict[Any, Any] | None) -> Fit:
    """``fit_agent`` by the billed growth between calls (``analysis.real_logs.estimate_fit``)."""
    notes: list[str] = []
    rows = []
    images = []
    for h in histories:
        key = ("growth", id(h))
        found = rows_of.get(key) if rows_of is not None else None
        if found is None:
            log = h.log
            if log is not None and log.starts_mid_session:
                notes.append(f"{_name(h)}: {MID_SESSION_NOTE}")
            found = (growth_rows(h, cache), _image_measure(h, agent_settings(h).knobs, cache))
            if rows_of is not None:
                rows_of[key] = found
        rows.append(found[0])
        if found[1] is not None:
            images.append(found[1])
    fit = fit_growth(rows)
    agent = histories[0].log.agent if histories[0].log else "unknown"
    fitted = {name: _in_range(name, value, notes) for name, value in
              (("hidden_prefix_tokens", max(0, round(fit.hidden_prefix_tokens))), ("token_ratio", fit.token_ratio),
               ("compaction_restore_tokens", max(0, round(fit.restore_tokens))))}
    return Fit(agent=agent, sessions=tuple(_name(h) for h in histories),
               hidden_prefix_tokens=int(fitted["hidden_prefix_tokens"]), token_ratio=fitted["token_ratio"],
               compaction_restore_tokens=int(fitted["compaction_restore_tokens"]), checks=fit.intervals,
               residual_tokens_median=fit.residual_median, residual_tokens_p90=fit.residual_p90,
               image_tokens_measured=tuple(images),
               trigger_intervals=trigger_intervals(histories, cache=cache) if fit_trigger else {},
               notes=tuple(dict.fromkeys(notes)), structure={k: structure_knob(k, v) for k, v in fit.structure.items()})


def _in_range(name: str, value: float, notes: list[str]) -> float:
    """A fitted value as its knob takes it: clamped into the knob's range, with a note when it was not in it (logs
    whose bill is far from their text, e.g. a corrupt or synthetic log, fit values no knob allows)."""
    clamped = clamp_knob(name, value)
    if clamped != value:
        spec = KNOB_SPECS[name]
        notes.append(f"the fitted {name} {value:,.4g} is outside the knob's range [{spec.low:,g}, {spec.high:,g}]: "
                     f"clamped to {clamped:,g} (is the logs' usage that of their text?)")
    return clamped


def trigger_intervals(
    histories: Sequence[History], *, cache: CountCache | None = None
) -> dict[str, tuple[float, float]]:
    """Per preset, the trigger thresholds (as a share of each log's window) every logged automatic compaction
    allows: above the measure at every earlier check of its window, at most the measure where it fired.

    A preset whose logs allow no common threshold (the rule differs from what the logs show) is left out.
    """
    cache = cache or CountCache()
    bounds: dict[str, list[float]] = {}
    for h in histories:
        settings = agent_settings(h)
        knobs = settings.knobs.replace(trigger_counter="usage")
        window = knobs.context_window_tokens
        for w in _windows(h):
            if w.real is None or w.real.trigger != "auto":
                continue
            seg, offset = _segment(h, w, use_usage=True)
            measure = np.cumsum(trigger_tokens(cache.counts_for(seg), knobs)) + knobs.hidden_prefix_tokens
            checks = [i for i in check_indices(seg, knobs.check_point).tolist() if i + offset < w.real.index]
            if not checks:
                continue
            fired = int(measure[checks[-1]]) / window
            before = max((int(measure[i]) for i in checks[:-1]), default=0) / window
            low, high = bounds.setdefault(settings.preset or "", [0.0, np.inf])
            bounds[settings.preset or ""] = [max(low, before), min(high, fired)]
    return {name: (low, high) for name, (low, high) in bounds.items() if np.isfinite(high) and low < high}


def calibrate(
    histories: Sequence[History], *, fit_trigger: bool = False, held_out: bool = True, cache: CountCache | None = None
) -> Calibration:
    """Fit every agent found in ``histories``; with ``held_out``, predict each session from a fit that left it out."""
    cache = cache or CountCache()
    logs = [h for h in histories if h.log is not None and h.log.calls]
    groups: dict[str, list[History]] = {}
    for h in logs:
        assert h.log is not None
        groups.setdefault(h.log.agent, []).append(h)
    fits = tuple(fit_agent(g, cache=cache, fit_trigger=fit_trigger) for g in groups.values())
    results: list[SessionReality] = []
    if held_out:
        for group in groups.values():
            for i, h in enumerate(group):
                rest = group[:i] + group[i + 1 :]
                if not rest:
                    continue
                fit = fit_agent(rest, cache=cache, fit_trigger=fit_trigger)
                own = agent_settings(h)
                knobs = fit.knobs_for(own.knobs, trigger=fit_trigger, preset=own.preset)
                results.append(follow_log(h, knobs=knobs, usage=False, cache=cache))
    summary = reality_summary(results) if results else {}
    return Calibration(fits=fits, held_out=tuple(results), held_out_summary=summary)
