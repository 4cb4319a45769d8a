"""The provider's own count per message: the ``billed`` counter (``log_counter: billed``, the default on a log).

An agent log bills every model call: its input + cache reads + cache writes is what the context held when the call
was sent. Between two consecutive calls the context grew by the difference, and that growth is what the provider
counted for the messages added between them (the first call's answer included: the next call reads it). It is
spread over those messages by their share of the trigger counter's tokens, as integers that sum exactly to the
growth, so the replay's prefix sums meet every call's billed context. The messages before the first call count
their estimate, and what the first call read beyond them is the hidden prefix (system prompt, tool schemas, rules
files), which the replay keeps in context at every call (``system_tokens``). Unlike the ``usage`` counter, which
re-anchors on each call's bill and so follows the log (``workbench reality``), these counts belong to the messages:
a replay that compacts elsewhere carries them into its own context (its briefing, what the agent re-attaches, its
kept tail), never the log's later bills, and every knob a user moves is a counterfactual on the provider's counts.

The hard cases, as the logs of ../shared/real_sessions and real_sessions_large show them:

- **A logged compaction between two calls**: the bill drops to the new context. The messages there count their
  estimate, the agent's own summary message 0 (the replay writes its own briefing), and the first call after it
  re-anchors: growth is measured from its bill on. In a free replay the context after a compaction is the
  replay's state, not that bill. Where the agent logged a larger measure of the context it compacted than the
  last bill and the estimate give (Claude Code's ``preTokens``: a record missing from the file, context attached
  on a resumed session, e.g. +7,000 in claude_code__48_415fae24d7_0 before message 246), the messages before the
  compaction share that growth instead.
- **The bill falls with no compaction logged** (Claude Code's microcompaction, ``microcompact_boundary``, and
  unlogged context editing: e.g. -58,820 tokens in claude_code__38_ecf75f2f1d_0 at message 114, -42,531 in
  claude_code__b0_dc55b3a1dc_1 at 73; a call with a smaller context): the messages there count 0 and later growth
  is measured from the highest bill so far, so the running sum is the running maximum of the bill and first
  crosses a threshold exactly where the bill first did (the agent compacted only once its bill reached it again).
- **Codex reasoning**: billed as output, read back by the later calls of its turn, dropped from the input at the
  next user turn, while Codex keeps counting it (codex-rs history.rs, ``reasoning_carry_ratio`` x the turn's
  reasoning tokens; -6,725 tokens at codex__00_34f597b72d_1 message 74). With that knob on, the turn's carried
  reasoning is added to the growth where the turn ends, on its last assistant message (which a compaction folds).
  Claude Code's thinking blocks are in the bill however the model treats them: nothing to add.
- **Calls with no usage** (Claude Code's ``<synthetic>`` messages, Codex items whose token_count was not logged)
  are messages like the others; **parallel tool calls** are one assistant message and several results in one
  interval; **streaming duplicates** of one call are merged by the readers (Claude Code by ``message.id``, Codex by
  its running total), so no two calls carry the same usage.
- **Images** are weighed by ``image_token_rule``, not their base64 text; **Codex's ``logged_context``** (its estimate
  of the rebuilt context) is the agent's arithmetic, not the provider's count: not used.
- **A log that starts mid-session** (``SessionLog.starts_mid_session``): its first call read earlier context the file
  lacks; the hidden prefix is then the knobs' (``hidden_prefix_tokens``) and the rest of that call's excess is put
  on the first message, so a compaction folds it as the agent's did.
- The messages no two calls bracket (before the first, after the last, around a logged compaction) count the
  estimate times the log's own ratio of billed growth to counted growth.

One pass over the messages; cached with the history's counts under the knobs it reads. Pure; no I/O.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.counting.per_message import base_tokens
from workbench.counting.usage import is_user_turn
from workbench.knobs import KnobView, counting_view

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.counting.tokens import HistoryCounts
    from workbench.history.model import History
    from workbench.knobs import Knobs

RATIO_RANGE = (0.25, 4.0)  # a log's fitted ratio outside this says its bill is not about these messages


@dataclass(frozen=True)
class Billed:
    """What the billed counter gives a history: per-message tokens and how they were found."""

    tokens: np.ndarray  # per message; their prefix sum + hidden_prefix = each call's billed context
    hidden_prefix: int
    ratio: float  # billed growth per counted token in this log: the estimate's factor where no calls bracket
    estimated: int  # messages counted by the estimate (no two calls bracket them)
    falls: int  # times the bill fell from one call to the next without a logged compaction
    anchors: int  # calls after a logged compaction that growth was measured from again
    earlier_context: int  # tokens the first call read that the file lacks (a log that starts mid-session)


def uses_billed(history: History, knobs: Knobs | KnobView) -> bool:
    """Whether ``knobs`` count ``history`` with the billed counter: a log with usage, ``log_counter: billed``, and
    not the ``usage`` counter (which follows the log)."""
    log = history.log
    return (knobs.log_counter == "billed" and knobs.trigger_counter != "usage" and log is not None
            and bool(log.calls))


def billed_trigger_tokens(counts: HistoryCounts, knobs: Knobs | KnobView) -> np.ndarray:
    """The trigger's per-message tokens under the billed counter: the billed counts themselves. Where the agent's
    own measure differs from them (it reads a call's bill and estimates what came after), the replay's trigger
    compares that measure (``billed_lag``), never per-message counts bent to it."""
    return billed_counts(counts, knobs).tokens


def billed_lag(counts: HistoryCounts, knobs: Knobs | KnobView, estimate: np.ndarray, checks: np.ndarray) -> np.ndarray:
    """Per check of ``knobs.check_point``: how far the billed context runs ahead of the agent's own measure there
    (``agent_measure_on_bill``), the tokens the replay's proactive trigger takes off the billed context it holds.

    The agent compacts on its measure: the last call's bill and answer plus its own estimate of what was added
    since (Claude Code's chars / 4 of text and tool results; the trigger counter's estimate for Codex); up to
    Claude Code 2.1.1 the last call's total alone (``count_added_since_call`` off). A tool result's billed count
    is more than that estimate, so the bill reaches a threshold a message or two before the agent does
    (claude_code__9b_04c3d92e38_2: the call at message 128 billed 167,213, over its 167,000 threshold; the agent
    compacted one call later, its ``preTokens`` 167,361). The reactive trigger (the API refuses a call over the
    window) compares the billed context itself. ``estimate``: the agent's own estimate of each message, ``checks``:
    the check points (``counting.counters.trigger_lag`` gives both)."""
    view = counting_view(knobs)
    key = ("billed-lag", view)
    found = counts.derived.get(key)
    if found is not None:
        return found
    history = counts.history
    billed = billed_counts(counts, view).tokens
    log = history.log
    hidden = billed_counts(counts, view).hidden_prefix
    logged = {c.index - 1: c.tokens_before - hidden for c in (log.compactions if log is not None else ())
              if c.tokens_before is not None and c.index > 0}
    measure = agent_measure_on_bill(history.messages, billed, estimate, logged=logged,
                                    reasoning_ratio=view.reasoning_carry_ratio if view.count_added_since_call else 0.0)
    found = (np.cumsum(billed, dtype=np.int64)[checks] - measure[checks]) if len(billed) else np.zeros(0, np.int64)
    found.flags.writeable = False
    counts.derived[key] = found
    return found


def agent_measure_on_bill(messages: Sequence[Any], billed: np.ndarray, estimate: np.ndarray, *,
                          logged: dict[int, int] | None = None, reasoning_ratio: float = 0.0) -> np.ndarray:
    """The agent's own measure after each message, on the billed counts (minus the hidden prefix): through a call's
    message, the billed counts of everything before it plus its answer (the call's bill and output, as the agent
    reads them back); after it, its ``estimate`` of each message added (its own summary 0; Codex's re-count of a
    finished turn's reasoning at the next user turn), until the next call. Before the first call, the billed
    counts. ``logged``: what the agent logged of its context after a message (the ``tokens_before`` of a compaction
    that follows it, minus the hidden prefix), where it is more: Claude Code's ``preTokens`` is this measure, and a
    tool result missing from the file is in it (claude_code__ad_ff0201aecb_0 logged 167,066 where the last bill and
    answer give 164,865); Codex's is its last call's total, without the reasoning it re-counts, so less."""
    logged = logged or {}
    n = len(messages)
    # billed counts of messages < i; Python ints (a numpy item read or write per message costs more)
    billed_before = np.concatenate(([0], np.cumsum(billed, dtype=np.int64))).tolist()
    added = np.asarray(estimate).tolist()
    measure = [0] * n
    called = False
    running = reasoning = 0  # reasoning billed since the last re-count or compaction, as billed_tokens keeps it
    for i, msg in enumerate(messages):
        usage = msg.usage if msg.role == "assistant" else None
        if usage is not None and usage.context_tokens > 0:
            running = int(billed_before[i]) + max(0, usage.total_tokens - usage.context_tokens)
            called = True
            reasoning += usage.reasoning_tokens
        elif not called:
            running = int(billed_before[i + 1])
        else:
            if msg.meta("isCompactSummary") is not True:
                running += int(added[i])
            if reasoning_ratio and reasoning and is_user_turn(msg):
                running += math.ceil(reasoning * reasoning_ratio)
                reasoning = 0
        if i in logged and logged[i] > running:
            running = logged[i]
        measure[i] = running
    return np.array(measure, dtype=np.int64)


def billed_counts(counts: HistoryCounts, knobs: Knobs | KnobView) -> Billed:
    """The billed counter for ``counts.history`` under ``knobs`` (remembered with the counts)."""
    knobs = counting_view(knobs)  # computed from the counting knobs alone, and kept under them
    key = ("billed", knobs)
    found = counts.derived.get(key)
    if found is not None:
        return found
    history = counts.history
    log = history.log
    assert log is not None
    weights = base_tokens(counts, knobs.trigger_counter, knobs)
    found = billed_tokens(history.messages, weights, compactions=[(c.index, c.tokens_before) for c in log.compactions],
                          reasoning_ratio=knobs.reasoning_carry_ratio, ratio_hint=knobs.token_ratio,
                          mid_session=log.starts_mid_session, hidden_hint=knobs.hidden_prefix_tokens)
    stale = [k for k in counts.derived if isinstance(k, tuple) and k and k[0] == "billed"]
    for old in stale[: max(0, len(stale) - 31)]:  # a long app session tries many knob sets: keep the last 32
        del counts.derived[old]
    counts.derived[key] = found
    return found


def system_tokens(counts: HistoryCounts, knobs: Knobs) -> int:
    """What the replay keeps in context at every call: the log's own hidden prefix when the billed counter counts
    it, else ``hidden_prefix_tokens``."""
    if uses_billed(counts.history, knobs):
        return billed_counts(counts, knobs).hidden_prefix
    return knobs.hidden_prefix_tokens


def billed_tokens(
    messages: Sequence[Any],
    weights: np.ndarray,
    *,
    compactions: Sequence[tuple[int, int | None]] = (),
    reasoning_ratio: float = 0.0,
    ratio_hint: float = 1.0,
    mid_session: bool = False,
    hidden_hint: int = 0,
) -> Billed:
    """Per-message billed tokens of ``messages`` from the usage their assistant messages carry.

    ``weights`` (the trigger counter's tokens per message) spread each call's growth and, times the log's fitted
    ratio, count the messages no two calls bracket. ``compactions`` are the logged compactions' (first message after
    it, the context the agent measured before it or None).
    """
    n = len(messages)
    calls = [(i, u.context_tokens, u.reasoning_tokens) for i, m in enumerate(messages)
             if m.role == "assistant" and (u := m.usage) is not None and u.context_tokens > 0]
    array = np.asarray(weights)
    # Python ints: numpy's would be read one at a time (an integer array's tolist gives them already)
    w = array.tolist() if array.dtype.kind in "iu" else [int(x) for x in array.tolist()]
    for i, m in enumerate(messages):
        md = m.metadata  # m.meta, inlined: every message of the log
        if isinstance(md, dict) and md.get("isCompactSummary") is True:
            w[i] = 0  # the agent's own summary: the replay's briefing stands in for it
    out = [0] * n
    if not calls:
        return _result(out, 0, ratio_hint, n, 0, 0, 0)
    prefix = [0, *itertools.accumulate(w)]
    cuts = sorted(index for index, _ in compactions)
    measured = {index: tokens for index, tokens in compactions if tokens is not None}

    def compacted(a: int, b: int) -> bool:  # a logged compaction's first message in (a, b]
        j = _first_at_least(cuts, a + 1)
        return j < len(cuts) and cuts[j] <= b

    ratio = _fitted_ratio(calls, prefix, compacted, ratio_hint)

    def estimate(lo: int, hi: int) -> int:
        total = 0
        for i in range(lo, hi):
            out[i] = round(w[i] * ratio)
            total += out[i]
        return total

    first, first_context, _ = calls[0]
    before = estimate(0, first)
    estimated = first
    earlier = 0
    hidden = first_context - before
    if mid_session and hidden > hidden_hint:
        earlier, hidden = hidden - hidden_hint, hidden_hint
        at = next((i for i in range(first) if messages[i].role != "system"), min(first, n - 1))
        out[at] += earlier
    elif hidden < 0:  # the estimate counts more than the call read: scale it down to the bill
        hidden = 0
        out[:first] = [0] * first
        _spread(out, 0, first, first_context, w)
    total = first_context - hidden  # the running sum: what the messages so far count
    offset = carried = reasoning = falls = anchors = 0
    last_target = total
    for (a, _, ra), (b, cb, _) in zip(calls, calls[1:], strict=False):
        reasoning += ra
        if compacted(a, b):
            cut = cuts[_first_at_least(cuts, a + 1)]
            before = estimate(a, cut)
            logged = measured.get(cut)
            grown = None if logged is None else logged - hidden + offset - total
            if grown is not None and grown > before:  # what the agent counted before compacting: more than the
                out[a:cut] = [0] * (cut - a)  # estimate (a record missing from the file, context attached unlogged)
                _spread(out, a, cut, grown, w)
                before = grown
            total += before + estimate(cut, b)
            estimated += b - a
            offset = total - (cb - hidden)  # the first call after it: growth from its bill on
            carried = reasoning = 0
            last_target = total
            anchors += 1
            continue
        extra = 0
        if reasoning_ratio and reasoning and any(is_user_turn(messages[i]) for i in range(a + 1, b)):
            extra = math.ceil(reasoning * reasoning_ratio)  # Codex's re-count of the turn's reasoning
            carried += extra
            reasoning = 0
        target = cb - hidden + offset + carried
        falls += target < last_target
        last_target = target
        growth = target - total
        if growth <= 0:
            continue  # counted 0: later growth is measured from the highest bill so far
        given = min(extra, growth)
        out[a] += given
        _spread(out, a, b, growth - given, w)
        total += growth
    last = calls[-1][0]
    estimate(last, n)
    estimated += n - last
    return _result(out, hidden, ratio, estimated, falls, anchors, earlier)


def _result(out: list[int], hidden: int, ratio: float, estimated: int, falls: int, anchors: int,
            earlier: int) -> Billed:
    tokens = np.asarray(out, dtype=np.int64)
    tokens.flags.writeable = False
    return Billed(tokens=tokens, hidden_prefix=int(hidden), ratio=float(ratio), estimated=estimated, falls=falls,
                  anchors=anchors, earlier_context=earlier)


def _first_at_least(values: list[int], x: int) -> int:
    return bisect.bisect_left(values, x)


def _fitted_ratio(calls: list[tuple[int, int, int]], prefix: list[int], compacted: Any, hint: float) -> float:
    """Billed growth per counted token over the intervals whose bill grew, with no compaction between them."""
    grown = counted = 0
    for (a, ca, _), (b, cb, _) in zip(calls, calls[1:], strict=False):
        if cb > ca and not compacted(a, b):
            grown += cb - ca
            counted += prefix[b] - prefix[a]
    if counted <= 0 or grown <= 0:
        return hint
    return min(max(grown / counted, RATIO_RANGE[0]), RATIO_RANGE[1])


def _spread(out: list[int], lo: int, hi: int, amount: int, w: list[int]) -> None:
    """Add ``amount`` to ``out[lo:hi]`` in proportion to ``w`` (equally when all are 0), as integers that sum to it
    exactly (the largest remainders get the units left over)."""
    if hi <= lo or amount <= 0:
        return
    span = range(lo, hi)
    weight = sum(w[i] for i in span)
    if weight <= 0:
        share, left = divmod(amount, hi - lo)
        for i in span:
            out[i] += share + (1 if i - lo < left else 0)
        return
    rests = []
    given = 0
    for i in span:
        q, r = divmod(amount * w[i], weight)
        out[i] += q
        given += q
        if r:
            rests.append((r, i))
    left = amount - given
    if left:
        rests.sort(reverse=True)
        for _, i in rests[:left]:
            out[i] += 1


def log_notes(counts: HistoryCounts, knobs: Knobs) -> tuple[str, ...]:
    """The run's notes on an agent log: where its context starts, and which counter counted it."""
    log = counts.history.log
    if log is None:
        return ()
    start = log.start_note
    note = counter_note(counts, knobs)
    return tuple(x[0].upper() + x[1:] + ("" if x.endswith(".") else ".") for x in (start, note) if x)


def counter_note(counts: HistoryCounts, knobs: Knobs) -> str | None:
    """One sentence for the run's notes: which counter counted a log with usage (None for other histories)."""
    history = counts.history
    log = history.log
    if log is None or not log.calls:
        return None
    if knobs.trigger_counter == "usage":
        return "Counted with the log's billed usage, re-anchored at every call (trigger_counter usage: follows the log)."
    if not uses_billed(history, knobs):
        return (f"Counted with {knobs.trigger_counter} x {knobs.token_ratio:g} and a hidden prefix of "
                f"{knobs.hidden_prefix_tokens:,} tokens (log_counter estimate): the log's billed usage is not used.")
    b = billed_counts(counts, knobs)
    parts = [f"Counted as the provider billed it (log_counter billed): each call's growth spread over the messages "
             f"it added, a hidden prefix of {b.hidden_prefix:,} tokens from the first call"]
    if b.earlier_context:
        parts.append(f"{b.earlier_context:,} tokens of earlier context the file lacks on its first message")
    parts.append(f"{b.estimated:,} messages no two calls bracket count {knobs.trigger_counter} x {b.ratio:.3f}")
    if b.falls:
        parts.append(f"{b.falls:,} times the bill fell with no compaction logged (context editing): those "
                     "messages count 0 until it passed its earlier high")
    return "; ".join(parts) + "."
