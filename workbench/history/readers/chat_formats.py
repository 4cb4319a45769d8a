"""Readers for provider chat logs: OpenAI chat-completions (JSON or JSONL) and Anthropic Messages.

Both put tool results in their own messages; they become role ``tool`` messages holding a
``tool-result`` part, and the assistant's call becomes a static ``tool-<name>`` part whose state says
whether a result came back. The neutral format of ``shared/real_histories`` is the OpenAI shape with
flat ``tool_calls[].{id,name,arguments}``. Text in, History out; no I/O.
"""

from __future__ import annotations

from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Part, text_part
from workbench.history.readers.builder import HistoryBuilder, parse_arguments
from workbench.history.readers.jsontext import (
    Record,
    array_records,
    gc_paused,
    jsonl_records,
    load_json,
    locate,
    optional_str,
    require_object,
    type_name,
)
from workbench.history.warnings import LoadWarning, shown, with_warnings

_OPENAI_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant",
                 "tool": "tool", "function": "tool"}
_EXPECTED_ROLES = "expected system, user, assistant, tool"


# -- OpenAI ---------------------------------------------------------------------------------------


@gc_paused
def parse_openai(text: str, *, source: str = "<text>") -> History:
    """Read an OpenAI chat-completions message list (``[...]`` or ``{"messages": [...]}``)."""
    records = openai_document_records(load_json(text, source=source), source=source)
    return openai_from_records(records, source=source, source_format="openai")


@gc_paused
def parse_openai_jsonl(text: str, *, source: str = "<text>") -> History:
    """Read chat-completions messages one per line (the neutral format of ``shared/real_histories``)."""
    warnings: list[LoadWarning] = []
    records = jsonl_records(text, source=source, warnings=warnings)
    return with_warnings(openai_from_records(records, source=source, source_format="openai_jsonl"), warnings)


def openai_document_records(doc: Any, *, source: str) -> list[Record]:
    """The message records of a chat-completions document: a bare list or a request body."""
    if isinstance(doc, dict) and "messages" in doc:
        doc = doc["messages"]
        if not isinstance(doc, list):
            raise HistoryError(f"must be an array of messages, got {type_name(doc)}", source=source, field="messages")
    if not isinstance(doc, list):
        raise HistoryError(f"expected an array of messages or an object with 'messages', got {type_name(doc)}",
                           source=source)
    return array_records(doc)


def openai_from_records(records: list[Record], *, source: str, source_format: str) -> History:
    b = HistoryBuilder()
    warnings: list[LoadWarning] = []
    for record in records:
        try:
            _openai_message(b, record[2])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        value = record[2]
        if isinstance(value, dict) and "parts" in value and "content" not in value and "tool_calls" not in value:
            warnings.append(LoadWarning(source=source, line=record[0], where=record[1], field="parts",
                                        message="a UIMessage (it has 'parts', no 'content') among chat-completions "
                                                "messages: its parts are not read, it loads as an empty message"))
    history = b.build(source=source, source_format=source_format, meta={"tool_calls": b.calls})
    return with_warnings(history, warnings)


def _openai_message(b: HistoryBuilder, value: Any) -> None:
    m = require_object(value)
    raw_role = m.get("role")
    if not isinstance(raw_role, str):
        raise HistoryError("missing" if raw_role is None else f"must be a string, got {type_name(raw_role)}",
                           field="role")
    role = _OPENAI_ROLES.get(raw_role)
    if role is None:
        raise HistoryError(f"unknown role {shown(raw_role)} ({_EXPECTED_ROLES})", field="role")
    msg_id = m.get("id")
    content = m.get("content")
    if role == "tool":
        call_id = optional_str(m, "tool_call_id")
        name = optional_str(m, "name")
        b.result(name, call_id, _tool_output(content, field="content"), id=msg_id)
        return
    parts: list[Any] = []
    reasoning = m.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        parts.append(Part(data={"type": "reasoning", "text": reasoning}))
    parts.extend(_openai_content(content))
    refusal = m.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(text_part(refusal))
    calls = m.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise HistoryError(f"must be a list, got {type_name(calls)}", field="tool_calls")
        for j, call in enumerate(calls):
            parts.append(_openai_call(b, call, field=f"tool_calls[{j}]"))
    if not parts:
        parts.append(text_part(""))
    b.add(role, parts, id=msg_id)


def _openai_call(b: HistoryBuilder, call: Any, *, field: str) -> Any:
    if not isinstance(call, dict):
        raise HistoryError(f"must be an object, got {type_name(call)}", field=field)
    fn = call.get("function")
    if isinstance(fn, dict):  # the real API shape: {id, type: function, function: {name, arguments}}
        holder, prefix = fn, f"{field}.function"
    else:
        holder, prefix = call, field
    name = holder.get("name")
    if not isinstance(name, str) or not name:
        raise HistoryError(f"must be a non-empty string, got {type_name(name)}", field=f"{prefix}.name")
    call_id = call.get("id")
    if not isinstance(call_id, str):
        raise HistoryError(f"must be a string, got {type_name(call_id)}", field=f"{field}.id")
    return b.call(name, call_id, parse_arguments(holder.get("arguments")))


def _openai_content(content: Any) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_part(content)] if content else []
    if not isinstance(content, list):
        raise HistoryError(f"must be a string or a list of blocks, got {type_name(content)}", field="content")
    parts = []
    for j, block in enumerate(content):
        if isinstance(block, str):
            parts.append(text_part(block))
            continue
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise HistoryError(f"must be an object with a 'type', got {type_name(block)}", field=f"content[{j}]")
        kind = block["type"]
        if kind in ("text", "input_text", "output_text"):
            parts.append(text_part(_block_text(block, field=f"content[{j}].text")))
        elif kind == "image_url":
            image = block.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            parts.append(file_part(url if isinstance(url, str) else "", None, None))
        else:
            parts.append(Part(data=block))  # audio, files, provider blocks: kept as they are
    return parts


def _block_text(block: dict[str, Any], *, field: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise HistoryError(f"must be a string, got {type_name(text)}", field=field)
    return text


def _tool_output(content: Any, *, field: str) -> Any:
    """A tool result's output: its text, text blocks joined by newlines, or other blocks as they are."""
    if content is None or isinstance(content, str):
        return content if content is not None else ""
    if not isinstance(content, list):
        raise HistoryError(f"must be a string or a list of blocks, got {type_name(content)}", field=field)
    if all(isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text") for b in content):
        return "\n".join(str(b.get("text", "")) for b in content)
    return content


def file_part(url: str, media_type: str | None = None, filename: str | None = None) -> Part:
    """An AI SDK file part; the media type comes from a data URL when not given."""
    if media_type is None:
        media_type = url[5:].split(";", 1)[0] if url.startswith("data:") else "image/*"
    data: dict[str, Any] = {"type": "file", "mediaType": media_type}
    if filename:
        data["filename"] = filename
    data["url"] = url
    return Part(data=data)


# -- Anthropic ------------------------------------------------------------------------------------


@gc_paused
def parse_anthropic(text: str, *, source: str = "<text>") -> History:
    """Read an Anthropic Messages request (``{"system", "messages"}``) or a bare list of its messages."""
    return anthropic_from_document(load_json(text, source=source), source=source)


def anthropic_from_document(doc: Any, *, source: str) -> History:
    b = HistoryBuilder()
    if isinstance(doc, dict):
        if "messages" not in doc:
            raise HistoryError("expected an object with 'messages' or an array of messages", source=source)
        system, items = doc.get("system"), doc["messages"]
        if not isinstance(items, list):
            raise HistoryError(f"must be an array of messages, got {type_name(items)}", source=source,
                               field="messages")
    elif isinstance(doc, list):
        system, items = None, doc
    else:
        raise HistoryError(f"expected an array of messages or an object with 'messages', got {type_name(doc)}",
                           source=source)
    if system is not None:
        try:
            b.add("system", _anthropic_text_blocks(system, field="system"))
        except HistoryError as exc:
            raise exc.located(source=source) from None
    for record in array_records(items):
        try:
            _anthropic_message(b, record[2])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
    return b.build(source=source, source_format="anthropic", meta={"tool_calls": b.calls})


def _anthropic_text_blocks(system: Any, *, field: str) -> list[Part]:
    if isinstance(system, str):
        return [text_part(system)]
    if not isinstance(system, list):
        raise HistoryError(f"must be a string or a list of blocks, got {type_name(system)}", field=field)
    return [text_part(_block_text(require_object(b, what="a text block"), field=f"{field}[{j}].text"))
            for j, b in enumerate(system)]


def _anthropic_message(b: HistoryBuilder, value: Any) -> None:
    m = require_object(value)
    role = m.get("role")
    if role not in ("user", "assistant"):
        problem = "missing" if role is None else f"unknown role {shown(role)} (expected user, assistant)"
        raise HistoryError(problem, field="role")
    add_anthropic_content(b, role, m.get("content"), id=m.get("id"), metadata=None)


def add_anthropic_content(
    b: HistoryBuilder, role: str, content: Any, *, id: Any, metadata: dict[str, Any] | None,
    merge_into: int | None = None,
) -> None:
    """Add one Anthropic message: assistant blocks become parts; user tool_result blocks become tool messages.

    Text around tool results stays in order: blocks before a tool_result form a user message, then the
    tool message, then any later blocks. ``merge_into`` extends an earlier assistant message instead.
    """
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        raise HistoryError(f"must be a string or a list of blocks, got {type_name(content)}", field="content")
    pending: list[Any] = []
    used_id = False

    def flush() -> None:
        nonlocal pending, used_id
        if not pending:
            return
        if merge_into is not None:
            b.extend(merge_into, pending, metadata=metadata)
        else:
            b.add(role, pending, id=None if used_id else id, metadata=metadata)
            used_id = True
        pending = []

    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            raise HistoryError(f"must be an object with a 'type', got {type_name(block)}", field=f"content[{j}]")
        if kind == "text" and isinstance(text := block.get("text"), str):
            pending.append(text_part(text))  # the commonest block, without building its field's name (an error's)
        elif kind == "tool_result" and role == "user":
            flush()
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                raise HistoryError(f"must be a string, got {type_name(call_id)}", field=f"content[{j}].tool_use_id")
            b.result(None, call_id, _tool_output(block.get("content"), field=f"content[{j}].content"),
                     is_error=block.get("is_error") is True, id=None if used_id else id, metadata=metadata)
            used_id = True
        else:
            pending.append(_anthropic_part(b, block, field=f"content[{j}]"))
    if pending or (merge_into is None and not used_id):
        if not pending:
            pending.append(text_part(""))
        flush()


def _anthropic_part(b: HistoryBuilder, block: dict[str, Any], *, field: str) -> Any:
    kind = block["type"]
    if kind == "text":
        return text_part(_block_text(block, field=f"{field}.text"))
    if kind == "tool_use":
        name, call_id = block.get("name"), block.get("id")
        if not isinstance(name, str) or not name:
            raise HistoryError(f"must be a non-empty string, got {type_name(name)}", field=f"{field}.name")
        if not isinstance(call_id, str):
            raise HistoryError(f"must be a string, got {type_name(call_id)}", field=f"{field}.id")
        return b.call(name, call_id, block.get("input"))
    if kind == "thinking":
        data: dict[str, Any] = {"type": "reasoning", "text": str(block.get("thinking") or "")}
        if block.get("signature"):
            data["providerMetadata"] = {"anthropic": {"signature": block["signature"]}}
        return Part(data=data)
    if kind == "redacted_thinking":
        return Part(data={"type": "reasoning", "text": "",
                          "providerMetadata": {"anthropic": {"redactedData": block.get("data", "")}}})
    if kind in ("image", "document"):
        src = block.get("source")
        if not isinstance(src, dict):
            raise HistoryError(f"must be an object, got {type_name(src)}", field=f"{field}.source")
        media = src.get("media_type")
        if src.get("type") == "base64":
            url = f"data:{media};base64,{src.get('data', '')}"
        else:
            url = str(src.get("url") or src.get("file_id") or "")
        default = "image/*" if kind == "image" else "application/pdf"
        return file_part(url, media if isinstance(media, str) else default, block.get("title"))
    return Part(data=block)  # server tool blocks, citations, unknown future blocks: kept verbatim
