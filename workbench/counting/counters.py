"""The two per-message token arrays a replay runs on, built from the knobs.

- ``trigger_tokens``: what the provider would bill for each message, the trigger's measure: the chosen
  counter (stagewise's estimate, a tokenizer, or the agent log's own billed usage), images counted by
  the provider's rule, times ``token_ratio``.
- ``walk_tokens``: what the agent's own code estimates, for the boundary walk: the boundary counter with
  images by the same rule (no ratio: that is the agent's arithmetic, not the bill).
On an agent log with billed usage both are the provider's own count per message (``log_counter: billed``,
``counting/billed.py``) unless the knobs ask for the estimate or the usage counter.
Both are read-only arrays remembered with the history's counts, so a knob change recomputes only what it
touches. The hidden prefix (``hidden_prefix_tokens``) is not in them: the replay adds it to every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.counting.billed import billed_counts, billed_trigger_tokens, uses_billed
from workbench.counting.checks import check_indices
from workbench.counting.images import image_tokens
from workbench.counting.usage import text_estimate_counts, usage_tokens

if TYPE_CHECKING:
    from workbench.counting.tokens import HistoryCounts
    from workbench.knobs import Knobs


def _remember(counts: HistoryCounts, key: tuple[object, ...], values: np.ndarray) -> np.ndarray:
    values.flags.writeable = False
    if len(counts.derived) > 256:  # long app sessions try many knob sets: keep memory bounded
        for old in [k for k in counts.derived if isinstance(k, tuple) and k and k[0] in ("trigger", "walk")][:64]:
            del counts.derived[old]
    counts.derived[key] = values
    return values


def _base_tokens(counts: HistoryCounts, counter: str, knobs: Knobs) -> np.ndarray:
    """The counter's per-message tokens with images counted by ``knobs.image_token_rule``."""
    tokens = counts.tokens(counter, overhead_chars=knobs.overhead_chars_per_message,
                           chars_per_token=knobs.chars_per_token)
    cap = knobs.tool_output_max_tokens
    if cap:
        roles = counts.roles()
        over = (roles == "tool") & (tokens > cap)
        if over.any():
            tokens = np.where(over, cap, tokens)
    rule = knobs.image_token_rule
    if rule == "serialized":
        return tokens
    with_images = counts.image_messages()
    if not len(with_images):
        return tokens
    out = tokens.copy()
    for i in with_images:
        msg = counts.history.messages[int(i)]
        refs = msg.images()
        images = sum(image_tokens(r, rule, knobs.image_default_tokens) for r in refs)
        text = counts.tokens_without_images(int(i), counter, overhead_chars=knobs.overhead_chars_per_message,
                                            chars_per_token=knobs.chars_per_token)
        if cap and msg.role == "tool":
            text = min(text, cap)
        out[i] = text + images
    return out


def walk_tokens(counts: HistoryCounts, knobs: Knobs) -> np.ndarray:
    """Per-message tokens the boundary walk reads (the agent's own estimate; on a log, what the provider billed)."""
    if uses_billed(counts.history, knobs):
        return billed_counts(counts, knobs).tokens
    counter = "estimate" if knobs.boundary_counter == "usage" else knobs.boundary_counter
    key = ("walk", counter, knobs.overhead_chars_per_message, knobs.chars_per_token, knobs.image_token_rule,
           knobs.image_default_tokens, knobs.tool_output_max_tokens)
    found = counts.derived.get(key)
    if found is not None:
        return found
    return _remember(counts, key, _base_tokens(counts, counter, knobs).copy())


def trigger_tokens(counts: HistoryCounts, knobs: Knobs) -> np.ndarray:
    """Per-message tokens the trigger measures (and the cost model bills)."""
    if uses_billed(counts.history, knobs):
        return billed_trigger_tokens(counts, knobs)
    key = ("trigger", knobs.trigger_counter, knobs.check_point, knobs.overhead_chars_per_message, knobs.chars_per_token,
           knobs.image_token_rule, knobs.image_default_tokens, knobs.token_ratio, knobs.hidden_prefix_tokens,
           knobs.tool_output_max_tokens, knobs.count_added_since_call, knobs.reasoning_carry_ratio,
           knobs.agent_estimate)
    found = counts.derived.get(key)
    if found is not None:
        return found
    usage = knobs.trigger_counter == "usage"
    if usage and knobs.agent_estimate == "text":
        base = _text_estimates(counts, knobs)  # the agent's own count of what was added: no estimate needed
    else:
        base = _base_tokens(counts, "estimate" if usage else knobs.trigger_counter, knobs)
        # The ratio turns a count into a bill; the usage counter already has the bill, and what it adds between
        # calls is the agent's own arithmetic (Codex: bytes / 4), so it takes no ratio.
        if knobs.token_ratio != 1.0 and not usage:
            base = np.rint(base * knobs.token_ratio).astype(np.int64)
        if not knobs.count_added_since_call and not usage:
            base = _deferred_to_calls(counts, base)
    if usage:
        checks = counts.derived.get(("checks", knobs.check_point))
        if checks is None:
            checks = check_indices(counts.history, knobs.check_point)
            checks.flags.writeable = False
            counts.derived[("checks", knobs.check_point)] = checks
        base = usage_tokens(counts.history.messages, base, knobs.hidden_prefix_tokens, checks,
                            count_added=knobs.count_added_since_call, reasoning_ratio=knobs.reasoning_carry_ratio)
    return _remember(counts, key, np.array(base, dtype=np.int64, copy=True))


def _text_estimates(counts: HistoryCounts, knobs: Knobs) -> np.ndarray:
    """The agent's own rough count of each message (``agent_estimate: text``)."""
    key = ("text_estimate", knobs.image_token_rule, knobs.image_default_tokens)
    found = counts.derived.get(key)
    if found is None:
        image = knobs.image_default_tokens
        store = counts.cache.text_counts  # by content (or parts): the windows of a log replay share most messages
        key_of = counts.cache.parts_key
        msgs = counts.history.messages
        found = np.empty(len(msgs), dtype=np.int64)
        for i, m in enumerate(msgs):
            mine = key_of(m)
            got = store.get(mine)
            if got is None:
                got = store[mine] = text_estimate_counts(m)
            found[i] = int(round(got[0] / 4)) + got[1] * image  # text_estimate's arithmetic
        found.flags.writeable = False
        counts.derived[key] = found
    return found


def _deferred_to_calls(counts: HistoryCounts, tokens: np.ndarray) -> np.ndarray:
    """An agent that measures only its last call's bill sees a message once the next call has read it: each
    message's tokens move to the next assistant message (Claude Code up to 2.1.1, count_added_since_call off)."""
    roles = counts.roles()
    out = np.zeros_like(tokens)
    pending = 0
    for i in range(len(tokens)):
        pending += int(tokens[i])
        if roles[i] == "assistant":
            out[i] = pending
            pending = 0
    if len(tokens):
        out[-1] += pending  # what the last call never read still counts at the end
    return out
