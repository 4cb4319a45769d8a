"""The replay: walk a recorded conversation and keep the context an agent would have had.

Context at check k (message i) = system prompt + current briefing + pinned messages + every message
from the current boundary to i, minus tool outputs elided to stubs. Between two events (a compression
starting or landing, an elision) that number only grows, so the replay does not step message by
message: it keeps prefix sums of per-message tokens and finds the next check above the policy's
watch threshold with a binary search. Work is O(events × log n) plus O(n) to write the timeline.

Counterfactual: the replay assumes the agent would have sent the same messages after a compaction.
That is what makes whole-conversation tuning possible; every face says so next to its results.

Guards users ask for (spec/peers.md §3) live here because they need the loop: a cooldown after each
compaction (no proactive compaction for ``cooldown_checks``), reactive compaction when a check
overflows the window (a switch separate from proactive compaction; it lands at once), manual
compactions at chosen checks, and two report-only flags: ineffective compactions (freed less than
``min_savings_ratio`` of the context) and thrash (landed within ``thrash_window_checks`` of the
previous one). Each shows on the timeline's events column and in Metrics. Messages pinned by the
``pin_*`` knobs are never folded: they stay in context (counted) and out of the briefer's input.
A compaction in flight (``latency_steps`` > 0) blocks reactive ones until it lands.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from workbench.briefing.base import Briefer, BriefRecord, BriefRequest
from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.prices import Prices, get_prices
from workbench.counting.tokens import CountCache, HistoryCounts
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.policies import get_policy
from workbench.policies.base import Compact, Elide, Policy, ReplayState, Skip, Watch, pin_mask
from workbench.replay.results import Compression, Event, Metrics, Run
from workbench.stagewise.core import budget_bucket

PREVIOUS_OPEN = "<previous-chat-history>"
PREVIOUS_CLOSE = "</previous-chat-history>"
DEFAULT_CACHE = CountCache()


def check_indices(history: History, check_point: str) -> np.ndarray:
    """Message indices where the trigger is checked.

    "message": after every message. "step": after an agent step, i.e. after an assistant message and
    the tool results that follow it (where stagewise's handlePostStep runs), and after the last message.
    """
    msgs = history.messages
    n = len(msgs)
    if check_point == "message" or n == 0:
        return np.arange(n, dtype=np.int64)
    roles = [m.role for m in msgs]
    out = [
        i
        for i in range(n)
        if i == n - 1 or (roles[i] in ("assistant", "tool") and roles[i + 1] in ("user", "assistant", "system"))
    ]
    return np.asarray(out, dtype=np.int64)


@dataclass
class _Flight:
    action: Compact
    chain_index: int
    check_started: int
    index_started: int
    land_check: int
    tokens_before: int
    request: BriefRequest
    record: BriefRecord
    trigger: str = "threshold"


@dataclass
class _State:
    boundary: int = 0
    briefing_chars: int = 0
    briefing_tokens: int = 0
    briefing_text: str | None = None
    pinned: set[int] = field(default_factory=set)
    pinned_tokens: int = 0
    briefing_at: dict[int, int] = field(default_factory=dict)
    briefing_texts: dict[int, str | None] = field(default_factory=dict)
    elided: set[int] = field(default_factory=set)
    landed: int = 0
    last_compaction_check: int | None = None


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
    knobs = knobs or Knobs()
    briefer = briefer or SimulatedBriefer()
    policy = policy or get_policy(knobs)
    if not knobs.keep_existing_briefings:
        history = history.without_briefings()
    counts = (cache or DEFAULT_CACHE).counts_for(history)
    return _Replay(history, knobs, briefer, policy, counts, prices, briefer_prices, on_compression).run()


def _derived(counts: HistoryCounts, key: Any, make: Callable[[], np.ndarray]) -> np.ndarray:
    """A per-history array kept with the history's counts (read-only: every replay shares it)."""
    value = counts.derived.get(key)
    if value is None:
        value = make()
        value.flags.writeable = False
        counts.derived[key] = value
    return value


def _roles(counts: HistoryCounts) -> np.ndarray:
    """Each message's role, as an array of str objects."""
    return _derived(counts, "roles", lambda: np.array([m.role for m in counts.history.messages], dtype=object))


_ELIDABLE: weakref.WeakKeyDictionary[HistoryCounts, dict[tuple[str, int, float], np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def elidable_tokens(counts: HistoryCounts, knobs: Knobs, counter_tokens: np.ndarray) -> np.ndarray:
    """Tokens each message frees when its tool outputs become stubs, by the trigger counter (cached)."""
    from workbench.history.elide import has_tool_output

    key = (knobs.trigger_counter, knobs.overhead_chars_per_message, knobs.chars_per_token)
    table = _ELIDABLE.setdefault(counts, {})
    out = table.get(key)
    if out is None:
        out = np.zeros(len(counts.history.messages), dtype=np.int64)
        for j, msg in enumerate(counts.history.messages):
            if has_tool_output(msg):
                out[j] = max(0, int(counter_tokens[j]) - counts.stub_tokens(j, knobs))
        out.flags.writeable = False
        table[key] = out
    return out


class _Replay:
    """One replay's mutable working state; ``run`` returns the frozen Run."""

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
        self.h, self.k, self.briefer, self.policy, self.counts = history, knobs, briefer, policy, counts
        self.on_compression = on_compression
        self.prices = prices or get_prices(knobs.model)
        self.briefer_prices = briefer_prices or get_prices(knobs.briefer_model)
        kw = {"overhead_chars": knobs.overhead_chars_per_message, "chars_per_token": knobs.chars_per_token}
        self.c = counts.tokens(knobs.trigger_counter, **kw)
        self.e = counts.tokens(knobs.boundary_counter, **kw)
        self.n = len(history.messages)
        self.checks = _derived(counts, ("checks", knobs.check_point), lambda: check_indices(history, knobs.check_point))
        self.m = len(self.checks)
        self.P = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self.c, out=self.P[1:])
        self.S = np.zeros(self.n + 1, dtype=np.int64)  # prefix sums of elision savings
        self.savings = np.zeros(self.n, dtype=np.int64)
        self.Q = self.P.copy()  # P - S: what is really in context
        self.Qc = self.Q[self.checks + 1] if self.m else np.zeros(0, dtype=np.int64)
        self.sys = knobs.system_prompt_tokens
        self.st = _State()
        self.t_brief = np.zeros(self.m, dtype=np.int64)
        self.t_pinned = np.zeros(self.m, dtype=np.int64)
        self.t_verb = np.zeros(self.m, dtype=np.int64)
        self.t_saved = np.zeros(self.m, dtype=np.int64)
        self.t_boundary = np.zeros(self.m, dtype=np.int64)
        self.t_thr = np.full(self.m, np.nan)
        self.t_events: dict[int, list[str]] = {}
        self.events: list[Event] = []
        self.compressions: list[Compression] = []
        self.skips = 0
        self.last_skip: str | None = None
        self.elisions = 0
        self.assistant_idx = _derived(counts, "assistant_idx", lambda: np.flatnonzero(_roles(counts) == "assistant"))
        self.seg_from = -1  # state in effect applies to messages after this index
        self.calls_in = 0
        self.calls_out = 0
        self.calls = 0
        self.cache_read = 0
        self.cache_write = 0
        self.cost = 0.0
        self.cost_cached = 0.0
        self.pin_mask = pin_mask(history, knobs)
        self.pin_idx = np.flatnonzero(self.pin_mask)
        self._elid: np.ndarray | None = None
        self.manual = list(knobs.manual_checks)
        self.cool_until = 0  # first check where a proactive compaction may start again
        self.last_land: int | None = None
        self.cooldown_skips = 0
        self.cache_keep: int | None = None  # prompt-cache prefix an elision left intact, until the next call

    # -- context arithmetic ------------------------------------------------------------------
    def _base(self) -> int:
        return self.sys + self.st.briefing_tokens + self.st.pinned_tokens

    def _context_at(self, i: int) -> int:
        """Context through message i under the current state."""
        b = self.st.boundary
        return self._base() + int(self.Q[i + 1] - self.Q[b])

    def _fill(self, k0: int, k1: int, threshold: float | None) -> None:
        """Write timeline rows for checks k0..k1 (inclusive) under the current state."""
        if k1 < k0:
            return
        b = self.st.boundary
        idx = self.checks[k0 : k1 + 1]
        self.t_brief[k0 : k1 + 1] = self.st.briefing_tokens
        self.t_pinned[k0 : k1 + 1] = self.st.pinned_tokens
        self.t_verb[k0 : k1 + 1] = self.Q[idx + 1] - self.Q[b]
        self.t_saved[k0 : k1 + 1] = self.S[idx + 1] - self.S[b]
        self.t_boundary[k0 : k1 + 1] = b
        if threshold is not None:
            self.t_thr[k0 : k1 + 1] = threshold

    def _close_calls(self, upto: int) -> None:
        """Account the agent's LLM calls for assistant messages in (seg_from, upto] under the current state."""
        lo, hi = self.seg_from, upto
        if hi <= lo:
            return
        a = self.assistant_idx
        sel = a[np.searchsorted(a, lo, side="right") : np.searchsorted(a, hi, side="right")]
        self.seg_from = hi
        if len(sel) == 0:
            return
        b = self.st.boundary
        base = self._base()
        inputs = base + (self.Q[sel] - self.Q[b])
        outputs = self.c[sel] - self.savings[sel]
        reads = np.empty_like(inputs)
        # After an event the cached prefix is the system prompt, or what an elision left unchanged before it.
        reads[0] = min(self.sys if self.cache_keep is None else self.cache_keep, int(inputs[0]))
        self.cache_keep = None
        if len(sel) > 1:
            reads[1:] = base + (self.Q[sel[:-1] + 1] - self.Q[b])
        reads = np.minimum(reads, inputs)
        writes = inputs - reads
        tin, tout = int(inputs.sum()), int(outputs.sum())
        tr, tw = int(reads.sum()), int(writes.sum())
        p = self.prices
        self.calls += len(sel)
        self.calls_in += tin
        self.calls_out += tout
        self.cache_read += tr
        self.cache_write += tw
        self.cost += tin * p.input_per_token + tout * p.output_per_token
        read_price = p.cache_read_per_token if p.cache_read_per_token is not None else p.input_per_token
        write_price = p.cache_write_per_token if p.cache_write_per_token is not None else p.input_per_token
        self.cost_cached += tr * read_price + tw * write_price + tout * p.output_per_token

    def _event(self, k: int, kind: str, detail: str = "") -> None:
        i = int(self.checks[k])
        self.events.append(Event(check=k, index=i, kind=kind, detail=detail))
        self.t_events.setdefault(k, []).append(kind)

    def _elidable(self) -> np.ndarray:
        if self._elid is None:
            self._elid = elidable_tokens(self.counts, self.k, self.c)
        return self._elid

    def _state_view(self, k: int, ctx: int, trigger: str = "threshold") -> ReplayState:
        st = self.st
        return ReplayState(
            history=self.h,
            knobs=self.k,
            check=k,
            index=int(self.checks[k]) if self.m else -1,
            context_tokens=ctx,
            boundary=st.boundary,
            briefing_chars=st.briefing_chars,
            briefing_tokens=st.briefing_tokens,
            compressions=st.landed,
            last_compaction_check=st.last_compaction_check,
            counter_tokens=self.c,
            estimate_tokens=self.e,
            content_chars=self.counts.content_chars,
            briefing_at=st.briefing_at,
            elided=frozenset(st.elided),
            pinned=frozenset(st.pinned),
            elided_savings=self.savings,
            overflowed=ctx > self.k.context_window_tokens,
            trigger=trigger,
            checks=self.checks,
            pin_mask=self.pin_mask,
            elidable_of=self._elidable,
        )

    # -- compressions ------------------------------------------------------------------------
    def _chunks(self, lo: int, hi: int, skip: frozenset[int] = frozenset()) -> list[str]:
        chunks = (self.counts.serialized(j) for j in range(lo, hi) if j not in skip)
        return [s for s in chunks if s is not None]

    def _chunk_chars(self, lo: int, hi: int, skip: frozenset[int] = frozenset()) -> tuple[int, int]:
        """(sum of chunk UTF-16 lengths, number of chunks) for messages [lo, hi), pinned ones skipped."""
        total, count = self.counts.serialized_span(lo, hi)
        for j in skip:
            if lo <= j < hi and (length := self.counts.serialized_chars(j)) >= 0:
                total -= length
                count -= 1
        return total, count

    def _request(self, act: Compact, chain_index: int) -> BriefRequest:
        st, k = self.st, self.k
        boundary = act.boundary
        # stagewise §7: the last truthy briefing inside messagesToCompact, where the serializer stops.
        # Landed boundaries never go back (_land supersedes those that would), so briefing_at's keys
        # ascend in insertion order and the first match from the end is the largest.
        prev_idx = next((j for j, ch in reversed(st.briefing_at.items()) if j < boundary and ch > 0), None)
        if act.regenerate or prev_idx is None:
            start, prev_chars, prev_text = 0, 0, None
        else:
            start, prev_chars, prev_text = prev_idx, st.briefing_at[prev_idx], st.briefing_texts.get(prev_idx)
        folded_from = min(st.boundary, boundary)
        # Pinned messages stay in context verbatim, so the briefer never reads them (nor do earlier ones).
        skip = frozenset(act.pinned) | frozenset(st.pinned)
        new_chars, new_count = self._chunk_chars(folded_from, boundary, skip)
        body_chars, body_count = self._chunk_chars(start, boundary, skip)
        pieces = body_count + (1 if prev_chars else 0)
        wrapped = len(PREVIOUS_OPEN) + prev_chars + len(PREVIOUS_CLOSE) if prev_chars else 0
        compact_chars = body_chars + wrapped + max(0, pieces - 1)
        new_material = new_chars + max(0, new_count - 1)
        cap_chars = math.floor(k.briefer_input_cap_tokens * k.chars_per_token) if k.briefer_input_cap_tokens else 0
        if cap_chars:  # LangChain trim_tokens_to_summarize: only the newest part of the span is read
            compact_chars, new_material = min(compact_chars, cap_chars), min(new_material, cap_chars)
        ratio, percent, bucket = budget_bucket(0 if act.regenerate else prev_chars, k.target_briefing_chars)
        h = self.h
        read_from = 0 if act.regenerate else folded_from  # a regenerating briefer re-reads the raw history

        def build() -> str:
            chunks = self._chunks(start, boundary, skip)
            if prev_chars:
                chunks.insert(0, PREVIOUS_OPEN + (prev_text or "") + PREVIOUS_CLOSE)
            text = "\n".join(chunks)
            return text[-cap_chars:] if cap_chars else text

        return BriefRequest(
            chain_index=chain_index,
            folded=tuple(m for j, m in enumerate(h.messages[read_from:boundary], read_from) if j not in skip)
            if skip
            else h.messages[read_from:boundary],
            folded_from=folded_from,
            boundary=boundary,
            previous_briefing=None if act.regenerate else prev_text,
            previous_chars=0 if act.regenerate else prev_chars,
            new_material_chars=new_material,
            compact_history_chars=compact_chars,
            target_chars=k.target_briefing_chars,
            bucket=bucket,
            ratio=ratio,
            percent=percent,
            knobs=k,
            sections=act.sections,
            regenerate=act.regenerate,
            opaque=act.opaque,
            compact_history_fn=build,
        )

    def _start(self, k: int, ctx: int, act: Compact, trigger: str = "threshold") -> None:
        st = self.st
        chain_index = st.landed + 1
        i = int(self.checks[k])
        if len(self.pin_idx):
            knob_pins = self.pin_idx[: int(np.searchsorted(self.pin_idx, act.boundary))]
            act = replace(act, pinned=tuple(sorted(set(act.pinned) | {int(j) for j in knob_pins})))
        if trigger in ("manual", "reactive") and act.reason in ("threshold", ""):
            act = replace(act, reason=trigger)
        immediate = trigger in ("manual", "reactive")  # the user waits; an overflowed call cannot proceed
        request = self._request(act, chain_index)
        if act.summarize:
            record = self.briefer(request)
        else:
            record = BriefRecord(text=None, chars=0, tokens=0, model="none")
        flight = _Flight(
            action=act,
            chain_index=chain_index,
            check_started=k,
            index_started=i,
            land_check=k if immediate else k + self.k.latency_steps,
            tokens_before=ctx,
            request=request,
            record=record,
            trigger=trigger,
        )
        self._event(k, "compression-started", f"#{chain_index} boundary {act.boundary} ({act.outcome or act.reason})")
        if flight.land_check >= self.m:
            self._finish(flight, None)
            return
        self.flight = flight
        if flight.land_check == k:
            self._land(k)

    def _land(self, k: int) -> None:
        flight = self.flight
        self.flight = None
        i = int(self.checks[k])
        st = self.st
        act, rec = flight.action, flight.record
        if rec.failed:
            self._event(k, "compression-failed", rec.error or "all briefer attempts failed")
            self.cool_until = k + 1 + self.k.cooldown_checks
            self._finish(flight, "failed", k)
            return
        if act.boundary < st.boundary:
            # A later briefing already sits on a later message; prompt building uses the last one (§9).
            self._event(k, "compression-superseded", f"boundary {act.boundary} < current {st.boundary}")
            self._finish(flight, "superseded", k)
            return
        self._close_calls(i)
        self.cache_keep = None  # a new briefing changes everything after the system prompt
        ctx_old = self._context_at(i)
        old_boundary = st.boundary
        st.boundary = act.boundary
        # The policy names every pinned message (knob pins were merged in at the start); others are folded.
        st.pinned = {j for j in act.pinned if j < st.boundary}
        st.pinned_tokens = int(sum(int(self.c[j] - self.savings[j]) for j in st.pinned))
        if act.summarize:
            st.briefing_chars = rec.chars
            st.briefing_tokens = rec.tokens
            st.briefing_text = rec.text
            st.briefing_at[act.boundary] = rec.chars
            st.briefing_texts[act.boundary] = rec.text
        st.landed += 1
        st.last_compaction_check = k
        detail = f"#{flight.chain_index} folded {act.boundary - old_boundary} messages, briefing {rec.chars:,} chars"
        self._event(k, "compression-landed", detail)
        freed = ctx_old - self._context_at(i)
        ineffective = freed < self.k.min_savings_ratio * ctx_old
        if ineffective:
            self._event(k, "ineffective", f"freed {freed:,} of {ctx_old:,} tokens (< {self.k.min_savings_ratio:.0%})")
        gap = None if self.last_land is None else k - self.last_land
        thrash = gap is not None and self.k.thrash_window_checks > 0 and gap <= self.k.thrash_window_checks
        if thrash:
            self._event(k, "thrash", f"{gap} checks after the previous compaction")
        self.last_land = k
        self.cool_until = k + 1 + self.k.cooldown_checks
        self._finish(flight, "landed", k, freed=freed, ineffective=ineffective, thrash=thrash)

    def _finish(
        self,
        flight: _Flight,
        status: str | None,
        k: int | None = None,
        *,
        freed: int | None = None,
        ineffective: bool = False,
        thrash: bool = False,
    ) -> None:
        act, rec, req = flight.action, flight.record, flight.request
        landed = status == "landed"
        comp = Compression(
            chain_index=flight.chain_index,
            status=status or "in-flight",
            check_started=flight.check_started,
            index_started=flight.index_started,
            check_landed=k,
            index_landed=int(self.checks[k]) if k is not None else None,
            boundary=act.boundary,
            folded_from=req.folded_from,
            messages_folded=max(0, act.boundary - req.folded_from),
            kept=flight.index_started + 1 - act.boundary,
            kept_tokens=act.kept_tokens,
            outcome=act.outcome,
            reason=act.reason,
            summarize=act.summarize,
            tokens_before=flight.tokens_before,
            tokens_after=self._context_at(int(self.checks[k])) if landed and k is not None else None,
            previous_chars=req.previous_chars,
            bucket=req.bucket,
            ratio=req.ratio,
            percent=req.percent,
            new_material_chars=req.new_material_chars,
            compact_history_chars=req.compact_history_chars,
            briefing_chars=rec.chars,
            briefing_tokens=rec.tokens,
            record=rec,
            trigger=flight.trigger,
            freed_tokens=freed,
            ineffective=ineffective,
            thrash=thrash,
            pinned=act.pinned,
            style=_style(act),
        )
        self.compressions.append(comp)
        if self.on_compression is not None:
            self.on_compression(len(self.compressions), comp)

    # -- elision -----------------------------------------------------------------------------
    def _elide(self, k: int, act: Elide) -> int:
        """Stub the tool outputs of ``act.indices`` at once; returns the tokens freed."""
        i = int(self.checks[k])
        self._close_calls(i)
        fresh = [j for j in act.indices if j not in self.st.elided and 0 <= j < self.n]
        if not fresh:
            return 0
        saved = 0
        freeable = self._elidable()
        b = self.st.boundary
        kept_prefix = self._base() + int(self.Q[max(min(fresh), b)] - self.Q[b])  # stubs change what follows
        self.cache_keep = kept_prefix if self.cache_keep is None else min(self.cache_keep, kept_prefix)
        for j in fresh:
            s = int(freeable[j])
            self.savings[j] = s
            saved += s
            self.st.elided.add(j)
        np.cumsum(self.savings, out=self.S[1:])
        self.Q = self.P - self.S
        self.Qc = self.Q[self.checks + 1]
        self.st.pinned_tokens = int(sum(int(self.c[j] - self.savings[j]) for j in self.st.pinned))
        self.elisions += 1
        self._event(k, "elide", f"{len(fresh)} tool outputs stubbed, {saved:,} tokens freed ({act.reason})")
        return saved

    # -- where the next decision falls ---------------------------------------------------------
    def _first_above(self, start: int, tokens: float, strict: bool, end: int | None = None) -> int:
        """The first check in [start, end) whose context is above ``tokens`` (>= if not strict); m if none."""
        end = self.m if end is None else min(end, self.m)
        if start >= end:
            return self.m
        if tokens == -math.inf:
            return start
        target = tokens - self._base() + float(self.Q[self.st.boundary])
        kk = start + int(np.searchsorted(self.Qc[start:end], target, side="right" if strict else "left"))
        return kk if kk < end else self.m

    def _next_event(self, k: int, view: ReplayState) -> tuple[int, str, float | None]:
        """(check, trigger, displayed threshold) of the next decision from check k on.

        Ties go to a manual check first, then the policy's watches in order, then reactive compaction.
        Proactive watches wait out the cooldown; the checks they would have fired at are counted.
        """
        kn = self.k
        best, reason, shown = self.m, "threshold", None
        if self.manual:
            best, reason = max(k, self.manual[0]), "manual"
        if kn.proactive_compaction:
            main = self.policy.watch_threshold(view)
            shown = main[0] if main is not None else None
            more = getattr(self.policy, "watches", None)
            if more is not None:
                watches = tuple(more(view))
            else:
                watches = () if main is None else (Watch(tokens=main[0], strict=main[1]),)
            held = self.m
            for w in watches:
                start = max(k, int(np.searchsorted(self.checks, w.from_index, side="left")))
                if w.cooldown and start < self.cool_until:
                    held = min(held, self._first_above(start, w.tokens, w.strict, self.cool_until))
                    start = self.cool_until
                kf = self._first_above(start, w.tokens, w.strict)
                if kf < best:
                    best, reason = kf, w.reason
            stop = min(self.cool_until, best)
            if held < stop:
                self._cooldown_skip(held, stop - held)
        if kn.reactive_compaction:
            kr = self._first_above(k, kn.context_window_tokens, True)
            if kr < best:
                best, reason = kr, "reactive"
        return best, reason, shown

    def _cooldown_skip(self, k: int, count: int) -> None:
        self.cooldown_skips += count
        self._event(k, "cooldown-skip", f"{count} checks held until check {self.cool_until}")

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> Run:
        self.flight: _Flight | None = None
        k = 0
        while k < self.m:
            if self.flight is not None:
                k_evt = max(k, self.flight.land_check)
                self._fill(k, min(k_evt, self.m - 1), None)
                if k_evt >= self.m:
                    break
                self._land(k_evt)
                k = k_evt + 1
                continue
            view = self._state_view(k, self._context_at(int(self.checks[k])))
            k_evt, trigger, shown = self._next_event(k, view)
            self._fill(k, min(k_evt, self.m - 1), shown)
            if k_evt >= self.m:
                break
            i_evt = int(self.checks[k_evt])
            if trigger == "manual":
                self.manual = [c for c in self.manual if c > k_evt]
            actions = self.policy.decide(self._state_view(k_evt, self._context_at(i_evt), trigger))
            acted = freed = started = False
            for act in actions:
                if isinstance(act, Skip):
                    self.skips += 1
                    if act.reason != self.last_skip:
                        self._event(k_evt, "skip", act.reason)
                        self.last_skip = act.reason
                elif isinstance(act, Elide):
                    if self._elide(k_evt, act) > 0:
                        acted = freed = True
                elif isinstance(act, Compact):
                    forced = trigger in ("manual", "reactive")
                    if not forced and k_evt < self.cool_until:
                        self._cooldown_skip(k_evt, 1)
                        break
                    if forced:
                        self._event(k_evt, trigger, f"{trigger} compaction at {self._context_at(i_evt):,} tokens")
                    self._start(k_evt, self._context_at(i_evt), act, trigger)
                    acted = started = True
                    break  # never two compressions at once
            if acted:
                self.last_skip = None
            # After an elision the same check is looked at again: the stubs may not have been enough.
            k = k_evt if freed and not started else k_evt + 1
        if self.flight is not None:
            self._finish(self.flight, None)
            self.flight = None
        self._close_calls(self.n - 1)
        return self._result()

    def _result(self) -> Run:
        k = self.k
        sys = self.sys
        total = sys + self.t_brief + self.t_pinned + self.t_verb
        baseline = sys + self.P[self.checks + 1] if self.m else np.zeros(0, dtype=np.int64)
        window = k.context_window_tokens
        over = total > window
        edges = np.flatnonzero(over & ~np.concatenate(([False], over[:-1]))) if self.m else np.zeros(0, dtype=np.int64)
        for kk in edges:
            self._event(int(kk), "overflow", f"{int(total[kk]):,} > window {window:,}")
        events_col = [""] * self.m
        for j, kinds in self.t_events.items():
            events_col[j] = ",".join(kinds)
        timeline = pl.DataFrame(
            {
                "step": np.arange(self.m, dtype=np.int64),
                "index": self.checks,
                "role": _roles(self.counts)[self.checks].tolist(),
                "system": np.full(self.m, sys, dtype=np.int64),
                "briefing": self.t_brief,
                "pinned": self.t_pinned,
                "verbatim": self.t_verb,
                "elided_saved": self.t_saved,
                "total": total,
                "baseline": baseline,
                "boundary": self.t_boundary,
                "trigger": self.t_thr,
                "overflow": over,
                "events": events_col,
            }
        )
        landed = [c for c in self.compressions if c.status == "landed"]
        asked = [c for c in self.compressions if c.summarize]
        b_in = sum(c.record.input_tokens for c in asked)
        b_out = sum(c.record.output_tokens for c in asked)
        bp = self.briefer_prices
        b_cost = 0.0
        for c in self.compressions:
            if not c.summarize:
                continue
            if c.record.attempts or c.record.cache_hit or c.record.cost_usd:  # priced by whoever wrote it, even $0
                b_cost += c.record.cost_usd
            else:  # size-only and extractive briefers: what briefer_model would have charged
                b_cost += c.record.input_tokens * bp.input_per_token + c.record.output_tokens * bp.output_per_token
        # Baseline: every call sees the whole history so far (no compaction at all).
        a = self.assistant_idx
        base_in = int((sys + self.P[a]).sum()) if len(a) else 0
        base_out = int(self.c[a].sum()) if len(a) else 0
        peak = int(total.max()) if self.m else sys
        metrics = Metrics(
            messages=self.n,
            checks=self.m,
            window_tokens=window,
            peak_tokens=peak,
            peak_ratio=peak / window,
            baseline_peak_tokens=int(baseline.max()) if self.m else sys,
            mean_context_tokens=float(total.mean()) if self.m else float(sys),
            compressions=len(landed),
            failed_compressions=sum(c.status == "failed" for c in self.compressions),
            superseded_compressions=sum(c.status == "superseded" for c in self.compressions),
            skipped_checks=self.skips,
            elisions=self.elisions,
            elided_messages=len(self.st.elided),
            overflows=int(over.sum()),
            overflow_events=len(edges),
            agent_calls=self.calls,
            agent_input_tokens=self.calls_in,
            agent_output_tokens=self.calls_out,
            briefer_input_tokens=b_in,
            briefer_output_tokens=b_out,
            briefer_calls=len(asked),
            briefer_cache_hits=sum(c.record.cache_hit for c in asked),
            briefer_requests=sum(len(c.record.attempts) for c in asked if not c.record.cache_hit),
            tokens_per_task=self.calls_in + self.calls_out + b_in + b_out,
            baseline_tokens_per_task=base_in + base_out,
            dollars_per_task=self.cost + b_cost,
            dollars_per_task_cached=self.cost_cached + b_cost,
            agent_dollars=self.cost,
            briefer_dollars=b_cost,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
            max_briefing_chars=max((c.briefing_chars for c in landed if c.summarize), default=0),
            final_briefing_chars=self.st.briefing_chars,
            prices_known=self.prices.known,
            reactive_compressions=sum(c.trigger == "reactive" for c in landed),
            manual_compressions=sum(c.trigger == "manual" for c in landed),
            ineffective_compressions=sum(c.ineffective for c in landed),
            thrash_events=sum(c.thrash for c in landed),
            cooldown_skips=self.cooldown_skips,
        )
        self.events.sort(key=lambda e: (e.check, e.kind != "compression-started"))
        notes = k.warnings() + (
            "Counterfactual replay: assumes the agent would have sent the same messages after each compaction.",
        )
        return Run(
            history_id=self.h.id,
            knobs=k,
            timeline=timeline,
            compressions=tuple(self.compressions),
            events=tuple(self.events),
            metrics=metrics,
            briefer=getattr(self.briefer, "name", type(self.briefer).__name__),
            notes=notes,
        )


def _style(act: Compact) -> str:
    if not act.summarize:
        return "none"
    if act.opaque:
        return "opaque"
    if act.regenerate:
        return "regenerative"
    return "anchored" if act.sections else "incremental"


__all__ = ["Compression", "Event", "Metrics", "Run", "check_indices", "simulate"]
