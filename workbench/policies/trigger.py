"""The trigger as one control: the tokens at which a strategy compacts, and the knob a new value is written to.

Strategies spell their proactive trigger differently: Claude Code as the window minus a reserve
(``trigger_reserve_tokens``, with ``trigger_ratio`` −1), Codex as a share of the raw window (``trigger_ratio``, its
cap out of reach), stagewise as min(ratio × window, hard cap). The policy's own ``limits()`` say which terms make its
trigger and which of them binds (``policies.limits.Limit``); setting the trigger to T tokens writes T into the knob
of the binding term, so a face needs one control (in tokens, or as a share of the window) for every strategy, and
nothing here lists knobs per preset. Pure.
"""

from __future__ import annotations

from workbench.knobs import Knobs
from workbench.policies.limits import Limit, Limits, trigger_limit

# The knob each term of a trigger limit is written through, and how tokens become its value.
_WRITE = {"ratio": "trigger_ratio", "cap": "trigger_hard_cap_tokens", "reserve": "trigger_reserve_tokens"}


def knob_limits(knobs: Knobs) -> Limits | None:
    """The limits the policy of ``knobs`` runs under (which trigger binds, the kept budget), without a replay: the
    same ``Limits`` a Run of these knobs carries (``Run.limits``). None for a policy that describes none."""
    from workbench.policies import get_policy

    return get_policy(knobs).limits()


def policy_trigger(knobs: Knobs) -> Limit:
    """The proactive trigger of the strategy ``knobs`` name, as its policy states it (terms and the one that binds)."""
    found = knob_limits(knobs)
    return found.trigger if found is not None else trigger_limit(knobs)


NO_LIMITS_WORDS = "trigger: not described by this policy"


def trigger_words(knobs: Knobs | None = None, *, limits: Limits | None = None) -> str:
    """What fires a replay, in one line ("trigger 167,000 tokens = window − 33,000 reserve; reactive: ..."), from
    ``limits`` (a Run's) or else the policy of ``knobs``: the trigger actually used, for every strategy, never the raw
    trigger_ratio (−1 for Claude Code) or a hard cap that does not bind. ``simulate``'s header says this."""
    if limits is None and knobs is not None:
        limits = knob_limits(knobs)
    return NO_LIMITS_WORDS if limits is None else limits.words()


def trigger_knob(knobs: Knobs) -> str:
    """The knob a move of the trigger is written to: the binding term's (``trigger_ratio`` when the trigger is off)."""
    return _WRITE.get(policy_trigger(knobs).binds, "trigger_ratio")


def _term_value(term: str, tokens: int, window: int) -> float | int:
    if term == "ratio":
        return round(tokens / window, 6)
    if term == "reserve":
        return window - tokens
    return tokens


def with_trigger(knobs: Knobs, tokens: float) -> Knobs:
    """``knobs`` whose proactive trigger is ``tokens`` (1 to window − 1): written to the binding term's knob, and any
    other term of the strategy's trigger that would hold it lower raised to it, so every value moves the trigger.

    >>> k = with_trigger(Knobs(strategy="summarize", trigger_ratio=-1, trigger_reserve_tokens=33_000), 150_000)
    >>> k.trigger_reserve_tokens, k.trigger_ratio
    (50000, -1)
    """
    window = knobs.context_window_tokens
    t = int(min(max(round(tokens), 1), window - 1))
    limit = policy_trigger(knobs)
    binds = limit.binds if limit.tokens is not None else "ratio"
    changes: dict[str, float | int] = {_WRITE[binds]: _term_value(binds, t, window)}
    if limit.tokens is None and knobs.trigger_hard_cap_tokens < t:  # the ratio turns on with its cap
        changes["trigger_hard_cap_tokens"] = t
    for term in limit.terms:
        if term.name != binds and term.name in _WRITE and term.tokens < t:
            changes[_WRITE[term.name]] = _term_value(term.name, t, window)
    return knobs.replace(**changes)


__all__ = ["policy_trigger", "trigger_knob", "with_trigger"]
