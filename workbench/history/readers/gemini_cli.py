"""Gemini CLI's chat recording (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``) as a History.

Two layouts, read as @google/gemini-cli-core 0.61.0 reads them (services/chatRecordingService.js
``loadConversationRecord``): one JSON document ``{sessionId, projectHash, startTime, messages[]}``, or one record
per line: a metadata line, message records (a later record with the same ``id`` replaces the earlier one in its
place), ``{"$set": {...}}`` updates (``$set.messages`` replaces every message) and ``{"$rewindTo": id}`` (drops
that message and all after it). Messages are ``user``, ``gemini`` (with ``tokens`` and ``toolCalls``), ``info``,
``error``, ``warning``; only the first two reach the model. A chat compression is kept where the file shows it: a
user message holding the ``<state_snapshot>`` the compression wrote. Pure.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Part, text_part
from workbench.history.readers.agent_log_common import logged_calls, with_log
from workbench.history.readers.builder import HistoryBuilder
from workbench.history.readers.jsontext import (
    Record,
    check_depth,
    corrupt_line_warnings,
    gc_paused,
    jsonl_records,
    strip_bom,
    type_name,
)
from workbench.history.session_log import CallUsage, LoggedCompaction, SessionLog, token_count
from workbench.history.warnings import LoadWarning, shown, with_warnings

SNAPSHOT_TAG = "<state_snapshot>"
# The UI's line after a compression (0.61.0 bundle handleChatCompressionEvent; older releases said tokens).
_COMPRESSED_RE = re.compile(r"compressed from ([\d,]+)(%?) to ([\d,]+)(%| tokens)", re.IGNORECASE)
_SPEAKING = ("user", "gemini")
_NOTES = ("info", "error", "warning")


def is_gemini_record(obj: dict[str, Any]) -> bool:
    """Whether one JSONL record (or a whole document) belongs to a Gemini CLI chat recording."""
    if isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
        return True
    if isinstance(obj.get("$set"), dict) or isinstance(obj.get("$rewindTo"), str):
        return True
    return obj.get("type") == "gemini" and isinstance(obj.get("id"), str)


def is_gemini_document(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("sessionId"), str) and isinstance(doc.get("projectHash"), str)
            and isinstance(doc.get("messages"), list))


@gc_paused
def parse_gemini_cli(text: str, *, source: str = "<text>") -> History:
    """Read a Gemini CLI chat recording, either layout: one JSON document (the legacy ``.json``, read as the one
    record that holds its messages, as Gemini's own loader reads it) or a record per line."""
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []
    doc: Any = None
    body = strip_bom(text)
    if body.lstrip().startswith("{"):
        check_depth(body, source=source)
        try:
            doc = json.loads(body)
        except json.JSONDecodeError:
            doc = None  # not one document: a record per line
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return gemini_cli_from_records([(None, None, doc)], source=source)
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    warnings[:0] = corrupt_line_warnings("gemini_cli", corrupt, len(records))
    return with_warnings(gemini_cli_from_records(records, source=source), warnings)


def gemini_cli_from_records(records: list[Record], *, source: str) -> History:
    """Replay the records as Gemini CLI does: metadata merged, messages by id in first-seen order."""
    meta: dict[str, Any] = {}
    messages: dict[str, Record] = {}
    warnings: list[LoadWarning] = []
    for record in records:
        obj = record[2]
        if not isinstance(obj, dict):
            warnings.append(LoadWarning(source=source, line=record[0],
                                        message=f"not a record object ({type_name(obj)}): line skipped"))
            continue
        if isinstance(obj.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(obj["$rewindTo"]) if obj["$rewindTo"] in messages else 0
            for key in ids[cut:]:
                del messages[key]
        elif isinstance(obj.get("$set"), dict):
            update = obj["$set"]
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: (record[0], f"$set.messages[{j}]", m) for j, m in enumerate(update["messages"])
                            if isinstance(m, dict) and isinstance(m.get("id"), str)}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(obj.get("id"), str):
            messages[obj["id"]] = record
        elif isinstance(obj.get("sessionId"), str):
            meta.update({k: v for k, v in obj.items() if k != "messages"})
            for j, m in enumerate(obj.get("messages") or ()):
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    messages[m["id"]] = (record[0], f"messages[{j}]", m)
        else:
            warnings.append(LoadWarning(source=source, line=record[0],
                                        message="not a Gemini CLI record (no id, $set, $rewindTo or sessionId): "
                                                "line skipped"))
    return _build(meta, list(messages.values()), source=source, warnings=warnings)


def _build(meta: dict[str, Any], records: list[Record], *, source: str, warnings: list[LoadWarning]) -> History:
    reader = _Gemini(source)
    for record in records:
        try:
            reader.message(record)
        except HistoryError as exc:
            raise exc.located(source=source, line=record[0], where=record[1]) from None
    if not len(reader.b):
        raise HistoryError("no user or gemini messages (not a Gemini CLI session?)", source=source)
    kept = {k: v for k, v in meta.items() if isinstance(v, str) and k in ("sessionId", "projectHash", "startTime",
                                                                           "lastUpdated", "kind", "summary")}
    history = reader.b.build(source=source, source_format="gemini_cli",
                             meta={**kept, "notes": dict(reader.notes), "tool_calls": reader.b.calls})
    models = tuple(dict.fromkeys(m for msg in history.messages if isinstance(m := msg.meta("model"), str)))
    log = SessionLog(agent="gemini_cli", version=None, models=models, calls=logged_calls(history.messages),
                     compactions=tuple(reader.compactions), session_id=kept.get("sessionId"),
                     extra={"kind": kept["kind"]} if "kind" in kept else {})
    return with_warnings(with_log(history, log), [*warnings, *reader.warnings])


class _Gemini:
    """Turns recorded messages into Messages: a gemini message's tool calls become calls plus result messages."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.b = HistoryBuilder()
        self.warnings: list[LoadWarning] = []
        self.notes: Counter[str] = Counter()
        self.compactions: list[LoggedCompaction] = []
        self._last_prompt: int | None = None  # the last call's prompt tokens: what the compression compares
        self._record: Record | None = None

    def warn(self, field: str, message: str) -> None:
        r = self._record
        self.warnings.append(LoadWarning(source=self.source, line=r[0] if r else None, where=r[1] if r else None,
                                         field=field, message=message))

    def message(self, record: Record) -> None:
        self._record = record
        obj = record[2]
        if not isinstance(obj, dict):
            raise HistoryError(f"expected a message object, got {type_name(obj)}")
        kind = obj.get("type")
        stamp = obj.get("timestamp")
        metadata: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
        if record[0] is not None:
            metadata["sourceLine"] = record[0]
        if kind in _NOTES:
            self.notes[str(kind)] += 1
            text = _text(obj.get("content"))
            found = _COMPRESSED_RE.search(text) if text else None
            if found is not None:
                self.compression_note(found, metadata.get("createdAt"), record[0])
            return
        if kind == "user":
            self.user(obj, metadata, record[0])
        elif kind == "gemini":
            self.gemini(obj, metadata)
        else:
            raise HistoryError(f"unknown message type {shown(kind)} (expected user, gemini, info, error, warning)",
                               field="type")

    def user(self, obj: dict[str, Any], metadata: dict[str, Any], line: int | None) -> None:
        parts = _parts(obj.get("content"), "content")
        index = self.b.add("user", parts or [text_part("")], id=obj.get("id"), metadata=metadata or None)
        text = "\n".join(p.text or "" for p in parts if p.kind == "text")
        if SNAPSHOT_TAG in text:  # the compressed history starts with the snapshot the summarizer wrote
            note = self.compactions.pop() if self.compactions and self.compactions[-1].index == index \
                and self.compactions[-1].summary is None else None  # its UI line came first
            self.compactions.append(LoggedCompaction(
                source_line=line, index=index, trigger="auto",
                tokens_before=note.tokens_before if note else self._last_prompt,
                tokens_after=note.tokens_after if note else None,
                summary=text, summary_index=index, timestamp=metadata.get("createdAt")))

    def compression_note(self, found: re.Match[str], stamp: Any, line: int | None) -> None:
        """The UI's "compressed from N to M" line: the compaction right before it (its snapshot), or one the file
        records only so (no snapshot kept)."""
        tokens = found.group(4).strip() == "tokens"
        before = int(found.group(1).replace(",", "")) if tokens else None
        after = int(found.group(3).replace(",", "")) if tokens else None
        last = self.compactions[-1] if self.compactions else None
        if last is not None and last.summary is not None and last.index == len(self.b) - 1:
            self.compactions[-1] = dataclasses.replace(last, tokens_before=before or last.tokens_before,
                                                       tokens_after=after)
            return
        self.compactions.append(LoggedCompaction(source_line=line, index=len(self.b), trigger="auto",
                                                 tokens_before=before or self._last_prompt, tokens_after=after,
                                                 timestamp=stamp))

    def gemini(self, obj: dict[str, Any], metadata: dict[str, Any]) -> None:
        parts: list[Any] = []
        thoughts = obj.get("thoughts")
        if isinstance(thoughts, list):
            texts = [f"{t.get('subject') or ''}: {t.get('description') or ''}".strip(": ") for t in thoughts
                     if isinstance(t, dict)]
            if texts:
                parts.append(Part(data={"type": "reasoning", "text": "\n\n".join(texts)}))
        parts.extend(_parts(obj.get("content"), "content"))
        calls = obj.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            raise HistoryError(f"must be an array, got {type_name(calls)}", field="toolCalls")
        results: list[tuple[str, str, Any, bool]] = []
        for j, call in enumerate(calls or ()):
            if not isinstance(call, dict):
                raise HistoryError(f"must be an object, got {type_name(call)}", field=f"toolCalls[{j}]")
            name, call_id = call.get("name"), call.get("id")
            if not isinstance(name, str) or not name:
                raise HistoryError(f"must be a non-empty string, got {type_name(name)}", field=f"toolCalls[{j}].name")
            if not isinstance(call_id, str):
                call_id = f"{obj.get('id')}-{j}"
            parts.append(self.b.call(name, call_id, call.get("args")))
            results.append((name, call_id, _result_output(call.get("result")), call.get("status") == "error"))
        model = obj.get("model")
        if isinstance(model, str):
            metadata["model"] = model
        usage = self.usage(obj.get("tokens"))
        if usage is not None:
            metadata["usage"] = usage.to_dict()
        self.b.add("assistant", parts or [text_part("")], id=obj.get("id"), metadata=metadata or None)
        for name, call_id, output, failed in results:
            self.b.result(name, call_id, output, is_error=failed)

    def usage(self, tokens: Any) -> CallUsage | None:
        """``tokens``: ``input`` (the prompt, cached included), ``cached``, ``output``, ``thoughts``, ``tool``
        (the tool-use prompt) and ``total``, as the Gemini API's usageMetadata counts them."""
        if not isinstance(tokens, dict):
            return None
        values: dict[str, int] = {}
        for key in ("input", "output", "cached", "thoughts", "tool", "total"):
            value = tokens.get(key)
            if value is None:
                continue
            count = token_count(value)
            if count is None:
                self.warn(f"tokens.{key}", f"not a token count ({shown(value, 40)}): this call's usage ignored")
                return None
            values[key] = count
        prompt = values.get("input", 0)
        cached = min(values.get("cached", 0), prompt)
        self._last_prompt = prompt + values.get("tool", 0)
        # Gemini measures its context by the last prompt's count (chatCompressionService getLastPromptTokenCount),
        # not the call's total: that is the total the agent's measure reads (``CallUsage.total_tokens``).
        out = CallUsage(input_tokens=prompt - cached + values.get("tool", 0), cache_read_tokens=cached,
                        output_tokens=values.get("output", 0) + values.get("thoughts", 0),
                        reasoning_tokens=values.get("thoughts", 0), logged_total=self._last_prompt or None)
        return out if out.total_tokens > 0 else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _parts(content: Any, field: str) -> list[Part]:
    """A recorded ``PartListUnion`` (a string, or parts with ``text``, ``inlineData``, ``fileData``) as Parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [text_part(content)] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise HistoryError(f"must be a string or a list of parts, got {type_name(content)}", field=field)
    out: list[Part] = []
    for part in content:
        if isinstance(part, str):
            out.append(text_part(part))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(text_part(part["text"]))
        elif isinstance(part, dict) and isinstance(blob := part.get("inlineData") or part.get("fileData"), dict):
            mime = blob.get("mimeType") if isinstance(blob.get("mimeType"), str) else "application/octet-stream"
            url = blob.get("fileUri") if isinstance(blob.get("fileUri"), str) else (
                f"data:{mime};base64,{blob['data']}" if isinstance(blob.get("data"), str) else "")
            out.append(Part(data={"type": "file", "mediaType": mime, "url": url}))
        elif isinstance(part, dict) and part:
            out.append(Part(data=part))
    return out


def _result_output(result: Any) -> Any:
    """A tool call's recorded ``result`` (``functionResponse`` parts) as the output the model read."""
    if not isinstance(result, list):
        return result if result is not None else ""
    outputs = []
    for part in result:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict) and "output" in body:
            outputs.append(body["output"])
        elif isinstance(body, dict) and "error" in body:
            outputs.append(body["error"])
        elif body is not None:
            outputs.append(body)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            outputs.append(part["text"])
    if len(outputs) == 1:
        return outputs[0]
    return "\n".join(o if isinstance(o, str) else str(o) for o in outputs)
