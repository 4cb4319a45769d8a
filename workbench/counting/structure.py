"""What a message's structure adds to its counted text, for an estimate that stands in for the provider's bill.

A provider bills more than the text a transcript shows. Each tool call and its result are wrapped for the model
(and agents append reminders to results); each user turn carries what the agent injects with it; a reasoning block
is billed at its full length while the transcript holds a summary of it, or nothing but its encrypted form
(Anthropic's thinking ``signature`` and ``redacted_thinking`` data, OpenAI's ``encrypted_content``), whose length
follows the full reasoning's (Codex estimates its own reasoning as ``encoded_len x 3/4 - 650`` bytes / 4: codex-rs
context_manager/history.rs ``estimate_reasoning_length``). And a log may hold text the provider never received: Claude
Code writes the plan file's text into its logged ``ExitPlanMode`` call (``plan``; the tool's input schema has no plan,
the model sends none: @anthropic-ai/claude-code 2.1.17 cli.js, the schema ``jn7`` and ``XR2``, which adds it to the
call it hands on), and the bill grows by ~300 tokens at such a call where its logged input holds 3,000-5,000
(claude_code__63_bd3f9b02f2_1 in ../shared/real_sessions_large). Per message this module finds the tool calls, the
user turns, the reasoning blocks, the characters of their encrypted forms, the reasoning text those stand in for and
the text never billed;
``counters.trigger_tokens`` weighs them with the counting knobs (``tool_call_tokens``, ``user_turn_tokens``,
``reasoning_block_tokens``, ``reasoning_encrypted_ratio``), which ``analysis.real_logs.calibration`` fits on logs. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.counting.usage import is_user_turn
from workbench.history.fast_init import dict_init

if TYPE_CHECKING:
    from workbench.counting.tokens import HistoryCounts
    from workbench.history.model import Message, Part
    from workbench.knobs import KnobView

# An encrypted form shorter than this is a placeholder, not a payload (public logs mask it, e.g. "REDACTED"):
# the block's size is then unknown and only reasoning_block_tokens stands for it. A real thinking signature is
# hundreds of characters (the shortest in ../shared/real_sessions_large: 180).
MIN_ENCRYPTED_CHARS = 100


@dict_init  # one per message of a log (those of a window are kept): its fields stored straight into the dict
@dataclass(frozen=True, kw_only=True)
class Structure:
    """One message's structure: what the estimate adds beyond its counted text."""

    tool_calls: int  # tool calls the message makes (an assistant's tool parts)
    user_turn: int  # 1 for a real user message (not an injected context fragment)
    reasoning_blocks: int
    encrypted_chars: int  # characters of the reasoning blocks' encrypted forms that are payloads
    replaced_text: str  # the reasoning text those blocks carry: counted by their encrypted form instead
    unbilled_text: str = ""  # text the log holds that the provider never received (Claude Code's ExitPlanMode plan)


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


# Tool calls whose logged input carries text the model never sent: tool name -> input key. Claude Code's ExitPlanMode
# (see the module docstring: 2.1.17 cli.js ``jn7`` has no ``plan``; the plan is the plan file's, added for the log).
UNBILLED_INPUTS = {"ExitPlanMode": "plan"}


def _unbilled(part: Part) -> str:
    """The text of a tool call's logged input that the model never sent (``UNBILLED_INPUTS``); "" for none."""
    key = UNBILLED_INPUTS.get(part.tool_name or "")
    found = part.get("input") if key else None
    value = found.get(key) if isinstance(found, dict) else None
    return value if isinstance(value, str) else ""


def message_structure(msg: Message) -> Structure:
    """The structure of one message (no knob involved)."""
    calls = blocks = chars = 0
    replaced: list[str] = []
    unbilled: list[str] = []
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
            text = _unbilled(part)
            if text:
                unbilled.append(text)
    return Structure(tool_calls=calls, user_turn=int(is_user_turn(msg)), reasoning_blocks=blocks,
                     encrypted_chars=chars, replaced_text="\n".join(replaced), unbilled_text="\n".join(unbilled))


def structures(counts: HistoryCounts) -> tuple[Structure, ...]:
    """Every message's structure, found once per history (kept with its counts)."""
    found = counts.derived.get("structure")
    if found is None:
        msgs = counts.history.messages
        cache = counts.cache
        if cache.by_identity:
            # A structure reads the message's parts and role alone: kept per (parts tuple, role), which a window
            # shares with the whole log and a copy (its usage taken off) with its original.
            store, key_of = cache.structures, cache.parts_key
            got = [store.get((id(m.parts), m.role)) for m in msgs]
            if None in got:
                for i, m in enumerate(msgs):
                    if got[i] is None:
                        got[i] = store[(key_of(m), m.role)] = message_structure(m)
            found = tuple(got)  # no None is left
        else:
            found = tuple(message_structure(m) for m in msgs)
        counts.derived["structure"] = found
    return found


def uses_structure(knobs: KnobView | Any) -> bool:
    """Whether the knobs weigh any structure (all four off: the counted text alone, as before)."""
    return bool(knobs.tool_call_tokens or knobs.user_turn_tokens or knobs.reasoning_block_tokens
                or knobs.reasoning_encrypted_ratio)


def _text_tokens(counts: HistoryCounts, field: str, counter: str, chars_per_token: float) -> np.ndarray:
    """Per message, the counter's tokens of one of its structure's texts (``field``), counted once per history."""
    from workbench.counting.encodings import count_text_tokens

    key = (field, counter, chars_per_token)
    found = counts.derived.get(key)
    if found is None:
        found = np.array([count_text_tokens(text, counter, chars_per_token=chars_per_token) if text else 0
                          for text in (getattr(s, field) for s in structures(counts))], dtype=np.int64)
        found.flags.writeable = False
        counts.derived[key] = found
    return found


def replaced_tokens(counts: HistoryCounts, counter: str, chars_per_token: float) -> np.ndarray:
    """Per message, the counter's tokens of the reasoning text that an encrypted form replaces."""
    return _text_tokens(counts, "replaced_text", counter, chars_per_token)


def unbilled_tokens(counts: HistoryCounts, counter: str, chars_per_token: float) -> np.ndarray:
    """Per message, the counter's tokens of the text its log holds that the provider never received."""
    return _text_tokens(counts, "unbilled_text", counter, chars_per_token)


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


# Claude Code's microcompaction (cli.js 2.0.76 ``Vd``, 2.1.7 ``lc``, 2.1.17 ``Rp``: the same rule and constants): the
# tools whose results it clears, how many of the newest it keeps, the tool-result tokens (its chars / 4) it leaves,
# and the least it must free to clear anything. 2.1.8 began to log each as ``microcompact_boundary``.
MICROCOMPACT_TOOLS = frozenset({"Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"})
MICROCOMPACT_KEEP = 3
MICROCOMPACT_LEAVE_TOKENS = 40_000
MICROCOMPACT_MIN_FREED = 20_000
MICROCOMPACT_IMAGE_TOKENS = 2_000


def compactable_results(counts: HistoryCounts) -> tuple[tuple[tuple[str, ...], tuple[tuple[str, int, float], ...]], ...]:
    """Per message, what Claude Code's microcompaction reads of it: the ids of the compactable tool calls it makes,
    and the compactable results it holds as (call id, Claude Code's count of it: ``claude_code_result_tokens``, the
    result's share of the message's results). Found once per history."""
    found = counts.derived.get("compactable")
    if found is None:
        compactable: set[str] = set()
        rows = []
        for m in counts.history.messages:
            calls: list[str] = []
            results: list[tuple[str, int, float]] = []
            parts = m.parts or ()
            share = 1.0 / max(1, sum(1 for p in parts if p.kind == "tool-result"))
            for p in parts:
                call_id = p.tool_call_id
                if call_id is None:
                    continue
                if m.role == "assistant" and p.kind == "tool" and p.tool_name in MICROCOMPACT_TOOLS:
                    calls.append(call_id)
                    compactable.add(call_id)
                elif p.kind == "tool-result" and call_id in compactable:
                    results.append((call_id, claude_code_result_tokens(p.get("output")), share))
            rows.append((tuple(calls), tuple(results)))
        found = counts.derived["compactable"] = tuple(rows)
    return found


def claude_code_result_tokens(output: Any) -> int:
    """Claude Code's count of a tool result (2.1.7 cli.js ``js2``): ``Math.round(chars / 4)`` of a string (``l7``),
    of a list of blocks each text block's so and ``MICROCOMPACT_IMAGE_TOKENS`` an image (``_s2``), nothing else."""
    from workbench.history.jsjson import utf16_len
    from workbench.stagewise.core import js_round

    if isinstance(output, str):
        return js_round(utf16_len(output) / 4)
    total = 0
    for block in output if isinstance(output, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            total += js_round(utf16_len(block["text"]) / 4)
        elif kind == "image":
            total += MICROCOMPACT_IMAGE_TOKENS
    return total


def microcompacted_tokens(counts: HistoryCounts, tokens: np.ndarray, dropped: np.ndarray,
                          knobs: KnobView | Any) -> np.ndarray:
    """Per message, the tokens Claude Code's microcompaction clears right before it where the log does not say so
    (``microcompact_tokens``: its warning threshold; the constants above): before each call whose measure, the
    context through the last call and its answer (``hidden_prefix_tokens`` + ``tokens`` - ``dropped`` so far), is
    at least the threshold, the compactable results but the newest 3 are cleared oldest first while more than
    40,000 of Claude Code's tokens of them remain, if that frees 20,000; each cleared result takes its share of its
    message's ``tokens`` out of the context."""
    out = np.zeros(len(tokens), dtype=np.float64)
    threshold = knobs.microcompact_tokens
    if not threshold or not len(tokens):
        return out
    rows = compactable_results(counts)
    roles = counts.roles()
    ids: list[str] = []  # compactable calls not cleared, in order
    size: dict[str, int] = {}
    holder: dict[str, tuple[int, float]] = {}
    # sum(size.get(c, 0) for c in ids), kept as ids and sizes change: summing it at every call past the threshold
    # made a long log's walk quadratic. ``listed`` counts each id's entries in ids (an id may repeat).
    total = 0
    listed: dict[str, int] = {}
    context = float(knobs.hidden_prefix_tokens)
    measure = None  # the context through the last call and its answer
    for i, (calls, results) in enumerate(rows):
        if roles[i] == "assistant" and measure is not None and measure >= threshold:
            keep = set(ids[-MICROCOMPACT_KEEP:])
            freed = 0
            chosen = []
            for c in ids:
                if total - freed <= MICROCOMPACT_LEAVE_TOKENS:
                    break  # sizes are not negative: freed only grows, so no later id is chosen
                if c not in keep:
                    chosen.append(c)
                    freed += size.get(c, 0)
            if chosen and freed >= MICROCOMPACT_MIN_FREED:
                gone = set(chosen)
                ids = [c for c in ids if c not in gone]
                for c in gone:
                    total -= size.get(c, 0) * listed.pop(c, 0)
                for c in chosen:
                    j, share = holder.get(c, (-1, 0.0))
                    if j >= 0:
                        out[i] += float(tokens[j]) * share
                context -= out[i]
        context += float(tokens[i]) - float(dropped[i])
        ids.extend(calls)
        for c in calls:
            listed[c] = listed.get(c, 0) + 1
            total += size.get(c, 0)
        for c, n, share in results:
            total += (n - size.get(c, 0)) * listed.get(c, 0)
            size[c] = n
            holder[c] = (i, share)
        if roles[i] == "assistant":
            measure = context
    return out


def dropped_tokens(counts: HistoryCounts, tokens: np.ndarray, knobs: KnobView | Any, *,
                   carry: bool = True) -> np.ndarray:
    """Per message, the tokens the context loses right before it: the tool results the agent cleared there (Claude
    Code's microcompaction: the results' tokens in ``tokens``, where the log records it, else by its rule with
    ``microcompact_tokens``) and, with ``reasoning_dropped_at_turn``, at a user
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
    if knobs.microcompact_tokens:
        out += microcompacted_tokens(counts, tokens, out, knobs)
    return out
