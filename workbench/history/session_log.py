"""What an agent's own session log says beyond the transcript: billed usage, version, logged compactions.

Claude Code, Codex CLI, OpenCode, Copilot CLI, Gemini CLI and Pi logs carry, per model call, the provider's billed usage (which includes the hidden
prefix every call sends: system prompt, tool schemas, rules files), the agent's version and model, and every
compaction the agent performed with its real summary. Readers keep them as these frozen values so that the
counters can be calibrated from them and ``workbench reality`` can check a replay against them. Pure values
with ``to_dict``/``from_dict`` (the canonical JSONL header stores them); no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.history.fast_init import dict_init

Agent = Literal["claude_code", "codex", "opencode", "copilot_cli", "gemini_cli", "pi"]
AGENTS: tuple[Agent, ...] = ("claude_code", "codex", "opencode", "copilot_cli", "gemini_cli", "pi")
START_NOTE_PREFIX = "the log starts"  # how ``SessionLog.start_note`` begins
Trigger = Literal["auto", "manual"]


# A token count is a whole number from 0 to this: far above any bill (a 10M-token window, a session's running sum
# of billions), far below where a float stops holding whole numbers (2**53) or an int64 overflows.
MAX_TOKEN_COUNT = 10**13
# A file's line count (Claude Code's Read results) above this is no count: its ratio to the lines shown would scale
# a re-read file past any window, or past what a float holds.
MAX_FILE_LINES = 10**8
# The numbers of a usage dict the readers take (Anthropic's and OpenAI's names); other keys are not read.
USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens",
              "cached_input_tokens", "reasoning_output_tokens", "total_tokens")


# The keys of ``CallUsage.to_dict``: a usage in this shape is read as is.
_OWN_KEYS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens",
             "logged_total")


def token_count(value: Any) -> int | None:
    """``value`` as a token count; None when it is not one: a bool, a string, a negative, fractional, non-finite or
    absurd number (``Infinity``, ``NaN``, ``1e400``, ``10**30`` in a corrupt or hand-edited log)."""
    if type(value) is int:  # nearly every value a log holds (a bool's type is bool)
        return value if 0 <= value <= MAX_TOKEN_COUNT else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_TOKEN_COUNT else None
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_TOKEN_COUNT:  # NaN, inf: not integer
        return int(value)
    return None


def usage_problem(usage: dict[str, Any]) -> str | None:
    """The first key of ``usage`` the readers take whose value (not null) is not a token count; None when all are."""
    get = usage.get
    for key in USAGE_KEYS:
        value = get(key)
        if value is None or (type(value) is int and 0 <= value <= MAX_TOKEN_COUNT):  # token_count's common case
            continue
        if token_count(value) is None:
            return key
    return None


def _int(value: Any) -> int:
    """A count from a stored value, 0 for anything that is not one (a hostile file must not crash a reader)."""
    count = token_count(value)
    return 0 if count is None else count


def _optional_int(value: Any) -> int | None:
    return None if value is None else token_count(value)


@dict_init
@dataclass(frozen=True, kw_only=True)
class CallUsage:
    """One model call as the provider billed it, in one shape for Anthropic and OpenAI.

    ``input_tokens`` is the uncached input billed at the full rate; ``cache_read_tokens`` and
    ``cache_write_tokens`` the cached parts (OpenAI's ``input_tokens`` includes its cached tokens; they are
    split out here). ``reasoning_tokens`` is the part of ``output_tokens`` spent reasoning (OpenAI).
    ``logged_total`` is the log's own total where it has one (Codex ``total_tokens``).
    """

    input_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    logged_total: int | None = None

    @property
    def context_tokens(self) -> int:
        """Everything the call read: what the context held when it was sent."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        """What the context holds once the answer is in: the call's input plus its output."""
        return self.logged_total if self.logged_total is not None else self.context_tokens + self.output_tokens

    @classmethod
    def from_anthropic(cls, usage: dict[str, Any]) -> CallUsage:
        """``message.usage`` of the Anthropic Messages API (as Claude Code logs it)."""
        return cls(
            input_tokens=_int(usage.get("input_tokens")),
            cache_read_tokens=_int(usage.get("cache_read_input_tokens")),
            cache_write_tokens=_int(usage.get("cache_creation_input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
        )

    @classmethod
    def from_openai(cls, usage: dict[str, Any]) -> CallUsage:
        """A Responses API usage as Codex logs it (``token_count``: ``input_tokens`` includes the cached ones)."""
        cached = _int(usage.get("cached_input_tokens"))
        total = usage.get("total_tokens")
        return cls(
            input_tokens=max(0, _int(usage.get("input_tokens")) - cached),
            cache_read_tokens=cached,
            output_tokens=_int(usage.get("output_tokens")),
            reasoning_tokens=_int(usage.get("reasoning_output_tokens")),
            logged_total=token_count(total),
        )

    @classmethod
    def from_logged(cls, usage: Any) -> CallUsage | None:
        """Either provider's usage dict, recognised by its keys; None for anything else, and for a usage of all
        zeros: no call was billed (Claude Code's ``<synthetic>`` messages, e.g. an interrupted request)."""
        if not isinstance(usage, dict) or usage_problem(usage) is not None:  # one bad number spoils the call's usage
            return None
        if "cache_read_tokens" in usage:  # our own shape (``to_dict``): what the OpenCode, Gemini and Pi readers store
            if any(token_count(usage.get(k)) is None for k in _OWN_KEYS if usage.get(k) is not None):
                return None
            out = cls.from_dict(usage)
        elif "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
            out = cls.from_anthropic(usage)
        elif "cached_input_tokens" in usage or "reasoning_output_tokens" in usage or "total_tokens" in usage:
            out = cls.from_openai(usage)
        elif "input_tokens" in usage:
            out = cls.from_anthropic(usage)
        else:
            return None
        return out if out.total_tokens > 0 else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input_tokens": self.input_tokens, "cache_read_tokens": self.cache_read_tokens,
                               "cache_write_tokens": self.cache_write_tokens, "output_tokens": self.output_tokens,
                               "reasoning_tokens": self.reasoning_tokens}
        if self.logged_total is not None:
            out["logged_total"] = self.logged_total
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallUsage:
        total = data.get("logged_total")
        return cls(input_tokens=_int(data.get("input_tokens")), cache_read_tokens=_int(data.get("cache_read_tokens")),
                   cache_write_tokens=_int(data.get("cache_write_tokens")),
                   output_tokens=_int(data.get("output_tokens")), reasoning_tokens=_int(data.get("reasoning_tokens")),
                   logged_total=_optional_int(total))


@dict_init
@dataclass(frozen=True, kw_only=True)
class LoggedCall:
    """One model call of the log: the assistant message it produced, where, and what it cost."""

    index: int  # the assistant message (the loader's numbering)
    source_line: int | None
    usage: CallUsage
    model: str | None = None
    cumulative: CallUsage | None = None  # Codex total_token_usage: the session's running sum after this call

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "source_line": self.source_line, "usage": self.usage.to_dict()}
        if self.model is not None:
            out["model"] = self.model
        if self.cumulative is not None:
            out["cumulative"] = self.cumulative.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoggedCall:
        cum, model = data.get("cumulative"), data.get("model")
        return cls(index=_int(data.get("index")), source_line=_optional_int(data.get("source_line")),
                   usage=CallUsage.from_dict(data.get("usage") or {}),
                   model=model if isinstance(model, str) else None,
                   cumulative=CallUsage.from_dict(cum) if isinstance(cum, dict) else None)


@dataclass(frozen=True, kw_only=True)
class LoggedCompaction:
    """A compaction the agent itself performed, as its log recorded it.

    ``index`` is the first message after it (the loader's numbering). ``tokens_before`` is what the agent
    logged as the context size when it fired: Claude Code's ``compactMetadata.preTokens``, or for Codex the
    last call's ``total_tokens`` before it. ``summary`` is the real summary text (Claude Code's compact-summary
    message; Codex's remote compaction is an encrypted item, so None there). ``kept`` holds what the agent
    carried into the new context besides the summary (Codex ``replacement_history`` as messages, the encrypted
    compaction item excluded) and ``tokens_after`` the agent's logged estimate of the new context (Codex).
    """

    source_line: int | None
    index: int
    trigger: Trigger
    tokens_before: int | None = None
    tokens_after: int | None = None
    summary: str | None = None
    summary_index: int | None = None  # the summary's own message, when the transcript holds it (Claude Code)
    kept: tuple[Any, ...] = ()  # Messages (typed Any to keep this module below model.py)
    opaque_items: int = 0  # encrypted compaction items in the replacement (Codex remote compaction)
    timestamp: str | None = None
    # The record the agent compacted after is not in the file (Claude Code's logicalParentUuid points nowhere):
    # what the agent counted last before compacting, e.g. a tool result, is missing from the log.
    parent_missing: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"source_line": self.source_line, "index": self.index, "trigger": self.trigger,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after, "summary": self.summary,
                "summary_index": self.summary_index, "kept": [m.to_dict() for m in self.kept],
                "opaque_items": self.opaque_items, "timestamp": self.timestamp, "parent_missing": self.parent_missing}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, message: Callable[[dict[str, Any]], Any]) -> LoggedCompaction:
        """``message`` reads one kept message (the reader's UIMessage reader: this module sits below the messages)."""
        trigger: Trigger = "manual" if data.get("trigger") == "manual" else "auto"
        summary = data.get("summary")
        stamp = data.get("timestamp")
        return cls(source_line=_optional_int(data.get("source_line")), index=_int(data.get("index")), trigger=trigger,
                   tokens_before=_optional_int(data.get("tokens_before")),
                   tokens_after=_optional_int(data.get("tokens_after")),
                   summary=summary if isinstance(summary, str) else None,
                   summary_index=_optional_int(data.get("summary_index")),
                   kept=tuple(message(m) for m in data.get("kept") or () if isinstance(m, dict)),
                   opaque_items=_int(data.get("opaque_items")), timestamp=stamp if isinstance(stamp, str) else None,
                   parent_missing=data.get("parent_missing") is True)


@dataclass(frozen=True, kw_only=True)
class LoggedPrune:
    """Tool outputs the agent cleared from its context without compacting, as its log recorded it (OpenCode's
    prune stamps each cleared output's ``state.time.compacted``): from message ``index`` on (the first message
    logged after the stamp), the tool outputs of the messages ``messages`` are stubs."""

    index: int
    messages: tuple[int, ...]
    timestamp: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "messages": list(self.messages), "timestamp": self.timestamp}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoggedPrune:
        stamp = data.get("timestamp")
        raw = data.get("messages")
        return cls(index=_int(data.get("index")),
                   messages=tuple(_int(m) for m in raw if token_count(m) is not None) if isinstance(raw, list) else (),
                   timestamp=stamp if isinstance(stamp, str) else None)


@dataclass(frozen=True, kw_only=True)
class SessionLog:
    """Everything an agent's own log adds to the transcript, for one session."""

    agent: Agent
    version: str | None = None
    models: tuple[str, ...] = ()
    window_logged: int | None = None  # Codex model_context_window (the raw window x 95%)
    calls: tuple[LoggedCall, ...] = ()
    compactions: tuple[LoggedCompaction, ...] = ()
    session_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    prunes: tuple[LoggedPrune, ...] = ()  # tool outputs the agent cleared without compacting (OpenCode)

    @property
    def model(self) -> str | None:
        """The model most calls used (the first one logged when there is no call)."""
        if self.calls:
            counts: dict[str, int] = {}
            for call in self.calls:
                if call.model:
                    counts[call.model] = counts.get(call.model, 0) + 1
            if counts:
                return max(counts, key=lambda m: counts[m])
        return self.models[0] if self.models else None

    @property
    def start_note(self) -> str | None:
        """What the file lacks at its start, in a sentence: a log that starts mid-session (its first record's
        parent is not in the file, so its first call read more context than the transcript holds) or at a
        compaction (no message before it); None for a log that starts at the session's start."""
        if self.extra.get("starts_mid_session"):
            return f"{START_NOTE_PREFIX} mid-session: its first call read more context than the transcript holds"
        if any(c.index == 0 for c in self.compactions):
            return f"{START_NOTE_PREFIX} at a compaction: the context it summarised is not in the file"
        return None

    @property
    def starts_mid_session(self) -> bool:
        """Whether the log's earlier context is not in the file (``start_note``)."""
        return self.start_note is not None

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "version": self.version, "models": list(self.models),
                "window_logged": self.window_logged, "session_id": self.session_id,
                "calls": [c.to_dict() for c in self.calls], "compactions": [c.to_dict() for c in self.compactions],
                "extra": self.extra, **({"prunes": [p.to_dict() for p in self.prunes]} if self.prunes else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, message: Callable[[dict[str, Any]], Any]) -> SessionLog:
        """The log a canonical header stores; ``message`` reads the messages a compaction kept."""
        raw = data.get("agent")
        agent: Agent = next((a for a in AGENTS if a == raw), "claude_code")
        version, session = data.get("version"), data.get("session_id")
        return cls(agent=agent, version=version if isinstance(version, str) else None,
                   models=tuple(m for m in data.get("models") or () if isinstance(m, str)),
                   window_logged=_optional_int(data.get("window_logged")),
                   session_id=session if isinstance(session, str) else None,
                   calls=tuple(LoggedCall.from_dict(c) for c in data.get("calls") or ()),
                   compactions=tuple(LoggedCompaction.from_dict(c, message=message)
                                     for c in data.get("compactions") or ()),
                   extra=dict(data.get("extra") or {}),
                   prunes=tuple(LoggedPrune.from_dict(p) for p in data.get("prunes") or () if isinstance(p, dict)))


def parse_version(text: str | None) -> tuple[int, ...]:
    """``"2.1.25"`` -> ``(2, 1, 25)``; anything unparsable sorts first. A pre-release or build suffix is dropped
    (``"0.119.0-alpha.28"`` -> ``(0, 119, 0)``, not ``(0, 119, 0, 28)``): its code is that release's line."""
    if not text:
        return ()
    out = []
    for piece in text.strip().lstrip("v").split("-", 1)[0].split("+", 1)[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)
