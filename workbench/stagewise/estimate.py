"""stagewise's per-message token estimate (``estimateMessageTokens``), reproduced exactly.

tokens = ceil((content chars + 400) / 4), where content chars are UTF-16 lengths of text parts,
``JSON.stringify`` lengths of every other part, and metadata extras (env state, briefing, mentions,
attachments). Spec: stagewise.md section 5. No I/O; ``content_chars`` is memoised on the message so a
change of overhead or chars-per-token never re-reads it.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.history.jsjson import UNDEFINED, js_stringify_len, js_truthy, utf16_len
from workbench.history.model import Message, Part

PER_MESSAGE_OVERHEAD_CHARS = 400
ATTACHMENT_CHARS_EACH = 100
METADATA_ERROR_CHARS = 2000
CHARS_PER_TOKEN = 4.0

_NAN = math.nan
_CACHE_KEY = "_stagewise_content_chars"
_MISSING = object()


def _js_length(value: Any) -> int | float:
    """Return JS ``value.length``; NaN where JS would add ``undefined`` to a number."""
    if isinstance(value, str):
        return utf16_len(value)
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, dict):
        n = value.get("length")
        if isinstance(n, (int, float)) and not isinstance(n, bool):
            return n
    # (5).length, true.length and {}.length are undefined; a number plus undefined is NaN.
    # A string-valued {"length": "x"} would concatenate in JS; NaN is the closest number.
    return _NAN


def _part_chars(part: Any) -> int | float:
    if isinstance(part, dict):
        if part.get("type") == "text":
            text = part.get("text")
            if text is None or text is UNDEFINED:
                return 0
            return utf16_len(text) if isinstance(text, str) else _js_length(text)
        # The `in` operator: both keys present, whatever their values (only dynamic-tool in practice).
        if "toolName" in part and "input" in part:
            name = part["toolName"]
            chars = 0 if name is None or name is UNDEFINED else _js_length(name)
            chars += js_stringify_len(part["input"])
            output = part.get("output", UNDEFINED)
            if output is not UNDEFINED:
                chars += js_stringify_len(output)
            return chars
        return js_stringify_len(part)
    if isinstance(part, (list, tuple)):
        return js_stringify_len(part)
    # null.type throws and `'toolName' in "x"` throws: stagewise skips the part.
    return 0


def _env_entries(env: Any) -> list[Any]:
    if isinstance(env, dict):
        return list(env.values())
    if isinstance(env, (list, tuple)):
        return list(env)
    return []  # Object.values of a string gives strings, of a number nothing: no renderedState either way


def _metadata_chars(metadata: Any) -> int | float:
    """Return what ``estimateMetadataChars`` adds on top of the flat overhead."""
    if not isinstance(metadata, dict) or not metadata:
        return 0  # falsy metadata, or a non-object whose fields are all undefined
    chars: int | float = 0
    try:
        env = metadata.get("envState")
        if js_truthy(env):
            for entry in _env_entries(env):
                if isinstance(entry, dict):
                    rendered = entry.get("renderedState")
                    if js_truthy(rendered):
                        chars += _js_length(rendered)
                    change = entry.get("renderedStateChange")
                    if js_truthy(change):
                        chars += _js_length(change)
        briefing = metadata.get("compressedHistory")
        if js_truthy(briefing):
            chars += _js_length(briefing)
        mentions = metadata.get("mentions")
        if js_truthy(mentions):
            chars += js_stringify_len(mentions)
        attachments = metadata.get("attachments")
        if js_truthy(attachments):
            chars += _js_length(attachments) * ATTACHMENT_CHARS_EACH
    except Exception:  # noqa: BLE001 - stagewise adds a flat fallback for any malformed metadata
        chars += METADATA_ERROR_CHARS
    return chars


def content_chars(msg: Message | None) -> int | None:
    """Return the message's estimated chars without the flat overhead; None when stagewise counts 0.

    Memoised on the message (messages are immutable), so replays with other knobs never re-read it.
    NaN (a float) only where stagewise itself gets NaN: a non-string ``text`` such as a number.
    """
    if not msg:
        return None
    cached = msg.__dict__.get(_CACHE_KEY, _MISSING)
    if cached is not _MISSING:
        return cached
    chars = compute_content_chars(msg)
    object.__setattr__(msg, _CACHE_KEY, chars)
    # An int except where stagewise's JS computes NaN (a non-string text); typing every counter that reads
    # this as int | float for that one case would hide real mixups, so the NaN passes under the int type.
    return chars  # type: ignore[return-value]


def compute_content_chars(msg: Message) -> int | float | None:
    """``content_chars`` without memoising it on the message, for callers that keep their own cache.

    A memo grows each message's ``__dict__`` (~400 bytes); the count cache already keys by content.
    """
    parts = msg.parts
    if parts is None:
        return None
    return parts_chars(parts) + _metadata_chars(msg.metadata)


def parts_chars(parts: tuple[Part, ...]) -> int | float:
    """The parts' share of ``compute_content_chars``: a copy of a message with other metadata (its usage taken
    off) shares the parts tuple, so a cache keyed by it counts them once."""
    chars: int | float = 0
    for p in parts:
        chars += _part_chars(p.data)
    return chars


def metadata_chars(metadata: Any) -> int | float:
    """The metadata's share of ``compute_content_chars`` (of a message with parts)."""
    return _metadata_chars(metadata)


def stagewise_total_chars(msg: Message | None, overhead_chars: int = PER_MESSAGE_OVERHEAD_CHARS) -> int | None:
    """Return stagewise's ``totalChars`` for a message (overhead included); None when it estimates 0."""
    chars = content_chars(msg)
    return None if chars is None else chars + overhead_chars


def estimate_message_tokens(
    msg: Message | None,
    *,
    overhead_chars: int = PER_MESSAGE_OVERHEAD_CHARS,
    chars_per_token: float = CHARS_PER_TOKEN,
) -> int:
    """Return ``estimateMessageTokens(msg)``: ceil(total chars / chars per token), 0 without parts."""
    chars = content_chars(msg)
    if chars is None:
        return 0
    total = (chars + overhead_chars) / chars_per_token
    if total != total:
        return total  # type: ignore[return-value]  # NaN, as in JS (see content_chars)
    return math.ceil(total)
