"""The context right after a logged compaction, as the replay's own compaction would leave it.

Every counterfactual continues from there, so the replay must get it right. For each compaction an agent logged,
the window that ends at it is cut to the messages before it, and the replay compacts once at its last check
(``replay.first.compaction_at_end``: the knobs' briefer writes the briefing, the policy keeps its tail and pins,
``counting.restore`` works out what the agent re-attaches). The prediction is the context at the first model call
after the compaction: that context plus the messages the log has between the compaction and that call (the
agent's own summary message left out: its length is the agent's, not the replay's). Nothing after the
compaction is read but those messages' text; the log's billed context of that call (input + cache reads + cache
writes) stands beside it as ``logged_tokens``, never inside it.

Each record also keeps what the briefer was asked (the request's sizes) and how long the agent's briefing was
(``actual_chars``): Claude Code logs its summary's text; a Codex summary is encrypted, so its size is what the
call after it billed beyond the rest of the predicted context. ``explore.briefer_calibration`` fits the size
model to those pairs. Pure: histories in, values out.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from workbench.briefing.simulated import OPAQUE_SIZE_RATIO, SimulatedBriefer
from workbench.counting.counters import trigger_tokens
from workbench.counting.restore import compaction_restore
from workbench.counting.tokens import CountCache
from workbench.history.model import History, Message
from workbench.history.session_log import LoggedCompaction
from workbench.knobs import Knobs
from workbench.replay.first import compaction_at_end


@dataclass(frozen=True, kw_only=True)
class AfterCompaction:
    """One logged compaction: the replay's context at the first call after it, and what the log billed there."""

    index: int  # first message after the compaction (the loader's numbering)
    call_index: int | None  # the first assistant message after it (the call), None when the log has none
    predicted_tokens: int | None  # the replay's context at that call
    briefing_tokens: int = 0
    briefing_chars: int = 0
    between_tokens: int = 0  # messages the log has between the compaction and the call (its summary left out)
    rest_tokens: int | None = None  # the prediction without the briefing (what the size model does not decide)
    instructions_tokens: int = 0  # Codex's request instructions, inside between_tokens
    restore_knob: int = 0  # the compaction_restore_tokens inside rest_tokens
    chars_per_token: float = 4.0  # how the briefer turned chars into tokens
    logged_tokens: int | None = None  # input + cache reads + cache writes of that call
    # What the replay's briefer was asked, and the agent's own briefing length (None when it cannot be told).
    features: dict[str, Any] = dataclasses.field(default_factory=dict)
    actual_chars: int | None = None
    opaque: bool = False
    own_prefix: bool = False  # the hidden prefix is this log's own (its first call measured it), not a fitted one

    @property
    def error(self) -> float | None:
        """Predicted over logged, minus one (None without both)."""
        if self.predicted_tokens is None or not self.logged_tokens:
            return None
        return self.predicted_tokens / self.logged_tokens - 1.0


def first_call_after(history: History, real: LoggedCompaction, end: int) -> int | None:
    """The first assistant message at or after ``real.index`` and before ``end``: the model call after it (not the
    summary itself where the agent logs it as an assistant message: OpenCode's summarizer answer)."""
    msgs = history.messages
    return next((i for i in range(real.index, min(end, len(msgs)))
                 if msgs[i].role == "assistant" and i != real.summary_index), None)


def logged_context_at(history: History, index: int | None) -> int | None:
    """Input + cache reads + cache writes the log billed for the call at message ``index`` (None without usage)."""
    if index is None:
        return None
    usage = history.messages[index].usage
    return None if usage is None else usage.context_tokens


def predict_after(
    history: History,
    segment: History,
    cut: int,
    real: LoggedCompaction,
    knobs: Knobs,
    *,
    end: int,
    cache: CountCache,
    restored: int | None = None,
    briefer: SimulatedBriefer | None = None,
    own_prefix: bool = False,
) -> AfterCompaction:
    """The replay's context at the first call after ``real``.

    ``segment`` is the window that ends at it (``analysis.real_logs.reality``'s segment: what the agent carried into the
    window, then the log's messages), ``cut`` the number of its messages before the compaction, ``end`` the
    log index where the next window ends (the call must come before it). ``restored`` is what the agent re-attaches
    (``counting.restore.compaction_restore`` over the whole log before the compaction, which
    ``analysis.real_logs.reality`` also starts the next window with); None works it out here. ``own_prefix``: the
    knobs' hidden prefix is this log's own (``measured_prefix``), kept on the record for the fits."""
    knobs = counting_knobs(knobs)
    call = first_call_after(history, real, end)
    logged = logged_context_at(history, call)
    if restored is None:
        restored = compaction_restore(history.messages[: real.index], knobs, cache=cache)
    # The restore is worked out over the whole log (its files may have been re-attached at an earlier compaction),
    # not over this window: the replay's own is turned off and added.
    forced = knobs.replace(restore_files=0, compaction_restore_tokens=0)
    comp = compaction_at_end(segment, forced, briefer or SimulatedBriefer(), cache=cache, before=cut)
    if comp is None or comp.tokens_after is None or call is None:
        return AfterCompaction(index=real.index, call_index=call, predicted_tokens=None, logged_tokens=logged,
                               own_prefix=own_prefix)
    between = [m for m in history.messages[real.index:call] if not _is_agent_summary(m, real)]
    between_tokens = _tokens(between, knobs, cache, segment) if between else 0
    instructions = request_instructions(history)
    instructions_tokens = 0
    if instructions is not None and not any(m is instructions for m in segment.messages[:cut]):
        # sent with every request: a window that starts after a compaction does not hold it (the agent's kept
        # history never does), the first window does (pinned, so the compaction keeps it)
        instructions_tokens = _tokens([instructions], knobs, cache, segment)
    between_tokens += instructions_tokens
    predicted = comp.tokens_after + restored + between_tokens
    features = {"previous_chars": comp.previous_chars, "bucket": comp.bucket,
                "new_material_chars": comp.new_material_chars, "compact_history_chars": comp.compact_history_chars,
                "target_chars": knobs.target_briefing_chars, "regenerate": comp.style == "regenerative"}
    opaque = comp.style == "opaque"
    actual: int | None = None
    if real.summary is not None and not opaque:
        actual = len(real.summary)
    elif logged is not None:  # the briefing's share of what the call billed, as the briefer's chars
        rest = predicted - comp.briefing_tokens
        implied = max(0, logged - rest)
        chars = implied * knobs.chars_per_token
        actual = int(round(chars / OPAQUE_SIZE_RATIO if opaque else chars))
    return AfterCompaction(index=real.index, call_index=call, predicted_tokens=int(predicted),
                           briefing_tokens=comp.briefing_tokens, briefing_chars=comp.briefing_chars,
                           between_tokens=int(between_tokens), rest_tokens=int(predicted - comp.briefing_tokens),
                           restore_knob=knobs.compaction_restore_tokens, chars_per_token=knobs.chars_per_token,
                           instructions_tokens=int(instructions_tokens), logged_tokens=logged, features=features,
                           actual_chars=actual, opaque=opaque, own_prefix=own_prefix)


def counting_knobs(knobs: Knobs) -> Knobs:
    """The knobs a prediction counts with. The usage counter spreads each call's billed growth over the messages
    between calls, and Codex's estimate of earlier turns' reasoning lands on the next user message, which says
    nothing of the few messages a compaction keeps: Codex's are counted by their estimate instead (chars / 4 times
    the token ratio; its usage counter counts them so already, so no tokenizer runs). Claude Code's own text
    estimate (``agent_estimate: text``) already gives each message but the calls' own its estimate, and it keeps
    no call: the usage counter stands, its arrays already counted."""
    if knobs.trigger_counter != "usage" or knobs.agent_estimate == "text":
        return knobs
    return knobs.replace(trigger_counter="estimate")


def request_instructions(history: History) -> Message | None:
    """Codex's base instructions, when the log has them (0.141+ log them in ``session_meta``, its first line; the
    reader makes them message 0): the Responses API request's ``instructions``, sent with every call and never part
    of the input history a compaction rebuilds (openai/codex codex-rs/core/src/compact_remote.rs: the replacement
    history holds input items only). None for any other log."""
    log = history.log
    if log is None or log.agent != "codex" or not history.messages:
        return None
    first = history.messages[0]
    return first if first.role == "system" and first.source_line == 1 else None


def measured_prefix(history: History, knobs: Knobs, cache: CountCache) -> int | None:
    """The hidden prefix of this log as its first call billed it: that call's input + cache reads + cache writes
    minus the counted messages before it (the estimate the knobs count with, Codex's instructions included:
    ``predict_after`` adds them). None without usage, or for a log that starts mid-session (its first call read
    context the file lacks)."""
    log = history.log
    if log is None or not log.calls or log.extra.get("starts_mid_session"):
        return None
    knobs = counting_knobs(knobs)
    first = log.calls[0]
    counted = _tokens(list(history.messages[: first.index]), knobs, cache, history) if first.index else 0
    return max(0, first.usage.context_tokens - counted)


def _is_agent_summary(msg: Message, real: LoggedCompaction) -> bool:
    return msg.meta("isCompactSummary") is True or (real.summary is not None and msg.text == real.summary)


def _tokens(messages: list[Message], knobs: Knobs, cache: CountCache, like: History) -> int:
    """The replay's tokens for a few messages (its trigger counter; never a call's bill: none of them is one)."""
    clean = [m.with_metadata(usage=None, usageTotal=None) if m.meta("usage") is not None else m for m in messages]
    part = like.part(":between", clean)
    return int(math.fsum(int(t) for t in trigger_tokens(cache.counts_for(part), knobs)))
