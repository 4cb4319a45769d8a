"""One compaction, from the briefer's request to its record in the Run.

The request is what stagewise's compactor would hand its briefer (§7): the previous briefing (the last
one inside the span being folded), the newly folded messages, their serialized size and the budget
bucket. The text itself is built only if a briefer asks for it (``compact_history_fn``), since the
size model needs only the sizes. While a compaction is in flight (``latency_steps`` > 0) it is an
:class:`InFlight`; when it lands, fails, is superseded or is still in flight at the end, it becomes a
:class:`~workbench.replay.results.Compression`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from workbench.briefing.base import BriefRecord, BriefRequest
from workbench.counting.tokens import HistoryCounts
from workbench.history.model import History, Message
from workbench.knobs import Knobs
from workbench.policies.base import Compact, Trigger
from workbench.policies.limits import Limits
from workbench.replay.context import InContext
from workbench.replay.results import Compression
from workbench.stagewise.core import budget_bucket

PREVIOUS_OPEN = "<previous-chat-history>"
PREVIOUS_CLOSE = "</previous-chat-history>"


@dataclass
class InFlight:
    """A compaction that has started; it lands at ``land_check``."""

    action: Compact
    chain_index: int
    check_started: int
    index_started: int
    land_check: int
    tokens_before: int
    request: BriefRequest
    record: BriefRecord
    trigger: Trigger = Trigger.THRESHOLD


class MessageSpan(Sequence[Message]):
    """Messages [lo, hi) of a history less the ``skip`` ones, read only when a briefer reads them: the size model
    never does, and copying them cost O(boundary) at every compaction that re-reads the history from its start.
    Equal to the tuple of the same messages."""

    def __init__(self, messages: Sequence[Message], lo: int, hi: int, skip: frozenset[int] = frozenset()) -> None:
        lo, hi = min(lo, len(messages)), min(hi, len(messages))
        self._messages, self._lo, self._hi = messages, lo, max(lo, hi)
        self._skip = skip
        self._items: tuple[Message, ...] | None = None

    def _tuple(self) -> tuple[Message, ...]:
        if self._items is None:
            lo, hi, skip = self._lo, self._hi, self._skip
            self._items = (tuple(m for j, m in enumerate(self._messages[lo:hi], lo) if j not in skip) if skip
                           else tuple(self._messages[lo:hi]))
        return self._items

    def __len__(self) -> int:
        if self._items is None and not self._skip:
            return self._hi - self._lo
        return len(self._tuple())

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        return self._tuple()[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(self._tuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageSpan):
            other = other._tuple()
        return isinstance(other, tuple) and self._tuple() == other

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __repr__(self) -> str:
        return f"MessageSpan({self._lo}, {self._hi}, skip={len(self._skip)})"


def _chunks(counts: HistoryCounts, lo: int, hi: int, skip: frozenset[int]) -> list[str]:
    chunks = (counts.serialized(j) for j in range(lo, hi) if j not in skip)
    return [s for s in chunks if s is not None]


def _chunk_chars(counts: HistoryCounts, lo: int, hi: int, skip: frozenset[int]) -> tuple[int, int]:
    """(sum of chunk UTF-16 lengths, number of chunks) for messages [lo, hi), pinned ones skipped."""
    total, count = counts.serialized_span(lo, hi)
    if skip:
        pins = np.fromiter(skip, dtype=np.int64, count=len(skip))
        lengths = counts.serialized_chars_at(pins[(pins >= lo) & (pins < hi)])
        lengths = lengths[lengths >= 0]
        total -= int(lengths.sum())
        count -= len(lengths)
    return total, count


def briefing_request(
    history: History, knobs: Knobs, counts: HistoryCounts, state: InContext, act: Compact, chain_index: int
) -> BriefRequest:
    """What the briefer is asked when ``act`` starts with the context in ``state``."""
    k = knobs
    boundary = act.boundary
    # stagewise §7: the last truthy briefing inside messagesToCompact, where the serializer stops.
    # Landed boundaries never go back (a landing supersedes those that would), so briefing_at's keys
    # ascend in insertion order and the first match from the end is the largest.
    prev_idx = next((j for j, ch in reversed(state.briefing_at.items()) if j < boundary and ch > 0), None)
    if act.regenerate or prev_idx is None:
        start, prev_chars, prev_text = 0, 0, None
    else:
        start, prev_chars, prev_text = prev_idx, state.briefing_at[prev_idx], state.briefing_texts.get(prev_idx)
    folded_from = min(state.boundary, boundary)
    # Pinned messages stay in context verbatim, so the briefer never reads them (nor do earlier ones).
    skip = frozenset(act.pinned) | frozenset(state.pinned)
    new_chars, new_count = _chunk_chars(counts, folded_from, boundary, skip)
    body_chars, body_count = _chunk_chars(counts, start, boundary, skip)
    pieces = body_count + (1 if prev_chars else 0)
    wrapped = len(PREVIOUS_OPEN) + prev_chars + len(PREVIOUS_CLOSE) if prev_chars else 0
    compact_chars = body_chars + wrapped + max(0, pieces - 1)
    new_material = new_chars + max(0, new_count - 1)
    cap_chars = math.floor(k.briefer_input_cap_tokens * k.chars_per_token) if k.briefer_input_cap_tokens else 0
    if cap_chars:  # LangChain trim_tokens_to_summarize: only the newest part of the span is read
        compact_chars, new_material = min(compact_chars, cap_chars), min(new_material, cap_chars)
    ratio, percent, bucket = budget_bucket(0 if act.regenerate else prev_chars, k.target_briefing_chars)
    read_from = 0 if act.regenerate else folded_from  # a regenerating briefer re-reads the raw history

    def build() -> str:
        chunks = _chunks(counts, start, boundary, skip)
        if prev_chars:
            chunks.insert(0, PREVIOUS_OPEN + (prev_text or "") + PREVIOUS_CLOSE)
        text = "\n".join(chunks)
        return text[-cap_chars:] if cap_chars else text

    return BriefRequest(
        chain_index=chain_index,
        folded=MessageSpan(history.messages, read_from, boundary, skip),
        folded_from=folded_from,
        boundary=boundary,
        previous_briefing=None if act.regenerate else prev_text,
        previous_chars=0 if act.regenerate else prev_chars,
        new_material_chars=new_material,
        compact_history_chars=compact_chars,
        target_chars=k.target_briefing_chars,
        bucket=bucket,
        ratio=ratio,
        percent=percent,
        knobs=k,
        sections=act.sections,
        regenerate=act.regenerate,
        opaque=act.opaque,
        compact_history_fn=build,
        # By content where the counts are keyed by it (the digest is already known); counts keyed by identity (the
        # reality check's windows of a log) name nothing rather than hash every message of each window.
        folded_key=None if counts.cache.by_identity else (
            history.digest, read_from, boundary, frozenset(j for j in skip if read_from <= j < boundary)),
    )


def briefing_style(act: Compact) -> str:
    """The briefing family of a compaction: none, opaque, regenerative, anchored or incremental."""
    if not act.summarize:
        return "none"
    if act.opaque:
        return "opaque"
    if act.regenerate:
        return "regenerative"
    return "anchored" if act.sections else "incremental"


@dataclass(frozen=True)
class Landing:
    """What a landed compaction did to the context."""

    tokens_after: int
    freed: int  # context at landing without it minus with it
    ineffective: bool
    thrash: bool


def bound_fields(flight: InFlight, limits: Limits | None, window: int) -> dict[str, Any]:
    """The Compression fields that say what bound: trigger and budget terms, and why the walk stopped."""
    act = flight.action
    tokens, binds = limits.trigger_for(flight.trigger, window) if limits is not None else (None, "")
    kept = limits.kept if limits is not None else None
    return {"trigger_tokens": tokens, "trigger_binds": binds,
            "kept_budget_tokens": kept.tokens if kept is not None else None,
            "budget_binds": kept.binds if kept is not None else "", "stop": act.stop,
            "floor_tokens": act.floor_tokens, "fit_messages": act.fit_messages}


def compression_record(
    flight: InFlight, status: str | None, checks: np.ndarray, k: int | None = None, landing: Landing | None = None,
    *, limits: Limits | None = None, window: int = 0,
) -> Compression:
    """The Run's record of ``flight``, ended at check ``k`` with ``status`` (None: still in flight)."""
    act, rec, req = flight.action, flight.record, flight.request
    return Compression(
        chain_index=flight.chain_index,
        status=status or "in-flight",
        check_started=flight.check_started,
        index_started=flight.index_started,
        check_landed=k,
        index_landed=int(checks[k]) if k is not None else None,
        boundary=act.boundary,
        folded_from=req.folded_from,
        messages_folded=max(0, act.boundary - req.folded_from),
        kept=flight.index_started + 1 - act.boundary,
        kept_tokens=act.kept_tokens,
        outcome=act.outcome,
        reason=str(act.reason),
        summarize=act.summarize,
        tokens_before=flight.tokens_before,
        tokens_after=landing.tokens_after if landing else None,
        previous_chars=req.previous_chars,
        bucket=req.bucket,
        ratio=req.ratio,
        percent=req.percent,
        new_material_chars=req.new_material_chars,
        compact_history_chars=req.compact_history_chars,
        briefing_chars=rec.chars,
        briefing_tokens=rec.tokens,
        record=rec,
        trigger=str(flight.trigger),
        freed_tokens=landing.freed if landing else None,
        ineffective=landing.ineffective if landing else False,
        thrash=landing.thrash if landing else False,
        pinned=act.pinned,
        style=briefing_style(act),
        **bound_fields(flight, limits, window),
    )
