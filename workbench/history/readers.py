"""Read any supported history format into a History, detecting the format when not told.

One ``parse_<format>(text, source=...)`` per format; ``parse_history`` picks one. Readers take text and
return values. ``load_history`` is the only function here that reads a file (SQLite stores go through
``load_stagewise_sqlite``). Every bad input raises HistoryError naming file, line or item, and field.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.history.agent_logs import claude_code_from_records, codex_from_records, parse_claude_code, parse_codex
from workbench.history.chat_formats import (
    anthropic_from_document,
    openai_document_records,
    openai_from_records,
    parse_anthropic,
    parse_openai,
    parse_openai_jsonl,
)
from workbench.history.errors import HistoryError
from workbench.history.jsontext import (
    Record,
    array_records,
    gc_paused,
    history_id,
    json_problem,
    jsonl_records,
    load_json,
    locate,
    source_path,
    strip_bom,
    type_name,
)
from workbench.history.model import ROLES, History
from workbench.history.session_log import SessionLog
from workbench.history.stagewise_store import load_stagewise_sqlite
from workbench.history.superjson import decode_superjson, is_envelope
from workbench.history.uimessage import messages_from_uimessage_list
from workbench.history.writers import CANONICAL_KIND, CANONICAL_VERSION

__all__ = [
    "FORMATS",
    "detect_format",
    "list_format_names",
    "load_history",
    "load_stagewise_sqlite",
    "parse_anthropic",
    "parse_canonical",
    "parse_claude_code",
    "parse_codex",
    "parse_history",
    "parse_openai",
    "parse_openai_jsonl",
    "parse_stagewise",
]

# Every format name; "stagewise_sqlite" is a database file, so only load_history reads it.
FORMATS: tuple[str, ...] = (
    "canonical",
    "stagewise",
    "openai",
    "openai_jsonl",
    "anthropic",
    "claude_code",
    "codex",
    "stagewise_sqlite",
)
_JSONL_FORMATS = ("canonical", "openai_jsonl", "claude_code", "codex")
_JSON_FORMATS = ("stagewise", "openai", "anthropic")
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
                           "progress"})
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "messageId")
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_SQLITE_MAGIC = b"SQLite format 3\x00"
_GZIP_MAGIC = b"\x1f\x8b"
_NOT_JSON = object()


def list_format_names() -> list[str]:
    """Every format name ``parse_history``/``load_history`` accept."""
    return list(FORMATS)


# -- canonical JSONL and stagewise JSON (both UIMessages) ------------------------------------------


@gc_paused
def parse_canonical(text: str, *, source: str = "<text>") -> History:
    """Read our canonical JSONL: an optional header line, then one UIMessage per line."""
    return canonical_from_records(jsonl_records(text, source=source), source=source)


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
    for record in records:
        try:
            _check_uimessage(record[2])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
    messages = _convert_uimessages(records, source=source)
    if original is not None and original != "canonical":
        meta = {**meta, "original_format": original}
    return History(id=hid, messages=messages, source_format="canonical", source_path=source_path(source), meta=meta,
                   log=log)


def _header_log(obj: dict[str, Any]) -> SessionLog | None:
    raw = obj.get("log")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise HistoryError(f"must be an object, got {type_name(raw)}", field="log")
    try:
        return SessionLog.from_dict(raw)
    except (TypeError, ValueError, AttributeError) as exc:
        raise HistoryError(f"not a session log: {exc}", field="log") from None


def _header(obj: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    if obj.get("version") != CANONICAL_VERSION:
        raise HistoryError(f"unsupported version {obj.get('version')!r} (expected {CANONICAL_VERSION})", field="version")
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
        raise HistoryError(f"unknown role {role!r} (expected {', '.join(ROLES)})", field="role")
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
                                   f"a superjson 'json' (keys: {', '.join(list(doc)[:8])})")
            doc = doc[key]
            if isinstance(doc, str):  # a superjson cell stored as a string inside an export
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


# -- detection and dispatch ------------------------------------------------------------------------

_FROM_RECORDS: dict[str, Callable[..., History]] = {
    "canonical": canonical_from_records,
    "openai_jsonl": lambda records, *, source: openai_from_records(records, source=source, source_format="openai_jsonl"),
    "claude_code": claude_code_from_records,
    "codex": codex_from_records,
}
_FROM_DOCUMENT: dict[str, Callable[..., History]] = {
    "stagewise": stagewise_from_document,
    "openai": lambda doc, *, source: openai_from_records(openai_document_records(doc, source=source),
                                                         source=source, source_format="openai"),
    "anthropic": anthropic_from_document,
}


def detect_format(text: str, *, source: str = "<text>") -> str:
    """The name of the format ``text`` is in; raises HistoryError saying which formats were tried."""
    return _detect(text, source=source)[0]


def _detect(text: str, *, source: str) -> tuple[str, Any]:
    """(format, parsed value): a JSON document, or JSONL records, so nothing is parsed twice."""
    text = strip_bom(text)
    if not text.strip():
        raise HistoryError("empty file", source=source)
    doc: Any = _NOT_JSON
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        # "Extra data" after a first value means JSONL; a .jsonl file reports errors per line.
        if not (exc.msg.startswith("Extra data") or source.lower().endswith((".jsonl", ".ndjson"))):
            raise HistoryError(json_problem(exc, text), source=source, line=exc.lineno, column=exc.colno) from None
    if doc is not _NOT_JSON and not (isinstance(doc, dict) and _jsonl_kind(doc)):
        kind = _document_kind(doc)
        if kind is None:
            raise HistoryError(_unknown(doc, _JSON_FORMATS), source=source)
        return kind, doc
    records = jsonl_records(text, source=source)
    for record in records[:20]:
        if isinstance(record[2], dict):
            kind = _jsonl_kind(record[2])
            if kind is not None:
                return kind, records
    raise locate(HistoryError(_unknown(records[0][2], _JSONL_FORMATS)), records[0], source=source)


def _unknown(value: Any, tried: tuple[str, ...]) -> str:
    shape = f"an object with keys {', '.join(list(value)[:8])}" if isinstance(value, dict) else type_name(value)
    return f"unknown history format (tried {', '.join(tried)}; found {shape})"


def _jsonl_kind(obj: dict[str, Any]) -> str | None:
    """The JSONL format one line belongs to, or None."""
    if obj.get("kind") == CANONICAL_KIND:
        return "canonical"
    kind = obj.get("type")
    if isinstance(obj.get("payload"), dict) and isinstance(kind, str):
        return "codex"
    if isinstance(kind, str) and kind in _CLAUDE_TYPES and any(k in obj for k in _CLAUDE_KEYS):
        return "claude_code"
    if "role" in obj and "parts" in obj:
        return "canonical"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "openai_jsonl"
    return None


def _document_kind(doc: Any) -> str | None:
    """The JSON format of a whole document, judged from its container and its first messages."""
    if isinstance(doc, dict):
        if is_envelope(doc) or "history" in doc:
            return "stagewise"
        if "system" in doc and "messages" in doc:
            return "anthropic"
        items = doc.get("messages")
        if not isinstance(items, list):
            return None
    elif isinstance(doc, list):
        items = doc
    else:
        return None
    sample = [m for m in items[:50] if isinstance(m, dict)]
    if not items:
        return "stagewise"  # an empty array: every format agrees it is an empty history
    if any("parts" in m for m in sample):
        return "stagewise"
    if any(_has_anthropic_blocks(m.get("content")) for m in sample):
        return "anthropic"
    if any("role" in m for m in sample):
        return "openai"
    return None


def _has_anthropic_blocks(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, dict):
            kind = block.get("type")
            if isinstance(kind, str) and (kind in _ANTHROPIC_BLOCKS or (kind in ("image", "document") and "source" in block)):
                return True
    return False


@gc_paused
def parse_history(text: str, *, source: str = "<text>", format: str | None = None) -> History:
    """Read a history from text in any text format; ``format=None`` detects it."""
    if format is None:
        kind, parsed = _detect(text, source=source)
        if kind in _FROM_RECORDS:
            return _FROM_RECORDS[kind](parsed, source=source)
        return _FROM_DOCUMENT[kind](parsed, source=source)
    if format in _FROM_RECORDS:
        return _FROM_RECORDS[format](jsonl_records(text, source=source), source=source)
    if format in _FROM_DOCUMENT:
        return _FROM_DOCUMENT[format](load_json(text, source=source), source=source)
    if format == "stagewise_sqlite":
        raise HistoryError("stagewise_sqlite is a database file: use load_history(path) or load_stagewise_sqlite",
                           source=source)
    raise HistoryError(f"unknown format {format!r} (known: {', '.join(FORMATS)})", source=source)


def load_history(path: str | Path, *, format: str | None = None, chat_id: str | None = None) -> History:
    """Read a history file; a stagewise SQLite store needs ``chat_id`` unless it holds a single chat."""
    p = Path(path)
    source = str(p)
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    if format == "stagewise_sqlite" or (format is None and head == _SQLITE_MAGIC):
        return _one_chat(p, chat_id)
    gzipped = head[:2] == _GZIP_MAGIC
    if format in (None, "canonical") and not gzipped:
        streamed = _load_canonical_lines(p, source=source)
        if streamed is not None:
            return streamed
    data = p.read_bytes()
    if gzipped:  # agents' logs are often kept compressed (`.jsonl.gz`): read them as the text they hold
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise HistoryError(f"not a readable gzip file: {exc}", source=source) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise HistoryError(f"not UTF-8 text (byte {exc.start})", source=source, line=line) from None
    del data  # the text is a copy: parsing needs only it
    return parse_history(text, source=source, format=format)


@gc_paused
def _load_canonical_lines(path: Path, *, source: str) -> History | None:
    """Canonical JSONL read a line at a time; None when the first line is not our header.

    Reading the whole file holds its bytes, its text (two bytes a character as soon as one character
    is not Latin-1) and its lines besides the parsed values: seven times the file size at the peak
    for 100k messages, against three here. Results and errors are parse_history's, UTF-8 errors first.
    """
    keys: dict[str, str] = {}

    def share_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # json shares a key's string only within one line; sharing across the file saves a third of the
        # file size in memory for ~20% more parsing (the same dict: later duplicates win, first position).
        out: dict[str, Any] = {}
        for k, v in pairs:
            out[keys.setdefault(k, k)] = v
        return out

    decode = json.JSONDecoder(object_pairs_hook=share_keys).decode
    records: list[Record] = []
    with path.open("rb") as fh:
        offset = 0
        for number, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HistoryError(f"not UTF-8 text (byte {offset + exc.start})", source=source,
                                   line=number) from None
            offset += len(raw)
            if line.endswith("\n"):
                line = line[:-1]
            if number == 1:
                line = strip_bom(line)
            if not line or line.isspace():
                if number == 1:
                    return None
                continue
            try:
                # json.loads's own check (the decoder lacks it), so a stray BOM fails with its message
                value = json.loads(line) if line.startswith("\ufeff") else decode(line)
            except json.JSONDecodeError as exc:
                if number == 1:
                    return None
                _check_utf8(fh, offset, number + 1, source=source)  # the whole-text path reports these first
                raise HistoryError(json_problem(exc, line), source=source, line=number, column=exc.colno) from None
            if number == 1 and not (isinstance(value, dict) and value.get("kind") == CANONICAL_KIND):
                return None
            records.append((number, None, value))
    if not records:  # an empty file: the whole-text path says so
        return None
    return canonical_from_records(records, source=source)


def _check_utf8(fh: Any, offset: int, number: int, *, source: str) -> None:
    """Raise the not-UTF-8 error for the first bad line left in ``fh`` (line ``number`` on, at ``offset``)."""
    for line_number, raw in enumerate(fh, number):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HistoryError(f"not UTF-8 text (byte {offset + exc.start})", source=source,
                               line=line_number) from None
        offset += len(raw)


def _one_chat(path: Path, chat_id: str | None) -> History:
    if chat_id is not None:
        return load_stagewise_sqlite(path, chat_id=chat_id)
    chats = [h for h in load_stagewise_sqlite(path) if h.messages]
    if len(chats) == 1:
        return chats[0]
    listing = "; ".join(f"{h.id} ({h.meta.get('title') or 'untitled'}, {len(h)} messages)" for h in chats)
    raise HistoryError(f"holds {len(chats)} chats: pass chat_id= one of {listing}", source=str(path))
