"""The policy interface the replay drives: when to look, what to fold, what to elide, what stays pinned.

A policy never loops over the history itself on every step. It names a *watch threshold* on context
tokens; the replay finds the first check above it with a vectorized search (context only grows
between events), then asks the policy to ``decide``. A decision is a tuple of actions: fold a prefix
into a briefing (``Compact``), replace old tool outputs with stubs (``Elide``), or drop a prefix with
no briefing (``Compact(summarize=False)``, a sliding window). Policies are pure and frozen.

Every policy derives from :class:`Policy`. It may override ``watches(state) -> tuple[Watch, ...]``: several
thresholds, each active from a message index on (a message-count trigger, a soft elision threshold that only
matters once a tool output has left the protected tail, a task boundary). The replay fires at the earliest of them
and tells ``decide`` which one fired (``state.trigger``). The default is ``watch_threshold`` alone, which is how
stagewise runs. Wrappers derive from :class:`Forwarding`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.knobs import KnobView, compile_pin_pattern

if TYPE_CHECKING:
    from workbench.history.model import History
    from workbench.knobs import Knobs
    from workbench.policies.limits import Limits


class Trigger(StrEnum):
    """Why the replay asks a policy to decide: the reason of the watch that fired, or a guard of the replay's own
    (manual, reactive) or the agent's log (its own prune). The values are the strings Runs and exports show."""

    THRESHOLD = "threshold"
    MANUAL = "manual"
    REACTIVE = "reactive"
    LOGGED_PRUNE = "logged-prune"
    PRUNE = "prune"
    COUNT = "count"
    TURNS = "turns"
    ELIDE = "elide"
    MASK = "mask"
    TASK_BOUNDARY = "task-boundary"


@dataclass(frozen=True, kw_only=True)
class ReplayState:
    """What a policy may look at when the replay asks it to decide, at one check point."""

    history: History
    knobs: Knobs
    check: int  # index of this check point
    index: int  # message index of this check (messages 0..index exist)
    context_tokens: int  # trigger counter: system + briefing + pinned + verbatim - elided
    boundary: int  # first verbatim message of the current context
    briefing_chars: int  # current briefing length (0 if none)
    counter_tokens: np.ndarray  # per-message trigger-counter tokens
    # ``estimate_tokens`` and ``content_chars`` (properties below) come from these on first use: many
    # policies never walk a boundary, and with a log's billed usage nothing else needs the stagewise count.
    estimate_tokens_of: Callable[[], np.ndarray] = field(compare=False, repr=False)
    content_chars_of: Callable[[], np.ndarray] = field(compare=False, repr=False)
    briefing_at: Mapping[int, int]  # message index -> chars of a briefing stored on it (for estimates)
    elided: frozenset[int]  # messages whose tool outputs are stubs now
    pinned: frozenset[int]  # messages kept in context even before the boundary
    elided_savings: np.ndarray  # tokens saved per message by elision
    trigger: Trigger = Trigger.THRESHOLD  # which watch fired: a Watch.reason, or manual / reactive from the replay
    checks: np.ndarray | None = field(default=None, compare=False)  # message index of every check
    pin_mask: np.ndarray | None = field(default=None, compare=False)  # messages pinned by the pin_* knobs
    elidable_of: Callable[[], np.ndarray] | None = field(default=None, compare=False)
    layout_of: Callable[[], HistoryIndex] | None = field(default=None, compare=False)  # the replay's memo of it

    @property
    def estimate_tokens(self) -> np.ndarray:
        """Per-message boundary-walk tokens (no briefing overlays)."""
        return self.estimate_tokens_of()

    @property
    def content_chars(self) -> np.ndarray:
        """stagewise chars per message without overhead."""
        return self.content_chars_of()

    @property
    def layout(self) -> HistoryIndex:
        """Role-derived index arrays of the history (cached per history)."""
        return self.layout_of() if self.layout_of is not None else history_index(self.history)

    def elidable_tokens(self) -> np.ndarray:
        """Tokens each message would free if its tool outputs became stubs (0 without tool output)."""
        if self.elidable_of is None:
            return np.zeros(len(self.history.messages), dtype=np.int64)
        return self.elidable_of()

    def pinned_mask(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Messages [lo, hi) that must not be folded or elided: the pin_* knobs plus what is pinned now."""
        hi = len(self.history.messages) if hi is None else hi
        mask = np.zeros(max(hi - lo, 0), dtype=bool) if self.pin_mask is None else self.pin_mask[lo:hi].copy()
        pinned = np.fromiter(self.pinned, dtype=np.int64, count=len(self.pinned))
        mask[pinned[(pinned >= lo) & (pinned < hi)] - lo] = True
        return mask

    def walk_tokens(self, lo: int, hi: int) -> np.ndarray:
        """Boundary-walk tokens of messages [lo, hi) as they are in context now (elided outputs as stubs)."""
        if hi <= lo:  # an empty tail (keep_rule none): no need to count the walk at all
            return np.zeros(0, dtype=np.int64)
        return np.maximum(self.estimate_tokens[lo:hi] - self.elided_savings[lo:hi], 0)

    def estimate_of(self, i: int) -> int:
        """The boundary-walk estimate of message i, counting a briefing stored on it (stagewise §5)."""
        extra = self.briefing_at.get(i)
        base = int(self.estimate_tokens[i])
        if not extra or base == 0:  # stagewise counts 0 for a message without a parts array
            return base
        k = self.knobs
        if k.boundary_counter == "estimate":
            total = int(self.content_chars[i]) + k.overhead_chars_per_message + extra
            return math.ceil(total / k.chars_per_token)
        return base + math.ceil(extra / k.chars_per_token)


@dataclass(frozen=True, kw_only=True)
class Compact:
    """Fold messages [.., boundary) into the briefing (or drop them when summarize is False)."""

    boundary: int
    summarize: bool = True
    outcome: str = ""
    kept_count: int | None = None
    kept_tokens: int | None = None
    reason: str = "threshold"
    pinned: tuple[int, ...] = ()  # messages before the boundary that stay in context
    regenerate: bool = False  # the briefer re-reads the raw history from the start (regenerative family)
    sections: bool = False  # ask for an anchored sectioned briefing
    opaque: bool = False  # a high-ratio, unreadable briefing (opaque family, e.g. Codex remote compaction)
    stop: str = ""  # why the boundary fell here: a ``workbench.policies.limits`` STOP_* value
    floor_tokens: int | None = None  # the walk's tokens of the newest floor messages (does the budget bind?)
    fit_messages: int | None = None  # how many newest messages the kept budget holds, floor aside


@dataclass(frozen=True, kw_only=True)
class Elide:
    """Replace the tool outputs of these messages with short stubs (no LLM call)."""

    indices: tuple[int, ...]
    reason: str = "elide"


@dataclass(frozen=True, kw_only=True)
class Skip:
    """The policy looked and chose to do nothing (recorded once per reason, not every step)."""

    reason: str


Action = Compact | Elide | Skip


@dataclass(frozen=True, kw_only=True)
class Watch:
    """Call ``decide`` at the first check at or after message ``from_index`` whose context is above ``tokens``.

    ``tokens=-math.inf`` fires at that check whatever the size (a count or boundary trigger). ``cooldown``
    False exempts the watch from the cooldown guard (cheap elision is not a compaction).
    """

    tokens: float
    strict: bool = True
    from_index: int = 0
    reason: Trigger = Trigger.THRESHOLD
    cooldown: bool = True


ROLE_CODES = {"system": 0, "user": 1, "assistant": 2, "tool": 3}


@dataclass(frozen=True, eq=False)
class HistoryIndex:
    """Role-derived arrays the policies share, computed once per history (no knob enters them).

    ``turn_starts``: a turn starts at a user message, or at an assistant message that does not answer a
    user message directly (a new agent step: assistant message and its tool results). ``cut_ok``: a
    message may be the first verbatim one; never a tool result, whose call sits in the message before
    (splitting them makes the replay invalid, LangChain moves such a cut back to the AIMessage).
    """

    roles: np.ndarray  # int8 codes: 0 system, 1 user, 2 assistant, 3 tool, 4 other
    user_idx: np.ndarray
    nonsystem_idx: np.ndarray
    system_idx: np.ndarray
    turn_starts: np.ndarray
    cut_ok: np.ndarray

    def align_back(self, cut: int, floor: int) -> int:
        """Move a cut back (keeping more) until it does not split a tool call from its result."""
        while cut > floor and cut < len(self.cut_ok) and not self.cut_ok[cut]:
            cut -= 1
        return cut


_INDEX_CACHE: dict[str, HistoryIndex] = {}


def history_index(history: History, memo: dict[Any, Any] | None = None) -> HistoryIndex:
    """The HistoryIndex of a history, cached by content digest, or in ``memo`` (the replay's per-history
    values, ``HistoryCounts.derived``) when given: no digest is computed then.

    Keyed by digest rather than by the History itself: an equal history loaded again would make a
    History-keyed cache compare every message on lookup.
    """
    if memo is not None:
        index = memo.get("history_index")
        if index is None:
            index = memo["history_index"] = _build_index(history)
        return index
    found = _INDEX_CACHE.get(history.digest)
    if found is None:
        if len(_INDEX_CACHE) >= 64:
            _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
        found = _INDEX_CACHE[history.digest] = _build_index(history)
    return found


def _build_index(history: History) -> HistoryIndex:
    roles = np.fromiter((ROLE_CODES.get(m.role, 4) for m in history.messages), dtype=np.int8,
                        count=len(history.messages))
    prev = np.concatenate(([-1], roles[:-1])) if len(roles) else roles
    starts = (roles == 1) | ((roles == 2) & (prev != 1))
    return HistoryIndex(
        roles=roles,
        user_idx=np.flatnonzero(roles == 1),
        nonsystem_idx=np.flatnonzero(roles != 0),
        system_idx=np.flatnonzero(roles == 0),
        turn_starts=np.flatnonzero(starts),
        cut_ok=roles != 3,
    )


_PIN_CACHE: dict[tuple[str, KnobView], np.ndarray] = {}


def _pin_mask(history: History, pins: KnobView, memo: dict[Any, Any] | None, parts: Any = None) -> np.ndarray:
    if memo is not None:
        mine = ("pin_mask", pins)
        mask = memo.get(mine)
        if mask is None:
            mask = memo[mine] = _build_pin_mask(history, pins, memo, parts)
        return mask
    key = (history.digest, pins)
    found = _PIN_CACHE.get(key)
    if found is None:
        if len(_PIN_CACHE) >= 64:
            _PIN_CACHE.pop(next(iter(_PIN_CACHE)))
        found = _PIN_CACHE[key] = _build_pin_mask(history, pins, None)
    return found


def clear_caches() -> None:
    """Forget per-history indexes (benchmarks measure cold runs with it)."""
    _INDEX_CACHE.clear()
    _PIN_CACHE.clear()


def _build_pin_mask(history: History, pins: KnobView, memo: dict[Any, Any] | None, parts: Any = None) -> np.ndarray:
    n = len(history.messages)
    mask = np.zeros(n, dtype=bool)
    index = history_index(history, memo)
    if pins.pin_system_messages:
        mask[index.system_idx] = True
    if pins.pin_first_user_message and len(index.user_idx):
        mask[index.user_idx[0]] = True
    mask[: min(pins.pin_first_messages, n)] = True
    if pins.pin_pattern:
        rx = compile_pin_pattern(pins.pin_pattern)  # one time budget for the whole history: a backtracking pattern errors
        msgs = history.messages
        if parts is None:
            mask |= np.asarray(rx.matches([m.text for m in msgs], name=lambda i: f"message {i} ({msgs[i].id})"),
                               dtype=bool)
        else:  # a CountCache by identity: a message's text is its parts', searched once per parts tuple
            mask |= np.asarray(parts.per_parts(("pin_pattern", pins.pin_pattern), msgs, lambda todo: rx.matches(
                [msgs[i].text for i in todo], name=lambda j: f"message {todo[j]} ({msgs[todo[j]].id})")), dtype=bool)
    mask.flags.writeable = False
    return mask


def pin_mask(history: History, knobs: Knobs, memo: dict[Any, Any] | None = None, parts: Any = None) -> np.ndarray:
    """Messages the pin_* knobs keep out of every fold (system prompt, task, rules files); read-only.

    Computed from ``knobs.pins`` alone and cached under it, by the history's content digest, or in ``memo`` (see
    ``history_index``) when given: a pin knob added to the group joins the key by itself. ``parts``: a
    ``CountCache`` by identity, which keeps each parts tuple's pin_pattern match (the windows of a log replay)."""
    return _pin_mask(history, knobs.pins, memo, parts)


class Policy:
    """The base of every policy: when to look, and what to do when the context is above a watch.

    A policy names its ``name`` (a dataclass field in most), its ``watch_threshold`` (which also labels the
    timeline's trigger column) and ``decide``. ``watches`` (several thresholds, each from a message on) defaults
    to the watch threshold as the one watch, which is how stagewise runs; ``limits`` (which term of the trigger and
    of the kept budget binds, ``workbench.policies.limits``: faces explain knobs with it) defaults to None. The
    replay and the faces call all four on any policy: nothing is looked up by name.
    """

    @property
    def name(self) -> str:
        raise NotImplementedError

    def watch_threshold(self, state: ReplayState) -> tuple[float, bool] | None:
        """(tokens, strict): the replay calls ``decide`` at checks above it; None = never."""
        return None

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        """Where the replay wakes the policy: by default the watch threshold as the one watch."""
        main = self.watch_threshold(state)
        return () if main is None else (Watch(tokens=main[0], strict=main[1]),)

    def limits(self) -> Limits | None:
        """Which terms bind (reported on the Run, never used to replay); None when the policy does not say."""
        return None

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        raise NotImplementedError


class Forwarding(Policy):
    """The base of policy wrappers (pruning in front of a policy, a live run's tracking): everything the replay or a
    face may ask of a policy (name, watch threshold, watches, limits, decide) goes to ``inner`` unless the wrapper
    overrides it, so a wrapper never drops one (a live Run once lost its limits that way)."""

    inner: Policy  # set by the subclass (a dataclass field or its __init__)

    @property
    def name(self) -> str:
        return self.inner.name

    def watch_threshold(self, state: ReplayState) -> tuple[float, bool] | None:
        return self.inner.watch_threshold(state)

    def watches(self, state: ReplayState) -> tuple[Watch, ...]:
        return self.inner.watches(state)

    def limits(self) -> Limits | None:
        return self.inner.limits()

    def decide(self, state: ReplayState) -> tuple[Action, ...]:
        return self.inner.decide(state)


PolicyFactory = Callable[["Knobs"], Policy]
POLICIES: dict[str, PolicyFactory] = {}
POLICY_DOCS: dict[str, str] = {}


def policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under a snake_case name (written into YAML: never rename)."""

    def register(factory: PolicyFactory) -> PolicyFactory:
        POLICIES[name] = factory
        POLICY_DOCS[name] = (factory.__doc__ or "").strip().splitlines()[0] if factory.__doc__ else ""
        return factory

    return register
