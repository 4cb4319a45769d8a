"""The agent log's billed usage as per-message tokens, so the replay's prefix sums reproduce the agent's measure.

An agent decides to compact on its own measure of the context: the billed total of its last model call
(input + cache reads + cache writes + output) plus an estimate of what was added since. Claude Code logs that
measure as ``compact_boundary.preTokens`` (from 2.1.2; up to 2.1.1 it is the last call's total alone); Codex
calls it active context (openai/codex@023fad268e08 codex-rs/core/src/context_manager/history.rs
``get_total_token_usage``) and also adds its estimate of earlier turns' encrypted reasoning, which the provider
no longer bills. With a log that has usage, the measure is known at every check while the replay follows the
log. Here it is spread over the messages: each assistant message that carries a call's usage brings the running
sum (plus the hidden prefix) to that call's billed total; every other message adds its estimate; a message that
carries the agent's own logged measure of the whole context (``Message.logged_context``: Codex's estimate after
a compaction) brings the sum to it. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.history.jsjson import utf16_len

# User messages Codex injects as context, which do not start a user turn (codex-rs event_mapping.rs
# is_contextual_user_message_content: AGENTS.md, environment context, aborted-turn notes, skills).
CONTEXTUAL_USER_PREFIXES = ("# AGENTS.md instructions", "<environment_context>", "<turn_aborted>",
                            "<user_instructions>", "<skill")


def is_user_turn(msg: Any) -> bool:
    """A real user message: one that starts a turn (not an injected context fragment)."""
    return msg.role == "user" and not msg.text.lstrip().startswith(CONTEXTUAL_USER_PREFIXES)


def agent_measure(
    messages: Sequence[Any],
    estimate: np.ndarray,
    hidden_prefix: int,
    *,
    count_added: bool = True,
    reasoning_ratio: float = 0.0,
) -> np.ndarray:
    """The agent's own measure of its context right after each message, minus ``hidden_prefix``."""
    n = len(messages)
    measure = [0] * n  # Python ints, made an array once: a numpy item read or write per message costs more
    added = np.asarray(estimate).tolist()
    total = 0
    reasoning_open = 0  # reasoning tokens of this turn's calls (not yet re-counted)
    reasoning_carried = 0  # the estimate the agent adds for earlier turns' reasoning
    for i in range(n):
        msg = messages[i]
        usage = msg.usage if msg.role == "assistant" else None
        md = msg.metadata  # msg.logged_context, inlined: every message of every replayed window
        logged = md.get("loggedContextTokens") if isinstance(md, dict) else None
        # the agent's own count of everything up to here (it outranks a call's bill)
        if isinstance(logged, int) and not isinstance(logged, bool):
            total = logged - hidden_prefix
            reasoning_open = reasoning_carried = 0
        elif usage is not None:
            total = usage.total_tokens - hidden_prefix + reasoning_carried
            if reasoning_ratio:
                reasoning_open += usage.reasoning_tokens
        else:
            if count_added:
                total += int(added[i])
            if reasoning_ratio and reasoning_open and is_user_turn(msg):
                carried = int(np.ceil(reasoning_open * reasoning_ratio))
                reasoning_carried += carried
                total += carried
                reasoning_open = 0
        measure[i] = total
    return np.array(measure, dtype=np.int64)


def usage_tokens(
    messages: Sequence[Any],
    estimate: np.ndarray,
    hidden_prefix: int,
    checks: np.ndarray,
    *,
    count_added: bool = True,
    reasoning_ratio: float = 0.0,
) -> np.ndarray:
    """Per-message tokens whose running sum plus ``hidden_prefix`` is the agent's measure after each message.

    At the check points the running sum is the running maximum of the measure there, so the replay's search
    for the first check above a threshold (which needs it non-decreasing) finds exactly the first check where
    the measure itself reached it. Elsewhere it is the measure as is (a call's bill may lie below the estimate
    that came before it).
    """
    cumulative = agent_measure(messages, estimate, hidden_prefix, count_added=count_added,
                               reasoning_ratio=reasoning_ratio)
    return running_tokens(cumulative, checks)


def first_anchor(messages: Sequence[Any]) -> int:
    """The first message whose measure ``agent_measure`` sets (a logged measure of the context, or a call's bill),
    ``len(messages)`` for none: the hidden prefix is taken off there only, so ``agent_measure(.., h)`` is
    ``agent_measure(.., 0)`` less ``h`` from this message on and the same before it."""
    for i, msg in enumerate(messages):
        md = msg.metadata
        logged = md.get("loggedContextTokens") if isinstance(md, dict) else None
        if (isinstance(logged, int) and not isinstance(logged, bool)) or (
                msg.role == "assistant" and msg.usage is not None):
            return i
    return len(messages)


def prefixed_usage_tokens(unprefixed: np.ndarray, anchor: int, hidden_prefix: int, checks: np.ndarray) -> np.ndarray:
    """``usage_tokens`` from ``agent_measure`` with no hidden prefix and its ``first_anchor``: one walk of the messages
    serves every hidden prefix (a followed log's window is counted with its own and with the measured one)."""
    cumulative = np.array(unprefixed, dtype=np.int64, copy=True)
    if hidden_prefix:
        cumulative[anchor:] -= hidden_prefix
    return running_tokens(cumulative, checks)


def running_tokens(cumulative: np.ndarray, checks: np.ndarray) -> np.ndarray:
    """Per-message tokens whose running sum is ``cumulative`` (changed in place) held at its running maximum at the
    check points (``usage_tokens``)."""
    if len(checks):
        at = cumulative[checks]
        cumulative[checks] = np.maximum.accumulate(at)
    out = np.empty(len(cumulative), dtype=np.int64)
    if len(cumulative):
        out[0] = cumulative[0]
        out[1:] = np.diff(cumulative)
    return out


def billed_context(messages: Sequence[Any]) -> list[tuple[int, int, int]]:
    """(message index, billed input, billed total) of every logged call: the log's own context line."""
    out = []
    for i, msg in enumerate(messages):
        usage = msg.usage if msg.role == "assistant" else None
        if usage is not None:
            out.append((i, usage.context_tokens, usage.total_tokens))
    return out


def text_estimate(msg: Any, image_tokens: int = 0) -> int:
    """Claude Code's rough count of a message: round(UTF-16 length / 4) of its text and tool-result text.

    Tool calls and reasoning count 0 and every image ``image_tokens`` (its own estimate of an image; the
    bundles of 2.1.2-2.1.29 use 1,334 and 2.1.39 uses 2,000): @anthropic-ai/claude-code 2.1.x cli.js.
    """
    chars, images = text_estimate_counts(msg)
    return int(round(chars / 4)) + images * image_tokens


def text_estimate_counts(msg: Any) -> tuple[int, int]:
    """(UTF-16 length of the text ``text_estimate`` counts, images in it): what does not depend on a knob."""
    chars = 0
    images = 0
    for part in msg.parts or ():
        data = part.data
        if not isinstance(data, dict):
            continue
        kind = data.get("type")  # Part.kind, inlined: this runs for every message of every replayed window
        if kind == "text":
            text = data.get("text")
            chars += utf16_len(text) if isinstance(text, str) else 0
        elif kind == "file":
            images += 1
        elif isinstance(kind, str) and (kind == "dynamic-tool" or kind.startswith("tool-")) and (
                kind == "tool-result" or "output" in data):
            out = data.get("output")
            if isinstance(out, str):
                chars += utf16_len(out)
            elif isinstance(out, list):
                for item in out:
                    if isinstance(item, dict) and isinstance(item.get("text"), str):
                        chars += utf16_len(item["text"])
                    elif isinstance(item, dict) and item.get("type") in ("image", "input_image"):
                        images += 1
    return chars, images
