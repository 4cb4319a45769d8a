"""The Briefer protocol: (previous briefing, newly folded messages, target) -> one BriefRecord.

Every briefer (simulated size model, extractive text, live LLM) returns the same record, so the
replay, the metrics and the faces never care which one ran. A briefer may do I/O (the live one
calls a provider); the replay stays pure because the briefer is handed to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.history.model import Message
    from workbench.knobs import Knobs


# stagewise's system prompt is 4,686 UTF-16 units; the user message adds tags, hint and instruction.
BRIEFER_PROMPT_CHARS = 4_686 + 600


@dataclass(frozen=True, kw_only=True)
class BriefRequest:
    """What a briefer is asked: fold ``folded`` (the new span) into ``previous_briefing``."""

    chain_index: int  # 1 for the first compression of a run
    folded: Sequence[Message]  # what the briefer reads: the newly folded span (from 0 when regenerating)
    folded_from: int  # message index of folded[0]
    boundary: int  # message index of the first kept message
    previous_briefing: str | None  # text when known (live/extractive runs), None for size-only
    previous_chars: int  # stagewise previousBriefingChars (UTF-16 units)
    new_material_chars: int  # chars of the compact transcript of ``folded``
    compact_history_chars: int  # chars of the whole compact history the briefer reads
    target_chars: int
    bucket: str  # none | lt60 | 60to85 | gte85
    ratio: float
    percent: int
    knobs: Knobs
    sections: bool = False  # an anchored sectioned briefing was asked for
    regenerate: bool = False  # the briefer re-reads the raw history (no previous briefing)
    opaque: bool = False  # a high-ratio, unreadable briefing was asked for (opaque family)
    compact_history_fn: Callable[[], str] | None = field(default=None, compare=False, repr=False)
    # What ``folded`` holds, where the caller can name it cheaply (the replay: its history's digest and the span's
    # bounds): equal keys are equal spans, so a briefer may share its work between replays (the extractive one
    # does). None: not named, nothing is shared.
    folded_key: Hashable | None = field(default=None, compare=False, repr=False)

    @property
    def compact_history(self) -> str:
        """The compact transcript (stagewise §6), built on demand: size-only briefers never need it."""
        if self.compact_history_fn is None:
            return ""
        return self.compact_history_fn()


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One try of one model: what happened and how long it took."""

    model: str
    outcome: str  # ok | timeout | error | not sent | too-short | unsettled | skipped
    latency_s: float = 0.0
    detail: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True, kw_only=True)
class BriefRecord:
    """The outcome of one briefing: text (None for size-only), size, who wrote it and what it cost."""

    text: str | None
    chars: int
    tokens: int
    model: str
    attempts: tuple[Attempt, ...] = ()
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_hit: bool = False
    failed: bool = False
    leak_previous_tag: bool = False  # output contains <previous-chat-history> (stagewise's leak check)
    leak_xml: bool = False  # output contains any XML wrapper tag
    latency_s: float = 0.0
    error: str = ""


def briefing_tokens(text: str, knobs: Knobs) -> int:
    """Tokens a briefing text occupies in context, by the knobs' trigger counter (chars/4 by default)."""
    from workbench.history.jsjson import utf16_len

    if knobs.trigger_counter == "estimate":
        return math.ceil(utf16_len(text) / knobs.chars_per_token)
    from workbench.counting.encodings import count_text_tokens

    return count_text_tokens(text, knobs.trigger_counter, chars_per_token=knobs.chars_per_token)


class Briefer(Protocol):
    """Anything that turns a BriefRequest into a BriefRecord."""

    @property
    def name(self) -> str: ...  # a property so frozen dataclasses satisfy it

    def __call__(self, request: BriefRequest) -> BriefRecord: ...
