"""What a message's structure adds to its counted text, for an estimate that stands in for the provider's bill.

A provider bills more than the text a transcript shows. Each tool call and its result are wrapped for the model
(and agents append reminders to results); each user turn carries what the agent injects with it; a reasoning block
is billed at its full length while the transcript holds a summary of it, or nothing but its encrypted form
(Anthropic's thinking ``signature`` and ``redacted_thinking`` data, OpenAI's ``encrypted_content``), whose length
follows the full reasoning's (Codex estimates its own reasoning as ``encoded_len x 3/4 - 650`` bytes / 4: codex-rs
context_manager/history.rs ``estimate_reasoning_length``). Per message this module finds the tool calls, the user
turns, the reasoning blocks, the characters of their encrypted forms and the reasoning text those stand in for;
``counters.trigger_tokens`` weighs them with the counting knobs (``tool_call_tokens``, ``user_turn_tokens``,
``reasoning_block_tokens``, ``reasoning_encrypted_ratio``), which ``analysis.real_logs.calibration`` fits on logs. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.counting.usage import is_user_turn

if TYPE_CHECKING:
    from workbench.counting.tokens import HistoryCounts
    from workbench.history.model import Message
    from workbench.knobs import KnobView

# An encrypted form shorter than this is a placeholder, not a payload (public logs mask it, e.g. "REDACTED"):
# the block's size is then unknown and only reasoning_block_tokens stands for it. A real thinking signature is
# hundreds of characters (the shortest in ../shared/real_sessions_large: 180).
MIN_ENCRYPTED_CHARS = 100


@dataclass(frozen=True)
class Structure:
    """One message's structure: what the estimate adds beyond its counted text."""

    tool_calls: int  # tool calls the message makes (an assistant's tool parts)
    user_turn: int  # 1 for a real user message (not an injected context fragment)
    reasoning_blocks: int
    encrypted_chars: int  # characters of the reasoning blocks' encrypted forms that are payloads
    replaced_text: str  # the reasoning text those blocks carry: counted by their encrypted form instead


def _encrypted(data: dict[str, Any]) -> str:
    meta = data.get("providerMetadata")
    if not isinstance(meta, dict):
        return ""
    for provider, key in (("anthropic", "signature"), ("anthropic", "redactedData"),
                          ("openai", "reasoningEncryptedContent")):
        found = meta.get(provider)
        value = found.get(key) if isinstance(found, dict) else None
        if isinstance(value, str) and value:
            return value
    return ""


def message_structure(msg: Message) -> Structure:
    """The structure of one message (no knob involved)."""
    calls = blocks = chars = 0
    replaced: list[str] = []
    for part in msg.parts or ():
        data = part.data
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "reasoning":
            blocks += 1
            payload = _encrypted(data)
            if len(payload) >= MIN_ENCRYPTED_CHARS:
                chars += len(payload)
                text = data.get("text")
                if isinstance(text, str) and text:
                    replaced.append(text)
        elif msg.role == "assistant" and isinstance(kind, str) and (kind == "dynamic-tool" or (
                kind.startswith("tool-") and kind != "tool-result")):
            calls += 1
    return Structure(tool_calls=calls, user_turn=int(is_user_turn(msg)), reasoning_blocks=blocks,
                     encrypted_chars=chars, replaced_text="\n".join(replaced))


def structures(counts: HistoryCounts) -> tuple[Structure, ...]:
    """Every message's structure, found once per history (kept with its counts)."""
    found = counts.derived.get("structure")
    if found is None:
        found = counts.derived["structure"] = tuple(message_structure(m) for m in counts.history.messages)
    return found


def uses_structure(knobs: KnobView | Any) -> bool:
    """Whether the knobs weigh any structure (all four off: the counted text alone, as before)."""
    return bool(knobs.tool_call_tokens or knobs.user_turn_tokens or knobs.reasoning_block_tokens
                or knobs.reasoning_encrypted_ratio)


def replaced_tokens(counts: HistoryCounts, counter: str, chars_per_token: float) -> np.ndarray:
    """Per message, the counter's tokens of the reasoning text that an encrypted form replaces."""
    from workbench.counting.encodings import count_text_tokens

    key = ("replaced_reasoning", counter, chars_per_token)
    found = counts.derived.get(key)
    if found is None:
        found = np.array([count_text_tokens(s.replaced_text, counter, chars_per_token=chars_per_token)
                          if s.replaced_text else 0 for s in structures(counts)], dtype=np.int64)
        found.flags.writeable = False
        counts.derived[key] = found
    return found


def structure_matrix(counts: HistoryCounts) -> np.ndarray:
    """(messages x 4): tool calls, user turns, reasoning blocks, encrypted characters (what a fit weighs)."""
    found = counts.derived.get("structure_matrix")
    if found is None:
        found = np.array([(s.tool_calls, s.user_turn, s.reasoning_blocks, s.encrypted_chars)
                          for s in structures(counts)], dtype=np.float64).reshape(-1, 4)
        found.flags.writeable = False
        counts.derived["structure_matrix"] = found
    return found


def structure_tokens(counts: HistoryCounts, knobs: KnobView | Any) -> np.ndarray:
    """Per message, the tokens its structure adds under ``knobs`` (floats; the caller rounds the sum)."""
    weights = np.array([knobs.tool_call_tokens, knobs.user_turn_tokens, knobs.reasoning_block_tokens,
                        knobs.reasoning_encrypted_ratio], dtype=np.float64)
    matrix = structure_matrix(counts)
    out: np.ndarray = matrix @ weights
    return out


def reasoning_tokens(counts: HistoryCounts, knobs: KnobView | Any) -> np.ndarray:
    """Per message, the tokens its reasoning blocks count under ``knobs`` (what a new user turn may drop)."""
    matrix = structure_matrix(counts)
    out: np.ndarray = np.maximum(0.0, matrix[:, 2] * knobs.reasoning_block_tokens
                                 + matrix[:, 3] * knobs.reasoning_encrypted_ratio)
    return out


def cleared_results(counts: HistoryCounts) -> tuple[tuple[int, tuple[tuple[int, float], ...]], ...]:
    """Where the agent cleared tool results (Claude Code's microcompaction, ``clearedToolIds`` on the first message
    after it): (that message, ((message holding a cleared result, its share of that message's results), ...)).
    Found once per history; empty for almost every log."""
    found = counts.derived.get("cleared_results")
    if found is None:
        events = []
        holder: dict[str, int] = {}  # tool call id -> the message holding its result
        results: dict[int, int] = {}  # message -> how many results it holds
        for k, m in enumerate(counts.history.messages):
            ids = m.meta("clearedToolIds")
            if isinstance(ids, list) and ids:
                gone: dict[int, int] = {}
                for call_id in ids:
                    j = holder.pop(call_id, None) if isinstance(call_id, str) else None
                    if j is not None:
                        gone[j] = gone.get(j, 0) + 1
                events.append((k, tuple((j, n / max(1, results.get(j, 1))) for j, n in gone.items())))
            for part in m.parts or ():
                data = part.data
                if isinstance(data, dict) and data.get("type") == "tool-result" and isinstance(data.get("toolCallId"),
                                                                                                str):
                    holder[data["toolCallId"]] = k
                    results[k] = results.get(k, 0) + 1
        found = counts.derived["cleared_results"] = tuple(events)
    return found


def dropped_tokens(counts: HistoryCounts, tokens: np.ndarray, knobs: KnobView | Any, *,
                   carry: bool = True) -> np.ndarray:
    """Per message, the tokens the context loses right before it: the tool results the agent cleared there (Claude
    Code's microcompaction: the results' tokens in ``tokens``) and, with ``reasoning_dropped_at_turn``, at a user
    turn the reasoning of the turns before it, less what the agent goes on counting of it
    (``reasoning_carry_ratio``: Codex re-counts it x 1.26, so its measure gains; not with ``carry`` off, the
    context the provider bills)."""
    out = np.zeros(len(counts.history.messages), dtype=np.float64)
    for k, gone in cleared_results(counts):
        out[k] += sum(float(tokens[j]) * share for j, share in gone)
    if knobs.reasoning_dropped_at_turn and len(out):
        reasoning = reasoning_tokens(counts, knobs)
        turns = np.flatnonzero(structure_matrix(counts)[:, 1] > 0)
        if len(turns):
            before = np.concatenate(([0.0], np.cumsum(reasoning)))  # before[k]: reasoning of messages < k
            starts = np.concatenate(([0], turns[:-1]))  # each turn drops what came since the turn before it
            out[turns] += (before[turns] - before[starts]) * (1.0 - (knobs.reasoning_carry_ratio if carry else 0.0))
    return out
