"""What binds: a policy's effective trigger and kept budget, the terms they are made of, and why a walk stopped.

A knob looks dead when another term of the same limit binds: stagewise fires at min(ratio × window, hard
cap), so with a 200k window and a 100k cap the ratio does nothing between 0.5 and 1. Policies describe
their limits here (``Policy.limits()``) and label each Compact with the reason its boundary stopped, so
faces can say which knob currently matters and why. Pure values; no I/O, no replay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.history.words import counted
from workbench.knobs import Knobs

PROACTIVE_OFF = "proactive compaction is off"  # a watch clause: the token trigger never fires, only the others do

# Why a boundary stopped where it did (``Compact.stop``, ``Compression.stop``).
STOP_BUDGET = "budget"  # the next older message would not fit the kept budget
STOP_FLOOR = "floor"  # the minimum of kept messages was reached before the budget ran out
STOP_SINGLE = "single-message"  # the newest message alone exceeds the budget: only it stays
STOP_BOUNDARY = "boundary"  # everything since the current boundary fits: the tail reaches it
STOP_COUNT = "count"  # the rule keeps a fixed number of messages or turns
STOP_SHARE = "share"  # the rule keeps the newest share of the verbatim tokens
STOP_USER_MESSAGES = "user-messages"  # only user messages stay (within their own budget)
STOP_NONE = "none"  # the rule keeps nothing verbatim
STOP_MIN_MESSAGES = "min-messages"  # keep_min_messages kept more than the rule asked
STOP_USER_TURN = "user-turn"  # moved back to the nearest user message (keep_starts_at_user)
STOP_TOOL_PAIR = "tool-pair"  # moved back so a tool result stays with its call
STOP_WORDS = {
    STOP_BUDGET: "kept budget reached",
    STOP_FLOOR: "min kept messages reached first",
    STOP_SINGLE: "newest message alone exceeds the budget",
    STOP_BOUNDARY: "everything since the last boundary fits",
    STOP_COUNT: "message or turn count reached",
    STOP_SHARE: "share of the verbatim tokens reached",
    STOP_USER_MESSAGES: "user messages only",
    STOP_NONE: "nothing kept verbatim",
    STOP_MIN_MESSAGES: "keep_min_messages kept more",
    STOP_USER_TURN: "moved back to a user message",
    STOP_TOOL_PAIR: "moved back to keep a tool call with its result",
}
# stagewise's walk exits (``workbench.stagewise.core.Outcome``) in the words above.
STAGEWISE_STOPS = {"budget": STOP_BUDGET, "floor": STOP_FLOOR, "single-message-exceeds": STOP_SINGLE}


@dataclass(frozen=True, kw_only=True)
class Term:
    """One term of a limit: ``ratio`` = trigger_ratio × window, ``cap`` = the hard cap, and so on."""

    name: str  # ratio | cap | reserve | floor
    label: str  # how a person reads it: "0.65 × window", "hard cap"
    knobs: tuple[str, ...]  # the knobs it is made of, the first one being the one to move
    tokens: float


@dataclass(frozen=True, kw_only=True)
class Limit:
    """An effective limit and the term that sets it (``binds``); ``tokens`` None means the limit is off."""

    what: str  # "trigger" | "kept budget"
    tokens: float | None
    binds: str  # a Term.name, or "off"
    terms: tuple[Term, ...]

    def term(self, name: str) -> Term | None:
        return next((t for t in self.terms if t.name == name), None)

    @property
    def binding(self) -> Term | None:
        return self.term(self.binds)

    def describe(self) -> str:
        """One line: "trigger 100,000 tokens = hard cap (0.65 × window = 130,000 does not bind)"."""
        if self.tokens is None:
            return f"{self.what}: off"
        bind = self.binding
        others = [f"{t.label} = {t.tokens:,.0f}" for t in self.terms if t.name != self.binds]
        head = f"{self.what} {self.tokens:,.0f} tokens" + (f" = {bind.label}" if bind is not None else "")
        return head + (f" ({'; '.join(others)} {'does' if len(others) == 1 else 'do'} not bind)" if others else "")


@dataclass(frozen=True, kw_only=True)
class Limits:
    """A policy's effective limits under its knobs: what fires it, what stays verbatim, what else watches."""

    trigger: Limit  # the proactive token trigger
    strict: bool = True  # fires at used > trigger (False: >=)
    clauses: tuple[str, ...] = ()  # other watches in words: message count, soft threshold, reactive, manual
    kept: Limit | None = None  # the kept token budget, when the tail is a token budget
    tail: str = ""  # the verbatim tail in words
    floor_messages: int = 0  # messages a walk keeps at least (stagewise: max(5, min_kept_messages))
    soft_tokens: float | None = None  # staged / importance / task_boundary: soft_trigger_ratio × window
    unused: tuple[str, ...] = ()  # knobs this policy never reads under these knobs (e.g. keep_rule for stagewise)

    def words(self) -> str:
        """What fires the policy, in one line: the trigger it uses ("trigger 167,000 tokens = window − 33,000
        reserve"), then its other watches (message count, reactive, manual). Faces say this, not the raw knobs."""
        trigger = self.trigger.describe()
        if PROACTIVE_OFF in self.clauses and self.trigger.tokens is not None:  # the threshold is not what fires it
            others = [c for c in self.clauses if c != PROACTIVE_OFF]
            return "; ".join([f"trigger: off ({PROACTIVE_OFF}; its threshold would be {trigger.removeprefix('trigger ')})",
                              *others])
        return "; ".join([trigger, *self.clauses])

    def trigger_for(self, reason: str, window: int) -> tuple[float | None, str]:
        """(tokens, what set them) for a compression started by the watch ``reason``."""
        if reason == "threshold":
            return self.trigger.tokens, self.trigger.binds
        if reason == "reactive":
            return float(window), "window"
        if reason in ("task-boundary", "elide") and self.soft_tokens is not None:
            return self.soft_tokens, "soft"
        return None, reason  # count, manual, prune: not a token threshold


def _min_limit(what: str, terms: Sequence[Term]) -> Limit:
    """The smallest term binds; ties go to the first (the ratio), which is the headline knob."""
    if not terms:
        return Limit(what=what, tokens=None, binds="off", terms=())
    bind = min(terms, key=lambda t: t.tokens)
    return Limit(what=what, tokens=bind.tokens, binds=bind.name, terms=tuple(terms))


def trigger_limit(knobs: Knobs, *, reserve: bool = True) -> Limit:
    """min(ratio × window, hard cap[, window − reserve]); off when trigger_ratio is −1 and no reserve is set."""
    k = knobs
    terms: list[Term] = []
    if k.trigger_ratio >= 0:
        terms.append(Term(name="ratio", label=f"{k.trigger_ratio:g} × window", knobs=("trigger_ratio",
                          "context_window_tokens"), tokens=k.trigger_ratio * k.context_window_tokens))
        terms.append(Term(name="cap", label="hard cap", knobs=("trigger_hard_cap_tokens",),
                          tokens=float(k.trigger_hard_cap_tokens)))
    if reserve and k.trigger_reserve_tokens > 0:
        terms.append(Term(name="reserve", label=f"window − {k.trigger_reserve_tokens:,} reserve",
                          knobs=("trigger_reserve_tokens", "context_window_tokens"),
                          tokens=float(k.context_window_tokens - k.trigger_reserve_tokens)))
    return _min_limit("trigger", terms)


def kept_limit(knobs: Knobs, *, floor: bool = True) -> Limit:
    """max(floor, min(floor(window × ratio), cap)): which of the three sets the verbatim budget."""
    k = knobs
    ratio = Term(name="ratio", label=f"{k.kept_budget_ratio:g} × window", knobs=("kept_budget_ratio",
                 "context_window_tokens"), tokens=float(math.floor(k.context_window_tokens * k.kept_budget_ratio)))
    cap = Term(name="cap", label="kept cap", knobs=("kept_budget_cap_tokens",), tokens=float(k.kept_budget_cap_tokens))
    inner = _min_limit("kept budget", [ratio, cap])
    if not floor or k.kept_budget_floor_tokens <= 0:
        return inner
    low = Term(name="floor", label="kept floor", knobs=("kept_budget_floor_tokens",),
               tokens=float(k.kept_budget_floor_tokens))
    terms = (ratio, cap, low)
    if low.tokens > (inner.tokens or 0):
        return Limit(what="kept budget", tokens=low.tokens, binds="floor", terms=terms)
    return Limit(what="kept budget", tokens=inner.tokens, binds=inner.binds, terms=terms)


def watch_clauses(knobs: Knobs, *, count: bool = True) -> tuple[str, ...]:
    """The non-token watches the replay adds whatever the policy: message count, reactive, manual, proactive off."""
    k = knobs
    out: list[str] = []
    if count and k.trigger_max_messages > 0:
        out.append(f"more than {counted(k.trigger_max_messages, 'message')} in context")
    if count and k.trigger_max_turns > 0:
        out.append(f"more than {counted(k.trigger_max_turns, 'turn')} in context")
    if not k.proactive_compaction:
        out.append(PROACTIVE_OFF)
    if k.reactive_compaction:
        out.append(f"reactive: a check above the window ({k.context_window_tokens:,})")
    if k.manual_compact_checks.strip():
        out.append(f"manual at checks {', '.join(str(c) for c in k.manual_checks)}")
    return tuple(out)


# Knobs only the rules-based policies read (``workbench.policies.rules``); stagewise reads none of them.
RULES_ONLY = ("trigger_at_equal", "trigger_reserve_tokens", "trigger_max_messages", "trigger_max_turns", "keep_rule",
              "keep_recent_messages", "keep_recent_turns", "keep_recent_share", "keep_user_messages_tokens",
              "kept_budget_floor_tokens", "keep_starts_at_user", "keep_min_messages", "briefing_mode",
              "soft_trigger_ratio", "mask_last_n_observations")
ONE_POLICY = ("mask_last_n_observations",)  # read by one rules-based policy only (it lists it in ``reads``)
# Which count knob each tail rule reads; the others are unused under that rule.
RULE_KNOBS = {"budget": ("kept_budget_ratio", "kept_budget_cap_tokens", "kept_budget_floor_tokens"),
              "messages": ("keep_recent_messages",), "turns": ("keep_recent_turns",), "share": ("keep_recent_share",),
              "user_messages": ("keep_user_messages_tokens",), "none": ()}


def rules_unused(rule: str, *, soft: bool, rule_fixed: bool = False, reads: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Knobs a rules-based policy with tail ``rule`` does not read (``soft``: it reads soft_trigger_ratio;
    ``reads``: knobs of ONE_POLICY that this policy reads)."""
    read = set(RULE_KNOBS.get(rule, ())) | set(reads)
    out = ["min_kept_messages", *(n for n in ONE_POLICY if n not in read)]
    out += [n for knobs in RULE_KNOBS.values() for n in knobs if n not in read]
    if rule_fixed:
        out.append("keep_rule")
    if not soft:
        out.append("soft_trigger_ratio")
    return tuple(dict.fromkeys(out))


def tail_words(knobs: Knobs, rule: str | None = None) -> str:
    """The verbatim tail of a rules-based policy in words."""
    k = knobs
    rule = rule or k.keep_rule
    words = {
        "budget": "newest messages within the kept budget",
        "messages": f"the newest {k.keep_recent_messages} non-system messages",
        "turns": f"the newest {k.keep_recent_turns} turns",
        "share": f"the newest {k.keep_recent_share:.0%} of the verbatim tokens",
        "user_messages": f"user messages within {k.keep_user_messages_tokens:,} tokens, nothing else",
        "none": "nothing",
    }[rule]
    extra = []
    if k.keep_min_messages > 1:
        extra.append(f"at least {counted(k.keep_min_messages, 'message')}")
    if k.keep_starts_at_user:
        extra.append("starting at a user message")
    return words + (f" ({', '.join(extra)})" if extra else "")


__all__ = [
    "STAGEWISE_STOPS", "STOP_BOUNDARY", "STOP_BUDGET", "STOP_COUNT", "STOP_FLOOR", "STOP_MIN_MESSAGES", "STOP_NONE",
    "STOP_SHARE", "STOP_SINGLE", "STOP_TOOL_PAIR", "STOP_USER_MESSAGES", "STOP_USER_TURN", "STOP_WORDS", "Limit",
    "RULES_ONLY", "Limits", "Term", "kept_limit", "rules_unused", "tail_words", "trigger_limit", "watch_clauses",
]
