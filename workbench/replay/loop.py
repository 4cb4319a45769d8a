"""The replay: walk a recorded conversation and keep the context an agent would have had.

The loop does not step message by message. From each check it asks where the next decision falls
(the first check above one of the policy's watches, a manual check, or an overflow when reactive
compaction is on), writes the timeline rows up to it under the state in effect, and lets the policy
decide there: skip, elide tool outputs (the same check is then looked at again), or start a
compaction, which lands ``latency_steps`` checks later (at once when manual or reactive) and changes
the state. Work is O(events × log n) plus O(n) to write the timeline.

The pieces: ``context`` (what is in context and its prefix sums), ``guards`` (cooldown, manual,
reactive, thrash, ineffective), ``compaction`` (the briefer's request and the compression record),
``accounting`` (calls and dollars, derived after the loop), ``timeline``, ``assemble`` (the walk's record
into the Run) and ``results`` (the Run).
Messages pinned by the ``pin_*`` knobs are never folded: they stay in context (counted) and out of
the briefer's input. A compaction in flight blocks reactive ones until it lands.

Counterfactual: the replay assumes the agent would have sent the same messages after a compaction.
That is what makes whole-conversation tuning possible; every face says so next to its results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from workbench.briefing.base import Briefer, BriefRecord
from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.billed import billed_counts, system_tokens, uses_billed
from workbench.counting.checks import check_indices
from workbench.counting.counters import check_points, elidable_tokens, trigger_lag, trigger_tokens, walk_tokens
from workbench.counting.prices import Prices, get_prices
from workbench.counting.restore import RunningRestore
from workbench.counting.tokens import CountCache, HistoryCounts
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import Knobs, counting_view
from workbench.policies import get_policy
from workbench.policies.base import (
    Compact,
    Elide,
    HistoryIndex,
    Policy,
    ReplayState,
    Skip,
    Trigger,
    history_index,
    pin_mask,
)
from workbench.replay.accounting import CallLog
from workbench.replay.assemble import assemble_run
from workbench.replay.compaction import InFlight, Landing, briefing_request, compression_record
from workbench.replay.context import ContextSums, InContext
from workbench.replay.guards import Guards
from workbench.replay.results import Compression, Event, EventKind, Metrics, Run
from workbench.replay.timeline import TimelineRows

DEFAULT_CACHE = CountCache()


def simulate(
    history: History,
    knobs: Knobs | None = None,
    briefer: Briefer | None = None,
    *,
    policy: Policy | None = None,
    cache: CountCache | None = None,
    prices: Prices | None = None,
    briefer_prices: Prices | None = None,
    on_compression: Callable[[int, Compression], None] | None = None,
) -> Run:
    """Replay ``history`` under ``knobs``; briefings come from ``briefer`` (the size model by default)."""
    return prepared(_Replay, history, knobs, briefer, policy=policy, cache=cache, prices=prices,
                    briefer_prices=briefer_prices, on_compression=on_compression).run()


def prepared(
    replay_type: type[_Replay], history: History, knobs: Knobs | None = None, briefer: Briefer | None = None, *,
    policy: Policy | None = None, cache: CountCache | None = None, prices: Prices | None = None,
    briefer_prices: Prices | None = None, on_compression: Callable[[int, Compression], None] | None = None,
) -> _Replay:
    """A replay of ``replay_type`` (``_Replay`` or a subclass that stops early) set up as ``simulate`` sets it up:
    default knobs and briefer, the knobs' policy, earlier briefings dropped, the history's counts."""
    knobs = knobs or Knobs()
    briefer = briefer or SimulatedBriefer()
    policy = policy or get_policy(knobs)
    if not knobs.keep_existing_briefings:
        history = history.without_briefings()
    counts = (cache or DEFAULT_CACHE).counts_for(history)
    return replay_type(history, knobs, briefer, policy, counts, prices, briefer_prices, on_compression)


def _billed_of(counts: HistoryCounts, knobs: Knobs) -> Callable[[], np.ndarray | None]:
    """The log's billed tokens per message where the knobs count it as billed (what its reads were billed), asked
    for at a replay's first compaction. A function of the counts and knobs, not a method of the replay: a replay
    whose restore held its own bound method would be a reference cycle, kept (with its window's messages) until
    the cyclic GC runs, which ``workbench reality`` pauses."""

    def billed() -> np.ndarray | None:
        return billed_counts(counts, knobs).tokens if uses_billed(counts.history, knobs) else None

    return billed


class _Replay:
    """One replay's working state; ``run`` returns the frozen Run.

    ``sums_type`` is the context arithmetic; the benchmarks swap in a naive one to measure it.
    """

    sums_type: type[ContextSums] = ContextSums

    def __init__(
        self,
        history: History,
        knobs: Knobs,
        briefer: Briefer,
        policy: Policy,
        counts: HistoryCounts,
        prices: Prices | None,
        briefer_prices: Prices | None,
        on_compression: Callable[[int, Compression], None] | None,
    ) -> None:
        self.history, self.knobs, self.briefer, self.policy, self.counts = history, knobs, briefer, policy, counts
        self.on_compression = on_compression
        self.prices, self.briefer_prices = prices, briefer_prices  # looked up for the Run (first_compaction has none)
        # What the trigger measures, and what the boundary walk measures (they may differ: a feature).
        counting = counting_view(knobs)  # made once: each count below would make its own (a frozen copy of 23 knobs)
        self.counter_tokens = trigger_tokens(counts, counting)
        self._walk: np.ndarray | None = None  # the boundary walk's tokens, counted when a policy first asks
        self.messages = len(history.messages)
        self.checks = check_points(counts, knobs.check_point)
        self.check_count = len(self.checks)
        # The agent's own measure where it differs from the context held (a log counted as billed).
        self.sums = self.sums_type(self.counter_tokens, self.checks, trigger_lag(counts, counting))
        system = system_tokens(counts, knobs)  # the hidden prefix: a log's own, when its bill is the counter
        self.state = InContext(system_tokens=system)
        self.timeline = TimelineRows(self.checks, system)
        self.guards = Guards.of(knobs)
        self.calls = CallLog()
        self.compressions: list[Compression] = []
        self.flight: InFlight | None = None
        self.skipped_checks = 0
        self.last_skip: str | None = None
        self.pin_mask = pin_mask(history, knobs, counts.derived, counts.cache if counts.cache.by_identity else None)
        self.knob_pinned = np.flatnonzero(self.pin_mask)  # messages the pin_* knobs pin
        self._elidable: np.ndarray | None = None
        self.limits = policy.limits()  # which terms bind: reported on the Run, never used to replay
        self.logged_prunes = _logged_prunes(history, self.checks)
        self.restore = RunningRestore(history.messages, knobs, cache=counts.cache, billed=_billed_of(counts, knobs))

    # -- what the policy sees ----------------------------------------------------------------
    def context_at(self, i: int) -> int:
        """Context through message i under the current state."""
        return self.state.base_tokens + self.sums.verbatim(self.state.boundary, i)

    def estimate_tokens(self) -> np.ndarray:
        """Per-message tokens of the boundary walk (``walk_tokens``), computed on first use."""
        if self._walk is None:
            self._walk = walk_tokens(self.counts, self.knobs)
        return self._walk

    def content_chars(self) -> np.ndarray:
        return self.counts.content_chars

    def layout(self) -> HistoryIndex:
        """The history's role index, kept with its counts (no content digest needed to find it)."""
        return history_index(self.history, self.counts.derived)

    def elidable(self) -> np.ndarray:
        """Tokens each message would free as a stub (computed on first use: most policies never ask)."""
        if self._elidable is None:
            self._elidable = elidable_tokens(self.counts, self.knobs)
        return self._elidable

    def view(self, k: int, context: int) -> ReplayState:
        """What the policy may look at, at check k (``context``: what it holds there; its context is the agent's
        own measure, ``measured``). Built once per decision: ``at`` moves it to the check the decision falls on."""
        st = self.state
        return ReplayState(
            history=self.history,
            knobs=self.knobs,
            check=k,
            index=int(self.checks[k]) if self.check_count else -1,
            context_tokens=self.measured(k, context),
            boundary=st.boundary,
            briefing_chars=st.briefing_chars,
            counter_tokens=self.counter_tokens,
            estimate_tokens_of=self.estimate_tokens,
            content_chars_of=self.content_chars,
            briefing_at=st.briefing_at,
            elided=frozenset(st.elided),
            pinned=frozenset(st.pinned),
            elided_savings=self.sums.savings,
            checks=self.checks,
            pin_mask=self.pin_mask,
            elidable_of=self.elidable,
            layout_of=self.layout,
        )

    def at(self, view: ReplayState, k: int, trigger: Trigger) -> ReplayState:
        """``view`` (nothing has changed since it was built) at check k, where ``trigger`` fired."""
        return replace(view, check=k, index=int(self.checks[k]),
                       context_tokens=self.measured(k, self.context_at(int(self.checks[k]))), trigger=trigger)

    def measured(self, k: int, context: int) -> int:
        """The agent's own measure at check k of the ``context`` held there: less the lag where its measure
        differs (``counting.counters.trigger_lag``: on a log counted as billed, its last bill and its estimate
        since), what its threshold compares."""
        return context - self.sums.measured_lag(k)

    # -- where the next decision falls ---------------------------------------------------------
    def first_above(self, start: int, tokens: float, strict: bool, end: int | None = None, *,
                    measured: bool = False) -> int:
        """The first check in [start, end) whose context is above ``tokens`` (>= if not strict); the
        number of checks if none. ``measured``: as the agent measures it (``measured``), not as held."""
        st = self.state
        end = self.check_count if end is None else end
        return self.sums.first_above(start, end, tokens, st.base_tokens, st.boundary, strict, measured)

    def next_decision(self, k: int, view: ReplayState) -> tuple[int, Trigger, float | None]:
        """(check, trigger, displayed threshold) of the next decision from check k on: the guards' schedule of the
        policy's watches (``Guards.schedule``), or the agent's own prune from its log when that comes first."""
        shown, watches = None, None
        if self.knobs.proactive_compaction:
            main = self.policy.watch_threshold(view)
            shown = main[0] if main is not None else None
            watches = tuple(self.policy.watches(view))
        slot = self.guards.schedule(k, watches, self.first_above, self.checks)
        if slot.held is not None:
            self.timeline.event(slot.held[0], EventKind.COOLDOWN_SKIP, slot.held[1])
        best, reason = slot.check, slot.trigger
        if self.logged_prunes and self.logged_prunes[0][0] < best:
            best, reason = max(k, self.logged_prunes[0][0]), Trigger.LOGGED_PRUNE
        return best, reason, shown

    # -- events --------------------------------------------------------------------------------
    def start(self, k: int, context: int, act: Compact, trigger: Trigger = Trigger.THRESHOLD) -> None:
        """Start a compaction at check k; it lands now if it is forced or ``latency_steps`` is 0."""
        st = self.state
        chain_index = st.landed + 1
        i = int(self.checks[k])
        if len(self.knob_pinned):
            knob_pins = self.knob_pinned[: int(np.searchsorted(self.knob_pinned, act.boundary))]
            act = replace(act, pinned=tuple(np.union1d(np.asarray(act.pinned, dtype=np.int64), knob_pins).tolist()))
        if self.guards.forced(trigger) and act.reason in (Trigger.THRESHOLD, ""):
            act = replace(act, reason=str(trigger))
        request = briefing_request(self.history, self.knobs, self.counts, st, act, chain_index)
        if act.summarize:
            record = self.briefer(request)
        else:
            record = BriefRecord(text=None, chars=0, tokens=0, model="none")
        flight = InFlight(
            action=act,
            chain_index=chain_index,
            check_started=k,
            index_started=i,
            land_check=self.guards.land_check(k, trigger),
            tokens_before=context,
            request=request,
            record=record,
            trigger=trigger,
        )
        self.timeline.event(
            k, EventKind.COMPRESSION_STARTED, f"#{chain_index} boundary {act.boundary} ({act.outcome or act.reason})"
        )
        if flight.land_check >= self.check_count:
            self.finish(flight, None)
            return
        self.flight = flight
        if flight.land_check == k:
            self.land(k)

    def land(self, k: int) -> None:
        """The compaction in flight lands at check k: it fails, is superseded, or changes the context."""
        flight = self.flight
        assert flight is not None, "land() without a compaction in flight"
        self.flight = None
        i = int(self.checks[k])
        st = self.state
        act, rec = flight.action, flight.record
        if rec.failed:
            self.timeline.event(k, EventKind.COMPRESSION_FAILED, rec.error or "all briefer attempts failed")
            self.guards.failed(k)
            self.finish(flight, "failed", k)
            return
        if act.boundary < st.boundary:
            # A later briefing already sits on a later message; prompt building uses the last one (§9).
            self.timeline.event(k, EventKind.COMPRESSION_SUPERSEDED, f"boundary {act.boundary} < current {st.boundary}")
            self.finish(flight, "superseded", k)
            return
        self.calls.sent(i, st, self.sums.elisions)
        self.calls.cache_reset()  # a new briefing changes everything after the system prompt
        context_before = self.context_at(i)
        old_boundary = st.boundary
        st.boundary = act.boundary
        # The policy names every pinned message (knob pins were merged in at the start); others are folded.
        pinned = np.asarray(act.pinned, dtype=np.int64)
        st.pinned = set(pinned[pinned < st.boundary].tolist())
        st.pinned_tokens = self.sums.in_context_tokens(st.pinned)
        if act.summarize:
            st.briefing_chars = rec.chars
            st.briefing_tokens = rec.tokens
            st.briefing_at[act.boundary] = rec.chars
            st.briefing_texts[act.boundary] = rec.text
        st.restored_tokens = self.restore.at(i)  # files sized by what their reads were billed
        st.landed += 1
        detail = f"#{flight.chain_index} folded {counted(act.boundary - old_boundary, 'message')}, briefing {rec.chars:,} chars"
        self.timeline.event(k, EventKind.COMPRESSION_LANDED, detail)
        context_after = self.context_at(i)
        freed = context_before - context_after
        ineffective, thrash, flags = self.guards.landed(k, freed, context_before)
        for kind, flag_detail in flags:
            self.timeline.event(k, kind, flag_detail)
        self.finish(flight, "landed", k, Landing(context_after, freed, ineffective, thrash))

    def finish(
        self, flight: InFlight, status: str | None, k: int | None = None, landing: Landing | None = None
    ) -> None:
        """Record ``flight`` as a Compression (``status`` None: still in flight at the end)."""
        comp = compression_record(flight, status, self.checks, k, landing, limits=self.limits,
                                  window=self.knobs.context_window_tokens)
        self.compressions.append(comp)
        if self.on_compression is not None:
            self.on_compression(len(self.compressions), comp)

    def elide(self, k: int, act: Elide) -> int:
        """Stub the tool outputs of ``act.indices`` at once; returns the tokens freed."""
        i = int(self.checks[k])
        st = self.state
        self.calls.sent(i, st, self.sums.elisions)
        fresh = [j for j in act.indices if j not in st.elided and 0 <= j < self.messages]
        if not fresh:
            return 0
        b = st.boundary
        self.calls.cache_kept(st.base_tokens + self.sums.between(b, max(min(fresh), b)))  # stubs change what follows
        saved = self.sums.stub(fresh, self.elidable())
        st.elided.update(fresh)
        st.pinned_tokens = self.sums.in_context_tokens(st.pinned)
        self.timeline.event(k, EventKind.ELIDE, f"{len(fresh)} tool outputs stubbed, {saved:,} tokens freed ({act.reason})")
        return saved

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> Run:
        k, m = 0, self.check_count
        while k < m:
            if self.flight is not None:  # nothing can start before it lands; the context just grows
                k_evt = max(k, self.flight.land_check)
                self.timeline.write(k, min(k_evt, m - 1), self.state, self.sums, None)
                if k_evt >= m:
                    break
                self.land(k_evt)
                k = k_evt + 1
                continue
            view = self.view(k, self.context_at(int(self.checks[k])))
            k_evt, trigger, shown = self.next_decision(k, view)
            self.timeline.write(k, min(k_evt, m - 1), self.state, self.sums, shown)
            if k_evt >= m:
                break
            i_evt = int(self.checks[k_evt])
            if trigger == Trigger.LOGGED_PRUNE:  # the agent cleared these outputs itself (its log says so): at their place
                _, indices = self.logged_prunes.pop(0)
                self.elide(k_evt, Elide(indices=indices, reason="the agent's own prune, from its log"))
                k = k_evt  # the same check is looked at again, as after any elision
                continue
            self.guards.taken(k_evt, trigger)
            actions = self.policy.decide(self.at(view, k_evt, trigger))
            acted = freed = started = False
            for act in actions:
                if isinstance(act, Skip):
                    self.skipped_checks += 1
                    if act.reason != self.last_skip:
                        self.timeline.event(k_evt, EventKind.SKIP, act.reason)
                        self.last_skip = act.reason
                elif isinstance(act, Elide):
                    if self.elide(k_evt, act) > 0:
                        acted = freed = True
                elif isinstance(act, Compact):
                    held = self.guards.admit(k_evt, trigger)
                    if held is not None:
                        self.timeline.event(k_evt, EventKind.COOLDOWN_SKIP, held)
                        break
                    if self.guards.forced(trigger):
                        self.timeline.event(
                            k_evt, EventKind(trigger), f"{trigger} compaction at {self.context_at(i_evt):,} tokens"
                        )
                    self.start(k_evt, self.measured(k_evt, self.context_at(i_evt)), act, trigger)
                    acted = started = True
                    break  # never two compressions at once
            if acted:
                self.last_skip = None
            # After an elision the same check is looked at again: the stubs may not have been enough.
            k = k_evt if freed and not started else k_evt + 1
        if self.flight is not None:
            self.finish(self.flight, None)
            self.flight = None
        self.calls.sent(self.messages - 1, self.state, self.sums.elisions)
        return self.result()

    def result(self) -> Run:
        return assemble_run(
            history=self.history, knobs=self.knobs, briefer=self.briefer, counts=self.counts, checks=self.checks,
            sums=self.sums, state=self.state, timeline=self.timeline, calls=self.calls,
            compressions=tuple(self.compressions), prices=self.prices or get_prices(self.knobs.model),
            briefer_prices=self.briefer_prices or get_prices(self.knobs.briefer_model),
            skipped_checks=self.skipped_checks, cooldown_skips=self.guards.cooldown_skips, limits=self.limits,
        )



def _logged_prunes(history: History, checks: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """(check, messages) of each prune the history's log records (OpenCode's cleared tool outputs), in order: the
    outputs are stubs from the last check before the first message logged after the prune."""
    log = history.log
    if log is None or not log.prunes or not len(checks):
        return []
    out = []
    for prune in sorted(log.prunes, key=lambda p: p.index):
        k = max(0, int(np.searchsorted(checks, prune.index, side="left")) - 1)
        indices = tuple(j for j in prune.messages if 0 <= j < len(history.messages))
        if indices:
            out.append((k, indices))
    return out


__all__ = ["Compression", "Event", "Metrics", "Run", "check_indices", "simulate"]
