"""Each message's tokens by one counter, as the agent's own arithmetic sees them: the counter's count, tool outputs
capped at ``tool_output_max_tokens``, images by ``image_token_rule``; and the same moved to the next model call for
an agent that measures only its last call's bill. The trigger and walk counts (``counters``) and the billed counter
(``billed``) both start from these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.counting.images import image_tokens
from workbench.knobs import KnobView

if TYPE_CHECKING:
    from workbench.counting.tokens import HistoryCounts


def base_tokens(counts: HistoryCounts, counter: str, knobs: KnobView) -> np.ndarray:
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


def deferred_to_calls(counts: HistoryCounts, tokens: np.ndarray) -> np.ndarray:
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
