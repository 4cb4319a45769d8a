"""Our canonical JSONL and stagewise's JSON: both hold AI SDK UIMessages, read the same way.

``parse_canonical`` reads an optional header line (id, meta, the session log of an agent's log written
back) and then one UIMessage per line; ``parse_stagewise`` a JSON array or an object holding one
(``messages``, ``history``, superjson). Text in, History out; every bad record raises HistoryError naming
its line or item and field. No I/O.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import ROLES, History
from workbench.history.readers.jsontext import (
    Record,
    array_records,
    check_depth,
    gc_paused,
    history_id,
    jsonl_records,
    load_json,
    locate,
    source_path,
    type_name,
)
from workbench.history.readers.superjson import decode_superjson, is_envelope
from workbench.history.readers.uimessage import message_from_uimessage, messages_from_uimessage_list
from workbench.history.session_log import SessionLog
from workbench.history.warnings import LoadWarning, capped, cut, shown, with_warnings
from workbench.history.writers import CANONICAL_KIND, CANONICAL_VERSION


@gc_paused
def parse_canonical(text: str, *, source: str = "<text>") -> History:
    """Read our canonical JSONL: an optional header line, then one UIMessage per line."""
    warnings: list[LoadWarning] = []
    records = jsonl_records(text, source=source, warnings=warnings)
    return with_warnings(canonical_from_records(records, source=source), warnings)


def canonical_from_records(records: list[Record], *, source: str) -> History:
    hid, original = history_id(source), None
    meta: dict[str, Any] = {}
    log: SessionLog | None = None
    first = records[0][2]
    if isinstance(first, dict) and first.get("kind") == CANONICAL_KIND:
        try:
            hid, meta, original = _header(first)
            log = _header_log(first)
        except HistoryError as exc:
            raise locate(exc, records[0], source=source) from None
        records = records[1:]
    warnings: list[LoadWarning] = []
    for record in records:
        try:
            _check_uimessage(record[2])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        if "parts" not in record[2] and ("content" in record[2] or "tool_calls" in record[2]):
            warnings.append(LoadWarning(source=source, line=record[0], where=record[1], field="parts",
                                        message="missing, but the line has 'content' (a chat-completions "
                                                "message?): its text is not read"))
    messages = _convert_uimessages(records, source=source)
    if original is not None and original != "canonical":
        meta = {**meta, "original_format": original}
    return History(id=hid, messages=messages, source_format="canonical", source_path=source_path(source), meta=meta,
                   log=log, warnings=capped(warnings, source=source))


def _header_log(obj: dict[str, Any]) -> SessionLog | None:
    raw = obj.get("log")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise HistoryError(f"must be an object, got {type_name(raw)}", field="log")
    try:
        return SessionLog.from_dict(raw, message=message_from_uimessage)
    except (TypeError, ValueError, AttributeError) as exc:
        raise HistoryError(f"not a session log: {exc}", field="log") from None


def _header(obj: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    if obj.get("version") != CANONICAL_VERSION:
        raise HistoryError(f"unsupported version {shown(obj.get('version'))} (expected {CANONICAL_VERSION})", field="version")
    hid = obj.get("id")
    if not isinstance(hid, str):
        raise HistoryError(f"must be a string, got {type_name(hid)}", field="id")
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise HistoryError(f"must be an object, got {type_name(meta)}", field="meta")
    original = obj.get("source_format")
    return hid, meta, original if isinstance(original, str) else None


def _check_uimessage(value: Any) -> None:
    """The shape every canonical line must have; parts themselves are kept as they are (stagewise allows junk)."""
    if not isinstance(value, dict):
        raise HistoryError(f"expected a UIMessage object, got {type_name(value)}")
    msg_id = value.get("id")
    if not isinstance(msg_id, str):
        raise HistoryError("missing" if msg_id is None else f"must be a string, got {type_name(msg_id)}", field="id")
    role = value.get("role")
    if not isinstance(role, str):
        raise HistoryError("missing" if role is None else f"must be a string, got {type_name(role)}", field="role")
    if role not in ROLES and role != "":  # "" is how the stagewise reader keeps a message that had no role
        raise HistoryError(f"unknown role {shown(role)} (expected {', '.join(ROLES)})", field="role")
    parts = value.get("parts")
    if parts is not None and not isinstance(parts, list):
        raise HistoryError(f"must be a list of parts, got {type_name(parts)}", field="parts")
    metadata = value.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise HistoryError(f"must be an object, got {type_name(metadata)}", field="metadata")


@gc_paused
def parse_stagewise(text: str, *, source: str = "<text>") -> History:
    """Read stagewise / AI SDK UIMessages: a JSON array, or an object holding one (``messages``, ``history``, superjson)."""
    return stagewise_from_document(load_json(text, source=source), source=source)


def stagewise_from_document(doc: Any, *, source: str) -> History:
    try:
        items = _unwrap_uimessages(doc)
    except HistoryError as exc:
        raise exc.located(source=source) from None
    records = array_records(items)
    messages = _convert_uimessages(records, source=source)
    nulls = len(items) - len(messages)
    meta = {"null_entries": nulls} if nulls else {}
    return History(id=history_id(source), messages=messages, source_format="stagewise",
                   source_path=source_path(source), meta=meta)


def _unwrap_uimessages(doc: Any) -> list[Any]:
    for _ in range(8):  # containers nest a few levels at most: {"history": {"json": [...], "meta": ...}}
        if isinstance(doc, list):
            return doc
        if is_envelope(doc):
            doc = decode_superjson(doc, field="json")
            continue
        if isinstance(doc, dict):
            key = next((k for k in ("messages", "history") if k in doc), None)
            if key is None:
                raise HistoryError("expected an array of UIMessages or an object with 'messages', 'history' or "
                                   f"a superjson 'json' (keys: {', '.join(cut(str(k), 40) for k in list(doc)[:8])})")
            doc = doc[key]
            if isinstance(doc, str):  # a superjson cell stored as a string inside an export
                check_depth(doc, source="", field=key)
                try:
                    doc = json.loads(doc)
                except json.JSONDecodeError as exc:
                    raise HistoryError(f"invalid JSON inside the string: {exc.msg}", field=key) from None
            continue
        raise HistoryError(f"expected an array of UIMessages, got {type_name(doc)}")
    raise HistoryError("UIMessages nested too deeply")


def _convert_uimessages(records: list[Record], *, source: str) -> tuple[Any, ...]:
    """Convert in one call (fast); on failure convert one by one to say which record was bad."""
    items = [r[2] for r in records]
    try:
        converted = messages_from_uimessage_list(items, source=source)
    except (HistoryError, ValueError, TypeError, KeyError, AttributeError) as exc:
        for record in records:
            try:
                messages_from_uimessage_list([record[2]], source=source)
            except HistoryError as inner:  # its "[0]" is the position in our one-item list: use ours
                raise HistoryError(inner.problem, source=source, line=record[0], where=record[1],
                                   field=inner.field) from None
            except (ValueError, TypeError, KeyError, AttributeError) as inner:
                raise locate(HistoryError(f"not a valid UIMessage ({inner})"), record, source=source) from None
        if isinstance(exc, HistoryError):
            raise exc.located(source=source) from None
        raise HistoryError(f"not a valid UIMessage list ({exc})", source=source) from None
    return tuple(m for m in converted if m is not None)
