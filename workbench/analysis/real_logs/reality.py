"""Reality check: replay a real agent log with the agent's own settings and compare with where it really compacted.

The replay *follows the log*: each logged compaction is predicted from the state right after the previous real
one (the real summary and whatever the agent kept, as the log has them), so one miss does not shift every later
prediction. A prediction window runs from the previous real compaction to the next one; the first compaction the
replay starts in it is the prediction (early or late). Logged manual compactions are replayed at their real
place (they end a window; an automatic compaction the replay starts before one is reported as extra), and one
the replay starts after the last real compaction is extra too.

Two counters: with usage (the default) the trigger measure is the agent's own, from the log's billed usage
(``trigger_counter: usage``); without, only the estimate with the preset's hidden prefix and token ratio, which
is all a counterfactual replay has. Without usage the log's own automatic compactions still pin the estimate: the
agent compacted where its measure crossed its trigger, so each one tells how far the estimate is off there
(``pinned_shifts``), and the windows after it are predicted with that shift (records of the transcript, not usage).
Indices are the loader's numbering of the first message after a compaction.
Pure: histories in, values out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.analysis.real_logs.after_compaction import (
    AfterCompaction,
    counting_knobs,
    measured_prefix,
    predict_after,
)
from workbench.analysis.real_logs.agent_settings import AgentSettings, agent_settings
from workbench.analysis.real_logs.bill import (
    Bill,
    BillModel,
    BillWindow,
    ModelCall,
    first_call_own,
    logged_bill,
    session_bill,
)
from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.counters import context_tokens
from workbench.counting.prices import Prices
from workbench.counting.restore import compaction_restore
from workbench.counting.tokens import CountCache
from workbench.history.model import History, Message
from workbench.history.session_log import LoggedCompaction, SessionLog
from workbench.knobs import Knobs, clamp_knob
from workbench.policies.limits import trigger_limit
from workbench.replay import Run, simulate
from workbench.replay.first import compaction_at_end, first_compaction

TOLERANCES = (0, 2, 5)


@dataclass(frozen=True, kw_only=True)
class CompactionCheck:
    """One logged compaction against the replay's prediction."""

    source_line: int | None
    real_index: int
    trigger: str
    real_tokens_before: int | None
    predicted_index: int | None
    predicted_tokens_before: int | None
    note: str = ""
    # The replay's context at the first model call after the compaction, predicted from the state before it
    # (``analysis.real_logs.after_compaction``), and what the log billed for that call (input + cache reads + writes).
    predicted_tokens_after: int | None = None
    logged_tokens_after: int | None = None

    @property
    def error(self) -> int | None:
        """Predicted minus real index (messages; negative = early); None when nothing was predicted."""
        return None if self.predicted_index is None else self.predicted_index - self.real_index

    def to_json(self) -> dict[str, Any]:
        return {"source_line": self.source_line, "real_index": self.real_index, "trigger": self.trigger,
                "real_tokens_before": self.real_tokens_before, "predicted_index": self.predicted_index,
                "predicted_tokens_before": self.predicted_tokens_before,
                "predicted_tokens_after": self.predicted_tokens_after, "logged_tokens_after": self.logged_tokens_after}

    @property
    def after_error(self) -> float | None:
        """Predicted over logged context after the compaction, minus one (None without both)."""
        if self.predicted_tokens_after is None or not self.logged_tokens_after:
            return None
        return self.predicted_tokens_after / self.logged_tokens_after - 1.0


@dataclass(frozen=True, kw_only=True)
class SessionReality:
    """A whole session: its agent, the settings replayed, and every logged compaction checked."""

    file: str
    agent: str | None
    version: str | None
    model: str | None
    window: int | None
    preset: str | None
    usage: bool
    compactions: tuple[CompactionCheck, ...]
    extra_predictions: tuple[int, ...] = ()  # first message after each predicted compaction the log does not have
    notes: tuple[str, ...] = ()
    bill: Bill | None = None  # the session's model calls as the replay models them (``analysis.real_logs.bill``)
    logged_bill: Bill | None = None  # the same classes summed from the log's usage
    afters: tuple[AfterCompaction, ...] = ()  # each logged compaction's after-prediction, with what fits it
    calls: tuple[ModelCall, ...] = ()  # the model calls the bill was computed on
    first_call_own: int = 0  # the file's own tokens before its first call (``bill.first_call_own``)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "agent": self.agent, "version": self.version, "model": self.model,
                "window": self.window, "preset": self.preset,
                "compactions": [c.to_json() for c in self.compactions],
                "bill": None if self.bill is None else self.bill.to_json(),
                "logged_bill": None if self.logged_bill is None else self.logged_bill.to_json()}

    @property
    def bill_error(self) -> float | None:
        """Modelled over logged bill in bill units, minus one (None without both)."""
        if self.bill is None or self.logged_bill is None or not self.logged_bill.units(self.agent, self.model):
            return None
        return self.bill.units(self.agent, self.model) / self.logged_bill.units(self.agent, self.model) - 1.0


@dataclass
class _Window:
    start: int  # first message of the state after the previous real compaction
    end: int  # the next-but-one real compaction, or the end: where this window's prediction may fall
    prefix: tuple[Message, ...] = ()  # what the agent carried into the new context that the transcript lacks
    real: LoggedCompaction | None = None  # the compaction this window predicts (None: after the last one)
    after: LoggedCompaction | None = None  # the compaction the window starts from
    extra: dict[str, Any] = field(default_factory=dict)


def reality_knobs(history: History, settings: AgentSettings, *, usage: bool, overrides: Knobs | None = None) -> Knobs:
    """The knobs each window replays with: the agent's, with the usage counter when the log's bill is used."""
    knobs = overrides or settings.knobs
    if usage and history.log is not None and history.log.calls:
        knobs = knobs.replace(trigger_counter="usage")
    return knobs.replace(latency_steps=0, manual_compact_checks="", cooldown_checks=0)


def follow_log(
    history: History,
    *,
    preset: str | None = None,
    knobs: Knobs | None = None,
    usage: bool = True,
    cache: CountCache | None = None,
    bill_model: BillModel | None = None,
) -> SessionReality:
    """Check every logged compaction of ``history`` against a replay that follows the log; predict the context
    right after each one (``analysis.real_logs.after_compaction``) and bill the session's calls (``analysis.real_logs.bill``, with
    ``bill_model`` or the shipped one)."""
    settings = agent_settings(history, preset=preset, base=knobs, dollars=False)  # positions, not dollars
    log = history.log
    name = history.source_path or history.id
    file = name.replace("\\", "/").rsplit("/", 1)[-1]
    notes = list(settings.warnings)
    if log is None or not log.compactions:
        notes.append("the log records no compaction")
        bill, logged, calls, own = (None, None, (), 0) if log is None else _bill_without_compactions(
            history, settings, usage=usage and bool(log.calls), knobs=knobs, cache=cache, bill_model=bill_model)
        return SessionReality(file=file, agent=settings.agent, version=settings.version, model=settings.model,
                              window=settings.window, preset=settings.preset, usage=usage, compactions=(),
                              notes=tuple(notes), bill=bill, logged_bill=logged, calls=calls, first_call_own=own)
    use_usage = usage and bool(log.calls)
    if usage and not log.calls:
        notes.append("the log has no billed usage: the estimate alone is used")
    if log.start_note is not None:
        notes.append(log.start_note)
    base = reality_knobs(history, settings, usage=use_usage, overrides=knobs and settings.knobs)
    # Its windows are slices of the log's messages: counts keyed by the objects, no content digests.
    cache = cache or CountCache(by_identity=True)
    checks: list[CompactionCheck] = []
    extra: list[int] = []
    after_knobs, own_prefix = _after_knobs(history, base, use_usage, cache)
    afters: dict[int, AfterCompaction] = {}
    bill_windows: list[BillWindow] = []
    windows = _windows(history)
    restores: dict[int, int] = {}  # what the agent re-attaches at each compaction (the prediction's and the next
    # window's, counted alike, so one walk of the log serves both)
    restoring = counting_knobs(base)
    # Only a restore that re-attaches files reads the bill (Claude Code's); Codex's restores none: not counted.
    billed = _billed_for_restore(history, settings.knobs, cache) if use_usage and restoring.restore_files > 0 else None
    # Without usage, what the log's earlier automatic compactions pin of the estimate's error (``pinned_shifts``),
    # carried into the windows after them: tokens added to the hidden prefix of the window's prediction and of the
    # context after its compaction (the same state), never to the bill's calls (``bill.anchored`` pins those).
    carried = 0
    for n, window in enumerate(windows):
        seg, offset = _segment(history, window, use_usage=use_usage)
        seg_knobs = base
        if window.after is not None:
            restored = restores.get(window.after.index)
            if restored is None:
                restored = compaction_restore(history.messages[: window.after.index], restoring, cache=cache,
                                              billed=billed)
            if restored:
                seg_knobs = base.replace(hidden_prefix_tokens=base.hidden_prefix_tokens + restored)
        real = window.real
        after = None
        if real is not None:
            following = windows[n + 1].real if n + 1 < len(windows) else None
            end = following.index if following is not None else len(history.messages)
            restores[real.index] = compaction_restore(history.messages[: real.index], restoring, cache=cache,
                                                      billed=billed)
            after = afters[real.index] = predict_after(history, seg, real.index - offset, real,
                                                       _shifted(after_knobs, carried), end=end, cache=cache,
                                                       restored=restores[real.index], own_prefix=own_prefix)
        bill_windows.append(_bill_window(history, window, seg, offset, seg_knobs, cache,
                                         None if window.after is None else afters.get(window.after.index),
                                         use_usage=use_usage))
        run, first = _first_compaction(seg, _shifted(seg_knobs, carried), cache,
                                       whole=real is not None and real.trigger == "manual")
        pins = not use_usage and real is not None and pins_estimate(log, real, first=window.after is None)
        trigger = _trigger_at(real, base) if pins else None
        if real is not None and trigger is not None:
            pinned = pinned_shifts(seg, real.index - offset, seg_knobs, trigger, cache)
            if pinned is not None:  # the shift closest to the one carried that puts the replay's crossing there
                low, high = pinned
                carried = max(carried, low) if high is None else min(max(carried, low), high)
        predicted = None if first is None else max(window.start, offset + first.index_started + 1)
        predicted_tokens = None if first is None else first.tokens_before
        if real is None:
            if predicted is not None:
                extra.append(predicted)
            continue
        note = ""
        if real.parent_missing:
            note = "the log lacks what the agent counted last before it (its logical parent record)"
        if real.trigger == "manual":
            if predicted is not None and predicted < real.index:
                extra.append(predicted)
            checks.append(CompactionCheck(
                source_line=real.source_line, real_index=real.index, trigger="manual",
                real_tokens_before=real.tokens_before, predicted_index=real.index,
                predicted_tokens_before=_measure_before(run, real.index - offset), note="replayed at its real place",
                predicted_tokens_after=after.predicted_tokens if after else None,
                logged_tokens_after=after.logged_tokens if after else None))
            continue
        checks.append(CompactionCheck(source_line=real.source_line, real_index=real.index, trigger=real.trigger,
                                      real_tokens_before=real.tokens_before, predicted_index=predicted,
                                      predicted_tokens_before=predicted_tokens, note=note,
                                      predicted_tokens_after=after.predicted_tokens if after else None,
                                      logged_tokens_after=after.logged_tokens if after else None))
    bill, calls = session_bill(history, bill_windows, bill_model)
    return SessionReality(file=file, agent=settings.agent, version=settings.version, model=settings.model,
                          window=settings.window, preset=settings.preset, usage=use_usage,
                          compactions=tuple(checks), extra_predictions=tuple(extra), notes=tuple(notes),
                          bill=bill, logged_bill=logged_bill(history), afters=tuple(afters.values()), calls=calls,
                          first_call_own=first_call_own(bill_windows, calls))


def pins_estimate(log: SessionLog, compaction: LoggedCompaction, *, first: bool) -> bool:
    """Whether a logged compaction pins the estimate's error (``pinned_shifts``) for the windows after it: an
    automatic one (the agent compacted where its measure crossed its trigger), but the one that closes the first
    window (``first``) of a log that starts mid-session, whose error is mostly the earlier context the file lacks."""
    return compaction.trigger == "auto" and not (first and log.starts_mid_session)


def _shifted(knobs: Knobs, tokens: int) -> Knobs:
    """``knobs`` with ``tokens`` more hidden prefix (within the knob's range)."""
    if not tokens:
        return knobs
    return knobs.replace(hidden_prefix_tokens=int(clamp_knob("hidden_prefix_tokens", knobs.hidden_prefix_tokens + tokens)))


def pinned_shifts(seg: History, cut: int, knobs: Knobs, trigger: float,
                  cache: CountCache) -> tuple[int, int | None] | None:
    """(lowest, highest) shift of ``knobs``' hidden prefix, in tokens, under which the replay of ``seg`` first reaches
    the agent's ``trigger`` at its last check before ``cut``, where the agent compacted by itself (``seg`` is a window
    that ends at a logged automatic compaction, ``cut`` its first message after it): the agent compacted where its
    own measure crossed its trigger, so the estimate there is off by one of these. Highest None: no check before
    that one, no bound. None when no check comes before ``cut``.

    Without usage, the estimate's error in a window is mostly what it starts with (the hidden prefix, what the agent
    re-attached), which the next window starts with too: ``follow_log`` carries the shift into the windows after it.
    The shift is a range, as wide as what the last messages before the compaction added (a large tool result lands
    the measure anywhere above the trigger), so the one carried is the point of that range closest to the one
    carried before (none at first): the fit is moved only as far as the log says it is wrong."""
    forced = knobs.replace(restore_files=0, compaction_restore_tokens=0)  # the window uncompacted: no restore counted
    last = compaction_at_end(seg, forced, SimulatedBriefer(), cache=cache, before=cut)
    if last is None:
        return None
    earlier = compaction_at_end(seg, forced, SimulatedBriefer(), cache=cache, before=last.index_started)
    low = math.ceil(trigger - last.tokens_before)
    return low, None if earlier is None else max(low, math.ceil(trigger - earlier.tokens_before) - 1)


def _billed_for_restore(history: History, knobs: Knobs, cache: CountCache) -> Any:
    """What the provider billed for each message of the log (``counting.billed``), spread between two calls by
    the estimate: what Claude Code re-attaches after a compaction is sized by what its reads were billed
    (``counting.restore``). Counted by chars / 4 instead, code files come out short or long enough to be called
    under or over the 5,000-token limit they are not; a tokenizer would count them as well but takes ~0.4 s of CPU
    to load, more than reading the small set's logs (benchmarks: ``workbench reality`` within 2x of that)."""
    from workbench.counting.billed import billed_counts

    return billed_counts(cache.counts_for(history), knobs.replace(trigger_counter="estimate", log_counter="billed")).tokens


def _after_knobs(history: History, base: Knobs, use_usage: bool, cache: CountCache) -> tuple[Knobs, bool]:
    """The knobs the context after each compaction is predicted with: with usage, the hidden prefix this log's
    first call measured (usage before every compaction), else the knobs' own; and whether it is the log's own."""
    knobs = counting_knobs(base)
    if use_usage:
        prefix = measured_prefix(history, knobs, cache)
        if prefix is not None:
            return knobs.replace(hidden_prefix_tokens=prefix), True
    return knobs, False


def _bill_window(history: History, window: _Window, seg: History, offset: int, knobs: Knobs, cache: CountCache,
                 after: AfterCompaction | None, *, use_usage: bool) -> BillWindow:
    """What the bill reads of one window: its calls' tokens under the window's knobs. Without usage, a window
    after a compaction also carries what the transcript does not hold: an encrypted summary (the size model's
    briefing for it) and Codex's request instructions (``after_compaction.request_instructions``)."""
    counts = cache.counts_for(seg)
    base = knobs.hidden_prefix_tokens
    if after is not None and not use_usage:
        base += after.instructions_tokens + (after.briefing_tokens if after.opaque else 0)
    hi = window.real.index if window.real is not None else len(history.messages)
    return BillWindow(segment=seg, offset=offset, lo=window.start, hi=hi, tokens=context_tokens(counts, knobs),
                      base=base, reset=window.after is not None, trigger=_trigger_at(window.real, knobs),
                      estimated=not use_usage)


def _trigger_at(real: LoggedCompaction | None, knobs: Knobs) -> float | None:
    """The tokens the agent's measure crossed where it compacted by itself (its trigger, or its window where it
    compacts only on overflow); None for a manual compaction or none."""
    if real is None or real.trigger != "auto":
        return None
    if not knobs.proactive_compaction:
        return float(knobs.context_window_tokens)
    return trigger_limit(knobs).tokens


def _bill_without_compactions(history: History, settings: AgentSettings, *, usage: bool, knobs: Knobs | None,
                              cache: CountCache | None,
                              bill_model: BillModel | None) -> tuple[Bill | None, Bill | None, tuple[ModelCall, ...], int]:
    """The bill of a log that never compacted: one window, the whole log (and the calls, ``first_call_own``)."""
    cache = cache or CountCache(by_identity=True)
    base = reality_knobs(history, settings, usage=usage, overrides=knobs and settings.knobs)
    window = _Window(start=0, end=len(history.messages))
    seg, offset = _segment(history, window, use_usage=usage)
    windows = [_bill_window(history, window, seg, offset, base, cache, None, use_usage=usage)]
    bill, calls = session_bill(history, windows, bill_model)
    return bill, logged_bill(history), calls, first_call_own(windows, calls)


def _first_compaction(seg: History, knobs: Knobs, cache: CountCache, *, whole: bool) -> tuple[Run | None, Any]:
    """(the Run when ``whole``, the replay's first automatic compaction or None).

    Unless the whole run is needed (a manual window reads its timeline), the replay stops as that compaction
    starts (``first_compaction``): its briefing, its landing, the rest of the window and the Run would be thrown
    away. The replay lands compactions at once here (latency 0), so the first one recorded is the first started.
    """
    if whole:  # its timeline is read, never its dollars: no price lookup (nor the registry's parse)
        run = simulate(seg, knobs, SimulatedBriefer(), cache=cache, prices=Prices(model=knobs.model),
                       briefer_prices=Prices(model=knobs.briefer_model))
        return run, next((c for c in run.compressions if c.trigger != "manual"), None)
    return None, first_compaction(seg, knobs, SimulatedBriefer(), cache=cache)


def _windows(history: History) -> list[_Window]:
    assert history.log is not None
    real = sorted(history.log.compactions, key=lambda c: c.index)
    n = len(history.messages)
    out = []
    for s in range(len(real) + 1):
        after = real[s - 1] if s else None
        start = after.index if after else 0
        end = real[s + 1].index if s + 1 < len(real) else n
        this = real[s] if s < len(real) else None
        if this is not None and this.trigger == "manual":
            end = this.index  # the user compacted here: nothing after it belongs to this window
        prefix = tuple(after.kept) if after is not None else ()
        out.append(_Window(start=start, end=max(start, end), prefix=prefix, real=this, after=after))
    return out


def _segment(history: History, window: _Window, *, use_usage: bool) -> tuple[History, int]:
    """The window as a history of its own, and the offset that maps its indices back to the log's numbering."""
    body = list(history.messages[window.start : window.end])
    prefix = list(window.prefix)
    if use_usage:
        if window.after is not None and window.after.tokens_after is not None and prefix:
            # The agent logged its own measure of the context it rebuilt (Codex): start from it.
            prefix[-1] = prefix[-1].with_metadata(loggedContextTokens=window.after.tokens_after)
        real = window.real
        if real is not None:
            cut = real.index - window.start
            if real.parent_missing and real.tokens_before is not None and 0 < cut <= len(body):
                # What the agent counted last is missing from the file: its logged measure stands in for it.
                body[cut - 1] = body[cut - 1].with_metadata(loggedContextTokens=real.tokens_before)
            # After the real compaction the bill describes the compacted context, not this replay's.
            body[cut:] = [m.with_metadata(usage=None, usageTotal=None) if m.meta("usage") is not None else m
                          for m in body[cut:]]
    messages = tuple(prefix + body)
    seg = history.part(f"@{window.start}", messages)
    return seg, window.start - len(prefix)


def _measure_before(run: Any, index: int) -> int | None:
    """The replay's measure (no compaction) at the last check before message ``index`` of the window."""
    tl = run.timeline
    before = tl["index"].to_numpy() < index  # numpy: a polars filter starts its query engine for two numbers
    if not before.any():
        return None
    return int(tl["baseline"].to_numpy()[before][-1])


def reality_summary(sessions: Sequence[SessionReality]) -> dict[str, Any]:
    """Counts over every automatic compaction: how many predicted within 0, 2 and 5 messages, missed, extra."""
    # A compaction the log starts at (nothing before it in the file) cannot be predicted: not scored.
    auto = [c for s in sessions for c in s.compactions if c.trigger == "auto" and c.real_index > 0]
    errors = [abs(c.error) for c in auto if c.error is not None]
    out: dict[str, Any] = {
        "sessions": len(sessions),
        "usage": all(s.usage for s in sessions) if sessions else False,
        "auto_compactions": len(auto),
        "manual_compactions": sum(c.trigger == "manual" for s in sessions for c in s.compactions),
        "missed": sum(c.predicted_index is None for c in auto),
        "extra_predictions": sum(len(s.extra_predictions) for s in sessions),
        "mean_abs_error_messages": round(sum(errors) / len(errors), 2) if errors else None,
        "max_abs_error_messages": max(errors) if errors else None,
    }
    for tol in TOLERANCES:
        hit = sum(1 for e in errors if e <= tol)
        out[f"within_{tol}"] = hit
        out[f"within_{tol}_share"] = round(hit / len(auto), 4) if auto else None
    by_agent: dict[str, dict[str, Any]] = {}
    for agent in sorted({s.agent or "unknown" for s in sessions}):
        mine = [s for s in sessions if (s.agent or "unknown") == agent]
        sub = reality_summary(mine) if len(mine) < len(sessions) else None
        if sub is not None:
            sub.pop("by_agent", None)
            sub.pop("per_session", None)
            by_agent[agent] = sub
    if by_agent:
        out["by_agent"] = by_agent
    out.update(after_summary(sessions))
    out.update(bill_summary(sessions))
    out["per_session"] = [{"file": s.file, "extra_predictions": list(s.extra_predictions), "notes": list(s.notes),
                           "checks": [{"real_index": c.real_index, "error": c.error, "note": c.note}
                                      for c in s.compactions]} for s in sessions]
    return out


AFTER_TOLERANCE = 0.10  # predicted_tokens_after within this share of the logged context counts as a hit
BILL_TOLERANCE = 0.10  # the modelled bill within this share of the logged one, in bill units


def after_summary(sessions: Sequence[SessionReality]) -> dict[str, Any]:
    """How many logged compactions have the context right after them predicted within ±10% of the log's."""
    errors = [e for s in sessions for c in s.compactions if (e := c.after_error) is not None]
    hit = sum(abs(e) <= AFTER_TOLERANCE for e in errors)
    return {"after_compactions": len(errors), "after_within_10pct": hit,
            "after_within_10pct_share": round(hit / len(errors), 4) if errors else None,
            "after_median_abs_error": round(float(sorted(map(abs, errors))[len(errors) // 2]), 4) if errors else None}


def bill_summary(sessions: Sequence[SessionReality]) -> dict[str, Any]:
    """How many sessions have their modelled bill within ±10% of the logged one, in bill units."""
    errors = [e for s in sessions if (e := s.bill_error) is not None]
    hit = sum(abs(e) <= BILL_TOLERANCE for e in errors)
    return {"bills": len(errors), "bill_within_10pct": hit,
            "bill_within_10pct_share": round(hit / len(errors), 4) if errors else None,
            "bill_median_abs_error": round(float(sorted(map(abs, errors))[len(errors) // 2]), 4) if errors else None}


def logged_context_frame(history: History, knobs: Knobs | None = None) -> Any:
    """Per message of a real log: the agent's own measure of its context (from the billed usage, with its resets
    at the real compactions), and the billed input and total at each logged call; polars."""
    import numpy as np
    import polars as pl

    from workbench.counting.counters import trigger_tokens
    from workbench.counting.usage import agent_measure

    knobs = (knobs or agent_settings(history).knobs).replace(trigger_counter="usage")
    counts = CountCache().counts_for(history)
    base = trigger_tokens(counts, knobs.replace(trigger_counter="estimate", token_ratio=1.0, hidden_prefix_tokens=0,
                                                log_counter="estimate"))
    if knobs.agent_estimate == "text":
        from workbench.counting.usage import text_estimate

        base = np.fromiter((text_estimate(m, knobs.image_default_tokens) for m in history.messages), dtype=np.int64,
                           count=len(history.messages))
    measure = agent_measure(history.messages, base, knobs.hidden_prefix_tokens,
                            count_added=knobs.count_added_since_call, reasoning_ratio=knobs.reasoning_carry_ratio)
    billed_in: list[int | None] = []
    billed_total: list[int | None] = []
    for m in history.messages:
        u = m.usage if m.role == "assistant" else None
        billed_in.append(None if u is None else u.context_tokens)
        billed_total.append(None if u is None else u.total_tokens)
    return pl.DataFrame({
        "index": np.arange(len(history.messages), dtype=np.int64),
        "role": [m.role for m in history.messages],
        "measure": measure + knobs.hidden_prefix_tokens,
        "billed_input": pl.Series(billed_in, dtype=pl.Int64),
        "billed_total": pl.Series(billed_total, dtype=pl.Int64),
    })
