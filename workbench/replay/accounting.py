"""What a replay's calls cost: the agent's calls, the briefer's, prompt-cache reads and writes, dollars.

Nothing here runs inside the loop. The loop keeps a record of the states in effect (:class:`CallLog`:
which state each stretch of messages was sent under, and where the prompt cache was broken); the
agent's costs are derived from that record after the replay, the briefer's from the compressions.

The agent makes one call per assistant message; the call's input is the context just before that
message and its output is the message. Between two events consecutive calls share a prompt prefix, so a
call reads from the cache what the previous call sent (its input and output) and writes the rest; the
first call after an event reads only the system prompt, or what an elision left unchanged before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.counting.prices import Prices
from workbench.replay.context import ContextSums, InContext, PrefixAsOf
from workbench.replay.results import Compression


@dataclass(frozen=True, slots=True)
class Sent:
    """The agent's calls at the assistant messages in (after, upto] were sent under this state."""

    after: int
    upto: int
    boundary: int
    base_tokens: int  # system prompt + briefing + pinned
    elisions: int  # elisions done by then: which stubs counted


@dataclass(frozen=True, slots=True)
class CacheKept:
    """An elision changed the prompt after ``prefix_tokens``: the cache still holds what comes before."""

    prefix_tokens: int


@dataclass(frozen=True, slots=True)
class CacheReset:
    """A briefing landed: everything after the system prompt changed."""


class CallLog:
    """The loop's record of the states in effect, in order, for accounting after the replay."""

    def __init__(self) -> None:
        self.entries: list[Sent | CacheKept | CacheReset] = []
        self.sent_upto = -1  # messages through this index are recorded

    def sent(self, upto: int, state: InContext, elisions: int) -> None:
        """Messages after the last recorded one, through ``upto``, were sent under ``state``."""
        if upto <= self.sent_upto:
            return
        self.entries.append(Sent(self.sent_upto, upto, state.boundary, state.base_tokens, elisions))
        self.sent_upto = upto

    def cache_kept(self, prefix_tokens: int) -> None:
        self.entries.append(CacheKept(prefix_tokens))

    def cache_reset(self) -> None:
        self.entries.append(CacheReset())


@dataclass(frozen=True, kw_only=True)
class AgentCalls:
    """The agent's LLM calls over a replay."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    dollars: float = 0.0  # every input token at the input price
    dollars_cached: float = 0.0  # cache reads and writes at their prices


def agent_calls(
    log: CallLog, sums: ContextSums, assistant: np.ndarray, system_tokens: int, prices: Prices
) -> AgentCalls:
    """Derive the agent's calls, tokens, cache traffic and dollars from the loop's record."""
    calls = tin = tout = tread = twrite = 0
    dollars = dollars_cached = 0.0
    read_price = prices.cache_read_per_token if prices.cache_read_per_token is not None else prices.input_per_token
    write_price = prices.cache_write_per_token if prices.cache_write_per_token is not None else prices.input_per_token
    kept: int | None = None  # the cached prefix an elision left intact, until the next call
    prefix_as_of = PrefixAsOf(sums)
    for entry in log.entries:
        if isinstance(entry, CacheReset):
            kept = None
            continue
        if isinstance(entry, CacheKept):
            kept = entry.prefix_tokens if kept is None else min(kept, entry.prefix_tokens)
            continue
        sel = assistant[
            np.searchsorted(assistant, entry.after, side="right") : np.searchsorted(assistant, entry.upto, side="right")
        ]
        if len(sel) == 0:
            continue
        prefix = prefix_as_of(entry.elisions)
        b, base = entry.boundary, entry.base_tokens
        inputs = base + (prefix[sel] - prefix[b])
        outputs = prefix[sel + 1] - prefix[sel]  # the message itself, as it was in context then
        reads = np.empty_like(inputs)
        reads[0] = min(system_tokens if kept is None else kept, int(inputs[0]))
        kept = None
        if len(sel) > 1:
            reads[1:] = base + (prefix[sel[:-1] + 1] - prefix[b])
        reads = np.minimum(reads, inputs)
        writes = inputs - reads
        span_in, span_out = int(inputs.sum()), int(outputs.sum())
        span_read, span_write = int(reads.sum()), int(writes.sum())
        calls += len(sel)
        tin += span_in
        tout += span_out
        tread += span_read
        twrite += span_write
        dollars += span_in * prices.input_per_token + span_out * prices.output_per_token
        dollars_cached += span_read * read_price + span_write * write_price + span_out * prices.output_per_token
    return AgentCalls(
        calls=calls,
        input_tokens=tin,
        output_tokens=tout,
        cache_read_tokens=tread,
        cache_write_tokens=twrite,
        dollars=dollars,
        dollars_cached=dollars_cached,
    )


@dataclass(frozen=True, kw_only=True)
class BrieferCalls:
    """The briefer's work over a replay: the compressions that asked it for a briefing."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_hits: int = 0  # answered from the disk cache (no provider request)
    requests: int = 0  # provider attempts made (0 for the simulated and extractive briefers)
    dollars: float = 0.0


def briefer_calls(compressions: Sequence[Compression], prices: Prices) -> BrieferCalls:
    """Sum what the briefer read, wrote and cost; unpriced briefings at ``prices`` (the briefer model's)."""
    asked = [c for c in compressions if c.summarize]
    dollars = 0.0
    for c in asked:
        rec = c.record
        if rec.attempts or rec.cache_hit or rec.cost_usd:  # priced by whoever wrote it, even $0
            dollars += rec.cost_usd
        else:  # size-only and extractive briefers: what briefer_model would have charged
            dollars += rec.input_tokens * prices.input_per_token + rec.output_tokens * prices.output_per_token
    return BrieferCalls(
        calls=len(asked),
        input_tokens=sum(c.record.input_tokens for c in asked),
        output_tokens=sum(c.record.output_tokens for c in asked),
        cache_hits=sum(c.record.cache_hit for c in asked),
        requests=sum(len(c.record.attempts) for c in asked if not c.record.cache_hit),
        dollars=dollars,
    )


def baseline_tokens(sums: ContextSums, assistant: np.ndarray, system_tokens: int) -> int:
    """Tokens per task without any compaction: every call sees the whole history so far."""
    if not len(assistant):
        return 0
    base_in = int((system_tokens + sums.prefix_tokens[assistant]).sum())
    base_out = int(sums.tokens[assistant].sum())
    return base_in + base_out
