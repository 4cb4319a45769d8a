"""Which knob matters now: notes for knobs that currently have no effect, and the ranges where they do.

Reads a Run's limits (``Run.limits``: the effective trigger and kept budget, with their binding terms)
and its compressions (why each boundary stopped, the tokens of the floor messages, how many messages
the budget holds). A knob is *inert* when moving it a little leaves the replay unchanged: the ratio
while the hard cap binds, the kept budget while every walk stops at the min-kept floor. The same
facts give each knob's *live range*, where the output varies: the sweep and tune defaults. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.knobs import KNOB_SPECS
from workbench.policies.limits import STOP_BUDGET, STOP_FLOOR, STOP_MIN_MESSAGES, STOP_SINGLE, Limit
from workbench.replay.results import Run
from workbench.stagewise.core import MIN_FLOOR


@dataclass(frozen=True, kw_only=True)
class KnobNote:
    """Why a knob does nothing at its current value, and what would make it matter."""

    knob: str
    text: str


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _landed(run: Run) -> list:
    return [c for c in run.compressions if c.status == "landed"]


def _never_fires(run: Run) -> str | None:
    """Why nothing compresses, when the trigger is never reached (None when something compresses)."""
    lim = run.limits
    if _landed(run) or lim is None or lim.trigger.tokens is None or lim.clauses:
        return None
    peak = run.metrics.baseline_peak_tokens
    if peak > lim.trigger.tokens:  # it fired but nothing was foldable, or a guard held it
        return None
    return f"nothing compresses: the context peaks at {_n(peak)} tokens, below the {_n(lim.trigger.tokens)} trigger"


def trigger_note(run: Run) -> str | None:
    """Why moving the trigger control a step changes nothing, when it does not: nothing reaches the trigger."""
    if not run.knobs.proactive_compaction:
        return ("no effect: proactive compaction is off (proactive_compaction), so only an overflow of the window "
                "compacts")
    never = _never_fires(run)
    if never is None:
        return None
    return f"no effect: {never}; it compresses below {_n(run.metrics.baseline_peak_tokens)}"


def _trigger_notes(run: Run, trig: Limit) -> dict[str, str]:
    k = run.knobs
    out: dict[str, str] = {}
    ratio, cap = trig.term("ratio"), trig.term("cap")
    if ratio is None or cap is None or trig.tokens is None:
        return out
    window = k.context_window_tokens
    if trig.binds == "cap" and cap.tokens < ratio.tokens:
        out["trigger_ratio"] = (f"no effect: the hard cap binds ({_n(cap.tokens)} < {ratio.label} = {_n(ratio.tokens)}); "
                                f"raise the cap or lower the ratio below {cap.tokens / window:.2f}")
    elif trig.binds == "ratio" and ratio.tokens < cap.tokens:
        out["trigger_hard_cap_tokens"] = (f"no effect: {ratio.label} = {_n(ratio.tokens)} binds, below the cap; "
                                          f"the cap matters below {_n(ratio.tokens)}")
    elif trig.binds == "reserve":
        reserve = trig.binding
        assert reserve is not None
        text = (f"no effect: window − reserve = {_n(reserve.tokens)} binds first; lower trigger_reserve_tokens "
                "for the ratio and the cap to matter")
        out["trigger_ratio"] = out["trigger_hard_cap_tokens"] = text
    return out


def _kept_notes(run: Run, kept: Limit) -> dict[str, str]:
    out: dict[str, str] = {}
    ratio, cap, low = kept.term("ratio"), kept.term("cap"), kept.term("floor")
    if ratio is None or cap is None or kept.tokens is None:
        return out
    window = run.knobs.context_window_tokens
    if kept.binds == "floor" and low is not None:
        text = f"no effect: the kept floor ({_n(low.tokens)}) binds, above min({ratio.label}, kept cap)"
        out["kept_budget_ratio"] = out["kept_budget_cap_tokens"] = text
    elif kept.binds == "cap" and cap.tokens < ratio.tokens:
        out["kept_budget_ratio"] = (f"no effect: the kept cap binds ({_n(cap.tokens)} < {ratio.label} = "
                                    f"{_n(ratio.tokens)}); it matters below {cap.tokens / window:.3f}")
    elif kept.binds == "ratio" and ratio.tokens < cap.tokens:
        out["kept_budget_cap_tokens"] = (f"no effect: {ratio.label} = {_n(ratio.tokens)} binds, below the cap; "
                                         f"the cap matters below {_n(ratio.tokens)}")
    landed = _landed(run)
    stops = {c.stop for c in landed}
    kept_most = max((c.kept_tokens or 0 for c in landed), default=0)
    if landed and stops == {STOP_BUDGET} and kept.tokens - kept_most >= 0.01 * window:
        # The walk stops at a message's edge: the budget moves a boundary only past what was kept or once the next
        # older message fits, so a small move (the slider's step is 1% of the window) changes nothing.
        text = (f"no effect for a small move: every boundary stopped at a message's edge, keeping at most "
                f"{_n(kept_most)} tokens of the {_n(kept.tokens)} budget; it moves below {_n(kept_most)} "
                f"({kept_most / window:.3f} × window), or once the next older message fits")
        out.setdefault("kept_budget_cap_tokens" if kept.binds == "cap" else "kept_budget_ratio", text)
    floor = run.limits.floor_messages if run.limits is not None else 0
    if landed and stops <= {STOP_FLOOR, STOP_MIN_MESSAGES}:
        most = max((c.floor_tokens or 0) for c in landed)
        knob = "min_kept_messages" if run.knobs.strategy == "stagewise" else "keep_min_messages"
        lower = f"kept_budget_cap_tokens < {_n(most)}" if kept.binds == "cap" else \
            f"kept_budget_ratio < {most / window:.3f}"
        text = (f"no effect: every boundary stopped at the {floor}-message floor ({knob}); those messages hold at "
                f"most {_n(most)} tokens, under the {_n(kept.tokens)} budget. Lower the budget below {_n(most)} "
                f"({lower}) or raise {knob}")
        for name in ("kept_budget_ratio", "kept_budget_cap_tokens"):
            out.setdefault(name, text)
    return out


def _floor_notes(run: Run) -> dict[str, str]:
    k = run.knobs
    out: dict[str, str] = {}
    landed = _landed(run)
    if k.strategy == "stagewise":
        if k.min_kept_messages < MIN_FLOOR:
            out["min_kept_messages"] = f"no effect below {MIN_FLOOR}: stagewise keeps max({MIN_FLOOR}, min_kept_messages)"
        elif landed and all(c.stop in (STOP_BUDGET, STOP_SINGLE) for c in landed):
            most = max(c.kept for c in landed)
            out["min_kept_messages"] = (f"no effect: every boundary stopped at the kept budget, with at most {most} "
                                        f"messages kept; it matters below {most + 1}, or with a larger budget")
    return out


def knob_notes(run: Run) -> dict[str, KnobNote]:
    """Knob name → why it has no effect on this run right now (only knobs that have none are listed)."""
    lim = run.limits
    if lim is None:
        return {}
    out: dict[str, str] = {}
    never = _never_fires(run)
    if never is not None:
        for name in ("kept_budget_ratio", "kept_budget_cap_tokens", "min_kept_messages", "target_briefing_chars"):
            out[name] = f"no effect: {never}"
        peak = run.metrics.baseline_peak_tokens
        if lim.trigger.term("ratio") is not None:
            share = peak / run.knobs.context_window_tokens
            out["trigger_ratio"] = f"no effect: {never}; it would compress below {share:.2f}"
            out["trigger_hard_cap_tokens"] = f"no effect: {never}; it would compress below {_n(peak)}"
    elif not _landed(run):  # a guard, a count-only trigger or proactive compaction off: nothing lands
        for name in ("kept_budget_ratio", "kept_budget_cap_tokens", "min_kept_messages", "target_briefing_chars"):
            out[name] = "no effect: nothing compresses in this run"
        if run.knobs.proactive_compaction:
            out.update(_trigger_notes(run, lim.trigger))
    else:
        if run.knobs.proactive_compaction:
            out.update(_trigger_notes(run, lim.trigger))
        if lim.kept is not None:
            out.update(_kept_notes(run, lim.kept))
        out.update(_floor_notes(run))
        out.update(_briefing_notes(run))
    for name in lim.unused:
        out.setdefault(name, f"no effect: the {run.knobs.strategy} strategy does not read it")
    if run.billed:  # the log's bill counts every message (counting/billed.py)
        out.setdefault("boundary_counter", "no effect: the boundary walk counts what the provider billed "
                       "(log_counter billed); set log_counter to estimate to count with this")
        if run.billed_hidden_prefix:
            out.setdefault("hidden_prefix_tokens", "no effect: the hidden prefix is the log's own, what its first "
                           "call read beyond its messages (log_counter billed); set log_counter to estimate to use "
                           "this")
    return {k: KnobNote(knob=k, text=v) for k, v in out.items()}


def _walks_tokens(run: Run) -> bool:
    """Whether the boundary walk counts tokens: a kept token budget (stagewise, keep_rule budget) or a share or
    user-message budget; a tail of N messages or turns, or none (Claude Code, Copilot CLI), counts nothing."""
    lim = run.limits
    if lim is None or lim.kept is not None:
        return True
    return "keep_rule" not in lim.unused and run.knobs.keep_rule in ("share", "user_messages")


def _walk_counter(run: Run) -> str:
    return "the bill" if run.billed else run.knobs.boundary_counter if _walks_tokens(run) else "none"


def _estimate_counted(run: Run) -> bool:
    """Whether any count of this run is the chars/4 estimate (the only counter ``overhead_chars_per_message``
    enters). On a log counted as billed: what the agent adds since its last call, unless it is the last bill alone or
    the agent's own rough ``text`` count (``counting.counters.trigger_lag``). Otherwise the trigger counter
    (``usage`` estimates what came after the last call with it, unless ``text``), and the boundary walk's counter
    when the walk counts tokens."""
    k = run.knobs
    if run.billed:
        return k.count_added_since_call and k.agent_estimate == "counter"
    if k.trigger_counter == "estimate" or (k.trigger_counter == "usage" and k.agent_estimate == "counter"):
        return True
    return _walks_tokens(run) and k.boundary_counter in ("estimate", "usage")


def unread_knobs(run: Run) -> dict[str, str]:
    """Knob → why this run never reads it, derived from the policy's limits and the counters the run uses: the
    knobs the strategy does not read (``Limits.unused``), the hard cap when the trigger ratio is off (no term of the
    policy's trigger names it), the overhead when nothing counts with the estimate, and what a log's bill replaces.
    The sidebar folds these into one group instead of showing dead widgets."""
    k = run.knobs
    lim = run.limits
    out: dict[str, str] = {}
    if lim is not None:
        for name in lim.unused:
            out[name] = f"the {k.strategy} strategy does not read it"
        named = {knob for term in lim.trigger.terms for knob in term.knobs}
        if "trigger_hard_cap_tokens" not in named and "trigger_hard_cap_tokens" not in out:
            out["trigger_hard_cap_tokens"] = "the trigger ratio is off (−1), and the cap only caps it"
    if not _estimate_counted(run):
        out["overhead_chars_per_message"] = (f"nothing counts with the estimate (trigger: {k.trigger_counter}, "
                                             f"boundary walk: {_walk_counter(run)})")
    if not _walks_tokens(run):
        out["boundary_counter"] = f"the verbatim tail is {lim.tail if lim is not None else 'not a budget'}: no walk counts tokens"
    elif run.billed:
        out["boundary_counter"] = "the boundary walk counts what the provider billed (log_counter billed)"
        if run.billed_hidden_prefix:
            out["hidden_prefix_tokens"] = "the hidden prefix is the log's own, what its first call read (log_counter billed)"
    return out


def _briefing_notes(run: Run) -> dict[str, str]:
    """The simulated briefer writes max(sim_min_chars, min(carried + fresh, target × sim_overshoot_ratio))
    (``briefing/simulated.py``), carrying the previous briefing by the bucket of previous / target (< 0.6, < 0.85,
    more: ``stagewise.core.budget_bucket``). So the target changes nothing between the value below which the ceiling
    would clip the longest briefing, and the nearest target at which a carried briefing changes bucket: that
    interval, when the current target is inside it."""
    from workbench.briefing.simulated import CARRY

    k = run.knobs
    landed = [c for c in _landed(run) if c.summarize]
    if run.briefer != "simulated" or not landed:
        return {}
    target = k.target_briefing_chars
    carrying = [c for c in landed if c.previous_chars and c.style != "regenerative"]
    raw = max((c.previous_chars * CARRY.get(c.bucket, 1.0) if c in carrying else 0.0)
              + (c.compact_history_chars if c.style == "regenerative" else c.new_material_chars) * k.sim_new_chars_ratio
              for c in landed)
    spec = KNOB_SPECS["target_briefing_chars"]
    low = raw / k.sim_overshoot_ratio if raw > k.sim_min_chars else float(spec.low or 0)
    edges = sorted({c.previous_chars / share for c in carrying for share in (0.6, 0.85)})
    low = max([low, *(e for e in edges if e <= target)])
    high = min([float(spec.high or math.inf), *(e for e in edges if e > target)])
    if not low < target < high:
        return {}
    if raw <= k.sim_min_chars and not carrying:
        why = (f"every briefing is the simulated briefer's floor, sim_min_chars {_n(k.sim_min_chars)} (what it writes "
               f"from the span is at most {_n(raw)} chars here); raise sim_new_chars_ratio for the target to matter")
    else:
        why = (f"no briefing reaches target × {k.sim_overshoot_ratio:g} (the longest would be {_n(raw)} chars)"
               + (", and every carried briefing keeps its budget hint" if carrying else ""))
    return {"target_briefing_chars": f"no effect between {_n(math.ceil(low))} and {_n(math.floor(high))} chars: {why}"}


# -- live ranges: where a knob's output varies -----------------------------------------------------


def _round2(x: float) -> float:
    return float(f"{x:.2g}") if x > 0 else 0.0


def _clip(name: str, lo: float, hi: float) -> tuple[float, float]:
    spec = KNOB_SPECS[name]
    low = float(spec.low if spec.low is not None else lo)
    high = float(spec.high if spec.high is not None else hi)
    lo, hi = min(max(lo, low), high), min(max(hi, low), high)
    return (lo, hi) if lo < hi else (low, high)


def _after_tokens(run: Run) -> float | None:
    """What a landed compaction leaves (the median tokens after): a trigger below it compacts at once."""
    after = sorted(c.tokens_after for c in _landed(run) if c.tokens_after is not None)
    return float(after[len(after) // 2]) if after else None


def _trigger_span(run: Run) -> tuple[float, float] | None:
    """(low, high) trigger tokens between immediate re-compaction and never firing."""
    lim = run.limits
    peak = float(run.metrics.baseline_peak_tokens)
    if lim is None or peak <= 0:
        return None
    hi = peak
    reserve = lim.trigger.term("reserve")
    if reserve is not None:
        hi = min(hi, reserve.tokens)
    after = _after_tokens(run)
    lo = after * 1.2 if after is not None else hi / 4
    if lim.kept is not None and lim.kept.tokens is not None:
        lo = max(lo, min(lim.kept.tokens, hi / 2))
    return (lo, hi) if lo < hi else (hi / 4, hi)


def _kept_span(run: Run) -> tuple[float, float] | None:
    """(low, high) kept-budget tokens where the budget, not the floor or the trigger, decides the boundary."""
    lim = run.limits
    if lim is None or lim.kept is None:
        return None
    landed = _landed(run)
    trig = lim.trigger.tokens or float(run.knobs.context_window_tokens)
    floors = [c.floor_tokens for c in landed if c.floor_tokens]
    hi = trig * 0.8  # a budget near the trigger re-triggers at once
    if lim.floor_messages > 1 and floors:  # above what the floor messages hold, the floor decides
        hi = min(hi, max(floors) * 1.2)
    lo = hi / 10
    return lo, hi


def live_range(run: Run, name: str) -> tuple[float, float]:
    """The range of ``name`` over which this run's output varies (the sweep's and tune's default).

    Headline knobs come from the run's limits: the trigger between what a compaction leaves and the
    history's peak (and below the other trigger term); the kept budget below what the floor messages
    hold. Any other knob: half to one and a half times its value. Always inside the knob's range.
    """
    k = run.knobs
    window = k.context_window_tokens
    value = float(getattr(k, name))
    span: tuple[float, float] | None = None
    lim = run.limits
    if name == "trigger_reserve_tokens" and lim is not None and lim.trigger.term("reserve") is not None:
        peak = float(run.metrics.baseline_peak_tokens)
        after = _after_tokens(run)
        lowest = after * 1.2 if after is not None else peak / 4  # the lowest trigger before compacting at once
        span = (max(0.0, window - peak), max(0.0, window - lowest))  # a reserve below window − peak never fires
    elif name in ("trigger_ratio", "trigger_hard_cap_tokens") and lim is not None:
        t = _trigger_span(run)
        if t is not None:
            lo, hi = t
            if name == "trigger_ratio":
                cap = lim.trigger.term("cap")
                hi = min(hi, cap.tokens, window) if cap is not None else min(hi, window)
                span = (min(lo, hi / 2) / window, hi / window)
            else:
                ratio = lim.trigger.term("ratio")
                span = (lo, min(hi, ratio.tokens) if ratio is not None else hi)
    elif name in ("kept_budget_ratio", "kept_budget_cap_tokens"):
        t = _kept_span(run)
        if t is not None and lim is not None and lim.kept is not None:
            lo, hi = t
            if name == "kept_budget_ratio":
                cap = lim.kept.term("cap")
                hi = min(hi, cap.tokens) if cap is not None else hi
                span = (lo / window, hi / window)
            else:
                ratio = lim.kept.term("ratio")
                span = (lo, min(hi, ratio.tokens) if ratio is not None else hi)
    elif name == "min_kept_messages" and k.strategy == "stagewise":
        fits = [c.fit_messages for c in _landed(run) if c.fit_messages is not None]
        span = (MIN_FLOOR, max(max(fits, default=MIN_FLOOR) + 1, MIN_FLOOR * 2))
    if span is None or not span[0] < span[1]:
        lo, hi = value * 0.5, value * 1.5
        if hi <= lo:  # the knob is at zero or off: start from the bottom of its range
            spec = KNOB_SPECS[name]
            low, high = float(spec.low or 0), float(spec.high or 1)
            lo, hi = low, low + (high - low) * (0.5 if high - low <= 2 else 0.01)
        span = (lo, hi)
    lo, hi = _clip(name, _round2(span[0]), _round2(span[1]))
    if lo == hi:
        hi = math.nextafter(hi, math.inf)
    return lo, hi


def live_ranges(runs: list[Run], names: list[str]) -> dict[str, tuple[float, float]]:
    """Each knob's live range over several runs: the union over the runs that compress (all, if none does)."""
    pool = [r for r in runs if _landed(r)] or runs
    out: dict[str, tuple[float, float]] = {}
    for name in names:
        spans = [live_range(r, name) for r in pool]
        out[name] = (min(s[0] for s in spans), max(s[1] for s in spans))
    return out



# The sweep's default axes, in order of preference: what fires a compaction, what stays verbatim, then the rest.
_AXIS_PREFERENCE = ("trigger_ratio", "trigger_hard_cap_tokens", "trigger_reserve_tokens", "kept_budget_ratio",
                    "kept_budget_cap_tokens", "keep_recent_share", "keep_recent_messages", "keep_recent_turns",
                    "target_briefing_chars", "sim_min_chars", "min_kept_messages", "soft_trigger_ratio",
                    "overhead_chars_per_message")


def default_axes(run: Run) -> tuple[str, str]:
    """Two knobs for a sweep of this run: ones its strategy reads, the trigger's and the kept budget's first.

    The trigger knob is the one its policy reads (a ratio, else the reserve or the hard cap that is a term of its
    trigger: Claude Code's trigger is window − reserve, with no ratio); the second is the kept budget's when the
    tail is a token budget, else the next knob in ``_AXIS_PREFERENCE`` that the strategy reads (under
    ``summarize`` the kept fraction is read by nothing: a sweep of it gives identical rows). A size model that takes
    nothing from the new material (``sim_new_chars_ratio`` 0, Claude Code's preset) writes ``sim_min_chars`` every
    time, so that knob, not the target, sets the briefing's size.
    """
    lim = run.limits
    unused = set(unread_knobs(run))  # one home for what a run does not read (the sidebar folds the same knobs)
    if lim is not None and lim.trigger.terms:
        term_knobs = [t.knobs[0] for t in lim.trigger.terms if t.knobs]
        trigger_ratio_off = run.knobs.trigger_ratio < 0
        unused |= {"trigger_ratio"} if trigger_ratio_off or "trigger_ratio" not in term_knobs else set()
        unused |= {n for n in ("trigger_hard_cap_tokens", "trigger_reserve_tokens") if n not in term_knobs}
    if lim is not None and lim.kept is None:
        unused |= {"kept_budget_ratio", "kept_budget_cap_tokens"}
    if run.knobs.sim_new_chars_ratio == 0:  # the size model's briefing is its floor: the target only caps it
        unused.add("target_briefing_chars")
    read = [n for n in _AXIS_PREFERENCE if n not in unused and _sweepable(n)]
    triggers = [n for n in read if n.startswith("trigger_")]
    x = triggers[0] if triggers else (read[0] if read else "trigger_ratio")
    y = next((n for n in read if n != x and not n.startswith("trigger_")), None)
    y = y or next((n for n in read if n != x), "target_briefing_chars" if x != "target_briefing_chars" else "min_kept_messages")
    return x, y


def _sweepable(name: str) -> bool:
    spec = KNOB_SPECS.get(name)
    return spec is not None and spec.low is not None and spec.high is not None
