"""The per-message token arrays a replay runs on, built from the knobs.

- ``trigger_tokens``: what the provider would bill for each message, the trigger's measure: the chosen
  counter (stagewise's estimate, a tokenizer, or the agent log's own billed usage), images counted by
  the provider's rule, times ``token_ratio``.
- ``walk_tokens``: what the agent's own code estimates, for the boundary walk: the boundary counter with
  images by the same rule (no ratio: that is the agent's arithmetic, not the bill).
- ``elidable_tokens``: what each message would free, by the trigger's measure, once its tool outputs are stubs.
On an agent log with billed usage the first two are the provider's own count per message (``log_counter:
billed``, ``counting/billed.py``) unless the knobs ask for the estimate or the usage counter.
All are read-only arrays remembered with the history's counts, so a knob change recomputes only what it
touches. Each is computed from ``knobs.counting`` alone (the view of the knobs whose spec names counting) and
kept under it: reading any other knob would fail, so no result can be served for knobs it was not made for,
and a counting knob added later joins every key by itself. The hidden prefix (``hidden_prefix_tokens``) is
not in them: the replay adds it to every call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from workbench.counting.billed import billed_counts, billed_lag, billed_trigger_tokens, uses_billed
from workbench.counting.checks import check_indices
from workbench.counting.per_message import base_tokens, deferred_to_calls
from workbench.counting.structure import (
    dropped_tokens,
    replaced_tokens,
    structure_tokens,
    unbilled_tokens,
    uses_structure,
)
from workbench.counting.usage import agent_measure, first_anchor, prefixed_usage_tokens, text_estimate_counts
from workbench.knobs import KnobView, counting_view

if TYPE_CHECKING:
    from workbench.counting.tokens import HistoryCounts
    from workbench.knobs import Knobs

KEPT_VIEWS = 256  # knob-keyed arrays kept per history: long app sessions try many knob sets, memory stays bounded


def knob_keyed(counts: HistoryCounts, name: str, view: KnobView, make: Callable[[KnobView], np.ndarray]) -> np.ndarray:
    """The array ``make(view)`` of this history, computed once per view and kept read-only with its counts."""
    key = (name, view)
    found = counts.derived.get(key)
    if found is not None:
        return found
    values = make(view)
    values.flags.writeable = False
    keyed = [k for k in counts.derived if isinstance(k, tuple) and len(k) == 2 and isinstance(k[1], KnobView)]
    if len(keyed) >= KEPT_VIEWS:
        for old in keyed[: KEPT_VIEWS // 4]:
            del counts.derived[old]
    counts.derived[key] = values
    return values


def check_points(counts: HistoryCounts, check_point: str) -> np.ndarray:
    """``check_indices`` of the counted history, computed once per history and check point."""
    found = counts.derived.get(("checks", check_point))
    if found is None:
        found = check_indices(counts.history, check_point)
        found.flags.writeable = False
        counts.derived[("checks", check_point)] = found
    return found


def walk_tokens(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray:
    """Per-message tokens the boundary walk reads (the agent's own estimate; on a log, what the provider billed)."""
    view = counting_view(knobs)
    if uses_billed(counts.history, view):
        return billed_counts(counts, view).tokens
    return knob_keyed(counts, "walk", view, lambda v: _walk(counts, v))


def _walk(counts: HistoryCounts, knobs: KnobView) -> np.ndarray:
    counter = "estimate" if knobs.boundary_counter == "usage" else knobs.boundary_counter
    return _with_logged(counts, base_tokens(counts, counter, knobs).copy())


def _with_logged(counts: HistoryCounts, tokens: np.ndarray) -> np.ndarray:
    """``tokens`` with each message whose log records the agent's own count of it (``Message.logged_tokens``)
    counted as that, as the agent counts it (no ratio: it is already the agent's number)."""
    found = counts.derived.get(("logged_tokens",))
    if found is None:
        # Message.logged_tokens asked only where the metadata holds the key (most messages: a dict read, no call)
        pairs = [(i, n) for i, m in enumerate(counts.history.messages)
                 if isinstance(md := m.metadata, dict) and "loggedTokens" in md and (n := m.logged_tokens) is not None]
        found = (np.fromiter((i for i, _ in pairs), dtype=np.int64, count=len(pairs)),
                 np.fromiter((n for _, n in pairs), dtype=np.int64, count=len(pairs)))
        counts.derived[("logged_tokens",)] = found
    index, values = found
    if not len(index):
        return tokens
    out = np.array(tokens, dtype=np.int64, copy=True)
    out[index] = values
    return out


def trigger_tokens(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray:
    """Per-message tokens the trigger measures (and the cost model bills)."""
    view = counting_view(knobs)
    if uses_billed(counts.history, view):
        return billed_trigger_tokens(counts, view)
    return knob_keyed(counts, "trigger", view, lambda v: _trigger(counts, v))


def trigger_lag(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray | None:
    """Per check: what the proactive trigger takes off the context the replay holds, so that it compares the
    agent's own measure (on a log counted as billed: ``billed_lag``); None where the two are the same."""
    view = counting_view(knobs)
    if not uses_billed(counts.history, view):
        return None
    if not view.count_added_since_call:
        estimate = np.zeros(len(counts.history.messages), dtype=np.int64)  # the last call's bill alone
    elif view.agent_estimate == "text":
        estimate = _text_estimates(counts, view)
    else:
        estimate = base_tokens(counts, "estimate", view)
    return billed_lag(counts, view, estimate, check_points(counts, view.check_point))


def _trigger(counts: HistoryCounts, knobs: KnobView) -> np.ndarray:
    usage = knobs.trigger_counter == "usage"
    if usage:
        # The agent's measure with no hidden prefix, kept: any other prefix moves it without a walk. Kept without the
        # restore's knobs too, which it never reads: an after-compaction prediction counts its window with the
        # restore off (``predict_after``), the window's own replays with it on.
        unprefixed = ("usage_measure", dataclasses.replace(  # type: ignore[type-var]
            knobs, hidden_prefix_tokens=0, compaction_restore_tokens=0, restore_files=0, restore_file_tokens=0))
        found: tuple[np.ndarray, int] | None = counts.derived.get(unprefixed)
        if found is not None:
            return prefixed_usage_tokens(found[0], found[1], knobs.hidden_prefix_tokens,
                                         check_points(counts, knobs.check_point))
    if usage and knobs.agent_estimate == "text":
        base = _text_estimates(counts, knobs)  # the agent's own count of what was added: no estimate needed
    else:
        counter = "estimate" if usage else knobs.trigger_counter
        base = base_tokens(counts, counter, knobs)
        # The ratio turns a count into a bill; the usage counter already has the bill, and what it adds between
        # calls is the agent's own arithmetic (Codex: bytes / 4), so it takes no ratio (nor the structure).
        if not usage and uses_structure(knobs):
            base = _with_structure(counts, counter, base, knobs)
        elif knobs.token_ratio != 1.0 and not usage:
            base = np.rint(base * knobs.token_ratio).astype(np.int64)
        if not usage:
            base = _with_logged(counts, base)
        if not knobs.count_added_since_call and not usage:
            base = deferred_to_calls(counts, base)
    if usage:
        checks = check_points(counts, knobs.check_point)
        msgs = counts.history.messages
        measure = agent_measure(msgs, base, 0, count_added=knobs.count_added_since_call,
                                reasoning_ratio=knobs.reasoning_carry_ratio)
        measure.flags.writeable = False
        anchor = first_anchor(msgs)
        counts.derived[unprefixed] = (measure, anchor)
        return prefixed_usage_tokens(measure, anchor, knobs.hidden_prefix_tokens, checks)
    return np.array(base, dtype=np.int64, copy=True)


def context_tokens(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray:
    """Per-message tokens whose running sum is the context the provider bills at each message: the trigger's tokens,
    except that what the context loses (``counting.structure.dropped_tokens``: cleared tool results, earlier turns'
    reasoning, none of it re-counted) is taken out where it goes, so a message may count less than 0 (the bill's
    calls read it; the trigger's running sum stays at its running maximum instead)."""
    view = counting_view(knobs)
    if view.trigger_counter == "usage" or uses_billed(counts.history, view) or not uses_structure(view):
        return trigger_tokens(counts, view)
    return knob_keyed(counts, "context", view, lambda v: _context(counts, v))


def _context(counts: HistoryCounts, knobs: KnobView) -> np.ndarray:
    total = _structured(counts, knobs.trigger_counter, base_tokens(counts, knobs.trigger_counter, knobs), knobs)
    dropped = dropped_tokens(counts, total, knobs, carry=False)
    return np.diff(np.rint(np.cumsum(total - dropped)), prepend=0.0).astype(np.int64)


def _structured(counts: HistoryCounts, counter: str, base: np.ndarray, knobs: KnobView) -> np.ndarray:
    """The counted text times the ratio plus what the structure adds, per message (floats); text the provider never
    received (``structure.unbilled_tokens``) is not counted."""
    text = base - unbilled_tokens(counts, counter, knobs.chars_per_token)
    if knobs.reasoning_encrypted_ratio:
        text = text - replaced_tokens(counts, counter, knobs.chars_per_token)
    text = np.maximum(0, text)
    total: np.ndarray = np.maximum(0.0, text * knobs.token_ratio + structure_tokens(counts, knobs))
    return total


def _with_structure(counts: HistoryCounts, counter: str, base: np.ndarray, knobs: KnobView) -> np.ndarray:
    """The counted text times the ratio, plus what the structure adds (``counting.structure``): tool calls, user
    turns and reasoning blocks, a reasoning block with an encrypted form counted by it instead of its text."""
    total = _structured(counts, counter, base, knobs)
    dropped = dropped_tokens(counts, total, knobs)
    if dropped.any():  # what the context loses (cleared results, earlier turns' reasoning): the running sum is the
        # running maximum of the context, so the first check above a threshold is where the context first got there
        running = np.rint(np.maximum.accumulate(np.cumsum(total - dropped)))
        return np.diff(running, prepend=0.0).astype(np.int64)
    return np.maximum(0, np.rint(total)).astype(np.int64)


def elidable_tokens(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray:
    """Tokens each message frees when its tool outputs become stubs, by the trigger's measure."""
    return knob_keyed(counts, "elidable", counting_view(knobs), lambda v: _elidable(counts, v))


def _elidable(counts: HistoryCounts, knobs: KnobView) -> np.ndarray:
    from workbench.history.elide import has_tool_output

    counter_tokens = trigger_tokens(counts, knobs)
    out = np.zeros(len(counts.history.messages), dtype=np.int64)
    for j, msg in enumerate(counts.history.messages):
        if has_tool_output(msg):
            out[j] = max(0, int(counter_tokens[j]) - counts.stub_tokens(j, knobs))
    return out


def _text_estimates(counts: HistoryCounts, knobs: KnobView) -> np.ndarray:
    """The agent's own rough count of each message (``agent_estimate: text``). It reads one knob, so it is kept under
    that knob alone: the replays of a window under several knob sets (``workbench reality`` predicts each logged
    compaction's context after it with knobs of its own) count the window once."""
    image = knobs.image_default_tokens
    key = ("text_estimate", image)
    found = counts.derived.get(key)
    if found is None:
        found = counts.derived[key] = _text_estimate(counts, image)
        found.flags.writeable = False
    return found


def _text_estimate(counts: HistoryCounts, image: int) -> np.ndarray:
    store = counts.cache.text_counts  # by content (or parts): the windows of a log replay share most messages
    key_of = counts.cache.parts_key
    msgs = counts.history.messages
    # by_identity: a hit needs no key call (the cache holds every parts tuple it stored counts of)
    got: list[tuple[int, int] | None] = ([store.get(id(m.parts)) for m in msgs] if counts.cache.by_identity
                                         else [None] * len(msgs))
    if None in got:
        for i, m in enumerate(msgs):
            if got[i] is None:
                mine = key_of(m)
                found = store.get(mine)
                if found is None:
                    found = store[mine] = text_estimate_counts(m)
                got[i] = found
    # Python ints, made an array once (a numpy item write per message costs more); text_estimate's arithmetic
    return np.array([int(round(c / 4)) + n * image for c, n in got], dtype=np.int64)  # type: ignore[misc]
