"""Building blocks the policies from real systems share: trigger clauses, tail rules, briefing modes.

Triggers (peers.md §4 "trigger families"): a ratio of the window capped by an absolute number of
tokens (msagent, Codex, Gemini CLI, Hermes, Vibe), the window minus a reserve (OpenCode, Pi, Claude
Code, Roo Code) and a message count (OpenHands, LangChain ``messages``). Enabled clauses are OR-ed, as
LangChain's list of triggers is. Tails (§4 "tail families"): a token budget, a message count, a turn
count, a share of the history, user messages only, or nothing. stagewise uses none of this: its own
trigger and walk live in ``stagewise_core``. Pure functions over a ReplayState; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from workbench.knobs import Knobs
from workbench.policies import limits as lim
from workbench.policies.base import Action, Compact, Policy, ReplayState, Skip, Trigger, Watch


def trigger_tokens(knobs: Knobs) -> float | None:
    """The proactive token trigger: min over the enabled clauses, None when none is enabled.

    >>> trigger_tokens(Knobs(trigger_ratio=0.85, trigger_hard_cap_tokens=10_000_000))
    170000.0
    """
    clauses: list[float] = []
    if knobs.trigger_ratio >= 0:
        clauses.append(min(knobs.trigger_ratio * knobs.context_window_tokens, knobs.trigger_hard_cap_tokens))
    if knobs.trigger_reserve_tokens > 0:
        clauses.append(float(knobs.context_window_tokens - knobs.trigger_reserve_tokens))
    return min(clauses) if clauses else None


class WatchesTriggers(Policy):
    """The base of policies that look whenever one of the knobs' trigger clauses fires.

    Class attributes a policy sets to explain itself (``limits``): ``tail_rule`` when it fixes the tail whatever
    ``keep_rule`` says, ``soft`` what its soft threshold does ("" = it has none), ``soft_watch`` whether that
    threshold is a watch of its own, ``reads`` the rules knobs only it reads."""

    knobs: Knobs
    tail_rule: ClassVar[str | None] = None
    soft: ClassVar[str] = ""
    soft_watch: ClassVar[bool] = True
    reads: ClassVar[tuple[str, ...]] = ()

    def watch_threshold(self, state: ReplayState) -> tuple[float, bool] | None:
        tokens = trigger_tokens(self.knobs)
        return None if tokens is None else (tokens, not self.knobs.trigger_at_equal)

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        return tuple(trigger_watches(state, self.knobs))

    def limits(self) -> lim.Limits:
        """The OR-ed trigger clauses and the keep_rule tail (``tail_rule`` when the policy fixes it)."""
        return rules_limits(self.knobs, rule=self.tail_rule, soft=self.soft, soft_watch=self.soft_watch,
                            reads=self.reads)


def rules_limits(knobs: Knobs, *, rule: str | None = None, soft: str = "", soft_watch: bool = True,
                 reads: tuple[str, ...] = ()) -> lim.Limits:
    """Limits of a rules-based policy; ``soft`` names what the soft threshold does for it ("" = unused).

    ``soft_watch``: the soft threshold is a watch of its own (staged, task_boundary), which only fires
    first when it sits below the trigger; importance uses it as the target of its elision instead.
    """
    k = knobs
    fixed = rule is not None
    rule = rule or k.keep_rule
    clauses = lim.watch_clauses(k)
    soft_tokens = None
    trigger = lim.trigger_limit(k)
    if soft:
        soft_tokens = k.soft_trigger_ratio * k.context_window_tokens
        text = f"{soft} {k.soft_trigger_ratio:g} × window = {soft_tokens:,.0f}"
        if soft_watch and trigger.tokens is not None and soft_tokens >= trigger.tokens:
            text += " (not below the trigger, so it never fires first)"
        clauses = (text, *clauses)
    return lim.Limits(
        trigger=trigger,
        strict=not k.trigger_at_equal,
        clauses=clauses,
        kept=lim.kept_limit(k) if rule == "budget" else None,
        tail=lim.tail_words(k, rule),
        floor_messages=k.keep_min_messages,
        soft_tokens=soft_tokens,
        unused=lim.rules_unused(rule, soft=bool(soft), rule_fixed=fixed, reads=reads),
    )


def messages_in_context(state: ReplayState, index: int | None = None) -> int:
    """Messages the agent sends at message ``index``: pinned ones, the briefing, and the verbatim span."""
    i = state.index if index is None else index
    return len(state.pinned) + (1 if state.briefing_chars > 0 else 0) + max(0, i - state.boundary + 1)


def turns_in_context(state: ReplayState, index: int | None = None) -> int:
    """Turns in the verbatim span [boundary, index]; a span that starts mid-turn counts that turn too."""
    i = state.index if index is None else index
    b = state.boundary
    if i < b:
        return 0
    starts = state.layout.turn_starts
    lo, hi = int(np.searchsorted(starts, b)), int(np.searchsorted(starts, i, side="right"))
    return hi - lo + _partial_turn(state, lo, i)


def _partial_turn(state: ReplayState, lo: int, i: int) -> int:
    """1 when the span opens with a piece of a turn before its first turn start (system messages are no turn)."""
    layout, b = state.layout, state.boundary
    first = int(layout.turn_starts[lo]) if lo < len(layout.turn_starts) else i + 1
    return int(bool(np.any(layout.roles[b : min(first, i + 1)] != 0)))


def _turn_watch_index(state: ReplayState, knobs: Knobs) -> int | None:
    """The first message index at which ``turns_in_context`` reaches the turn clause; None if never."""
    need = knobs.trigger_max_turns + (0 if knobs.trigger_at_equal else 1)
    b = state.boundary
    starts = state.layout.turn_starts
    lo = int(np.searchsorted(starts, b))
    partial = _partial_turn(state, lo, len(state.history.messages) - 1)
    j = lo + need - 1 - partial  # the turn start at which the count reaches ``need``
    if j < lo:
        return b
    return int(starts[j]) if j < len(starts) else None


def trigger_watches(state: ReplayState, knobs: Knobs) -> list[Watch]:
    """Watches for the token clause, the message-count clause and the turn-count clause."""
    out: list[Watch] = []
    tokens = trigger_tokens(knobs)
    if tokens is not None:
        out.append(Watch(tokens=tokens, strict=not knobs.trigger_at_equal))
    limit = knobs.trigger_max_messages
    if limit > 0:
        extra = messages_in_context(state, state.boundary - 1)  # pinned + briefing
        first = limit + state.boundary - extra - (1 if knobs.trigger_at_equal else 0)
        out.append(Watch(tokens=-math.inf, from_index=max(first, 0), reason=Trigger.COUNT))
    if knobs.trigger_max_turns > 0:
        start = _turn_watch_index(state, knobs)
        if start is not None:
            out.append(Watch(tokens=-math.inf, from_index=start, reason=Trigger.TURNS))
    return out


def trigger_fired(state: ReplayState, knobs: Knobs) -> bool:
    """Whether a trigger clause holds at this check (used where a softer watch woke the policy)."""
    tokens = trigger_tokens(knobs)
    if tokens is not None:
        used = state.context_tokens
        if used > tokens or (knobs.trigger_at_equal and used >= tokens):
            return True
    limit = knobs.trigger_max_messages
    if limit > 0:
        count = messages_in_context(state)
        if count > limit or (knobs.trigger_at_equal and count >= limit):
            return True
    turns = knobs.trigger_max_turns
    if turns > 0:
        count = turns_in_context(state)
        if count > turns or (knobs.trigger_at_equal and count >= turns):
            return True
    return False


def must_compact(state: ReplayState, knobs: Knobs) -> bool:
    """True when the replay asks for a compaction now (manual, reactive) or a trigger clause holds."""
    return state.trigger in (Trigger.MANUAL, Trigger.REACTIVE) or trigger_fired(state, knobs)


@dataclass(frozen=True)
class Tail:
    """Where the verbatim tail starts, and which earlier messages the rule keeps (Codex's user messages)."""

    start: int
    rule: str
    pinned: tuple[int, ...] = ()
    stop: str = ""  # why the tail starts here (``workbench.policies.limits`` STOP_*)
    floor_tokens: int | None = None  # budget rule: tokens of the newest keep_min_messages messages
    fit_messages: int | None = None  # budget rule: newest messages the budget holds


def kept_budget(knobs: Knobs) -> int:
    """keep_rule=budget: max(floor, min(floor(window × ratio), cap))."""
    budget = min(math.floor(knobs.context_window_tokens * knobs.kept_budget_ratio), knobs.kept_budget_cap_tokens)
    return max(knobs.kept_budget_floor_tokens, budget)


def _fit_from_end(tokens: np.ndarray, budget: float) -> int:
    """How many of the newest entries fit the budget together."""
    if len(tokens) == 0:
        return 0
    suffix = np.cumsum(tokens[::-1])
    return int(np.searchsorted(suffix, budget, side="right"))


def select_tail(
    state: ReplayState, knobs: Knobs, *, index: int | None = None, rule: str | None = None, count: int | None = None
) -> Tail:
    """The verbatim tail if the context through message ``index`` were compacted now.

    ``rule`` and ``count`` override ``keep_rule`` and its count knob (msagent keeps max(1, N) messages).
    The start never goes below the current boundary, keeps ``keep_min_messages`` and never splits a
    tool call from its result.
    """
    i = state.index if index is None else index
    b = state.boundary
    rule = rule or knobs.keep_rule
    layout = state.layout
    pinned: tuple[int, ...] = ()
    floor_tokens = fit = None
    if rule == "budget":
        span = state.walk_tokens(b, i + 1)
        fit = _fit_from_end(span, kept_budget(knobs))
        start = i + 1 - fit
        stop = lim.STOP_BOUNDARY if fit == len(span) else lim.STOP_BUDGET
        floor_tokens = int(span[::-1][: knobs.keep_min_messages].sum())
    elif rule == "share":
        span = state.walk_tokens(b, i + 1)
        start = i + 1 - _fit_from_end(span, knobs.keep_recent_share * float(span.sum()))
        stop = lim.STOP_SHARE
    elif rule in ("messages", "turns"):
        pool = layout.nonsystem_idx if rule == "messages" else layout.turn_starts
        default = knobs.keep_recent_messages if rule == "messages" else knobs.keep_recent_turns
        n = default if count is None else count
        lo, hi = np.searchsorted(pool, b), np.searchsorted(pool, i, side="right")
        stop = lim.STOP_COUNT
        if n <= 0:
            start = i + 1
        elif hi - lo <= n:
            start, stop = b, lim.STOP_BOUNDARY
        else:
            start = int(pool[hi - n])
    elif rule == "user_messages":
        start, stop = i + 1, lim.STOP_USER_MESSAGES
        pinned = _kept_user_messages(state, knobs, i)
    else:  # "none"
        start, stop = i + 1, lim.STOP_NONE
    floored = max(b, min(start, i + 1 - knobs.keep_min_messages))
    if floored < start:  # a budget that holds no message at all keeps the newest one alone
        stop = lim.STOP_SINGLE if rule == "budget" and fit == 0 else lim.STOP_MIN_MESSAGES
    elif floored > start:
        stop = lim.STOP_BOUNDARY
    start = floored
    if knobs.keep_starts_at_user and start <= i:
        users = layout.user_idx[(layout.user_idx >= b) & (layout.user_idx <= start)]
        moved = int(users[-1]) if len(users) else start
        if moved != start:
            start, stop = moved, lim.STOP_USER_TURN
    aligned = layout.align_back(start, b)
    if aligned != start:
        start, stop = aligned, lim.STOP_TOOL_PAIR
    return Tail(start=start, rule=rule, pinned=pinned, stop=stop, floor_tokens=floor_tokens, fit_messages=fit)


def _kept_user_messages(state: ReplayState, knobs: Knobs, i: int) -> tuple[int, ...]:
    """Codex: user messages newest-first while they fit the budget (the one that overflows is left out).

    Messages the pin_* knobs pin (AGENTS.md and environment packets) stay anyway and use no budget, as
    Codex filters them out of the kept user messages and keeps them in the initial context.
    """
    layout = state.layout
    users = layout.user_idx
    fresh = users[(users >= state.boundary) & (users <= i)]
    pinned = np.fromiter(state.pinned, dtype=np.int64, count=len(state.pinned))
    earlier = pinned[layout.roles[pinned] == 1]
    pool = np.unique(np.concatenate([earlier, fresh]))[::-1]
    if state.pin_mask is not None:
        pool = pool[~state.pin_mask[pool]]
    if len(pool) == 0:
        return ()
    tokens = np.maximum(state.counter_tokens[pool] - state.elided_savings[pool], 0)
    take = int(np.searchsorted(np.cumsum(tokens), knobs.keep_user_messages_tokens, side="right"))
    return tuple(np.sort(pool[:take]).tolist())


def compact_action(
    state: ReplayState, knobs: Knobs, tail: Tail, *, reason: str | None = None, mode: str | None = None
) -> Action:
    """A Compact to ``tail.start`` written the way ``briefing_mode`` (or ``mode``) says; Skip when nothing folds."""
    i = state.index
    if tail.start <= state.boundary and not tail.pinned:
        return Skip(reason=f"nothing to fold ({tail.rule} tail reaches the boundary)")
    mode = mode or knobs.briefing_mode
    kept_tokens = int(state.walk_tokens(tail.start, i + 1).sum())
    return Compact(
        boundary=tail.start,
        summarize=mode != "none",
        outcome=tail.rule,
        kept_count=i + 1 - tail.start,
        kept_tokens=kept_tokens,
        reason=reason or state.trigger,
        pinned=tail.pinned,
        regenerate=mode == "regenerative",
        sections=mode == "anchored",
        opaque=mode == "opaque",
        stop=tail.stop,
        floor_tokens=tail.floor_tokens,
        fit_messages=tail.fit_messages,
    )


def elision_candidates(state: ReplayState, lo: int, hi: int) -> np.ndarray:
    """Messages in [lo, hi) whose tool outputs are not stubs yet, would free tokens, and are not pinned."""
    if hi <= lo:
        return np.zeros(0, dtype=np.int64)
    freed = state.elidable_tokens()[lo:hi]
    ok = (freed > 0) & (state.elided_savings[lo:hi] == 0) & ~state.pinned_mask(lo, hi)
    return np.flatnonzero(ok) + lo


def first_index_where(lo: int, hi: int, holds: Callable[[int], bool]) -> int | None:
    """The smallest i in [lo, hi) with ``holds(i)``, for a predicate that stays true once true; None if never.

    Gallops from ``lo`` (1, 2, 4, ... ahead) before bisecting: predicates over the span up to i cost more as
    i grows, and the answer is usually near.
    """
    if lo >= hi:
        return None
    known_false, step, probe = lo - 1, 1, lo
    while not holds(probe):
        known_false = probe
        if probe == hi - 1:
            return None
        probe = min(lo + 2 * step - 1, hi - 1)
        step *= 2
    first, last = known_false + 1, probe  # holds(last) is true
    while first < last:
        mid = (first + last) // 2
        if holds(mid):
            last = mid
        else:
            first = mid + 1
    return first
