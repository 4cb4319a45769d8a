"""Read any supported history format into a History, detecting the format when not told.

One ``parse_<format>(text, source=...)`` per format; ``parse_history`` picks one. Readers take text and
return values. ``load_history`` is the only function here that reads a file (SQLite stores go through
``load_stagewise_sqlite``). Every bad input raises HistoryError naming file, line or item, and field.
"""

from __future__ import annotations

import json
import os
import stat
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
    check_depth,
    cut_off_warning,
    gc_paused,
    history_id,
    json_problem,
    jsonl_bytes_records,
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
from workbench.history.warnings import LoadWarning, capped, cut, shown, with_warnings
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
        return SessionLog.from_dict(raw)
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
    return _detect(text, source=source, warnings=[])[0]


def _detect(text: str, *, source: str, warnings: list[LoadWarning] | None = None) -> tuple[str, Any]:
    """(format, parsed value): a JSON document, or JSONL records, so nothing is parsed twice."""
    text = strip_bom(text)
    if not text.strip():
        raise HistoryError("empty file", source=source)
    doc: Any = _NOT_JSON
    try:
        doc = json.loads(text)
    except RecursionError:  # the first value alone nests past the interpreter's limit: say how deep
        check_depth(text.split("\n", 1)[0], source=source, line=1)
        check_depth(text, source=source)
        raise HistoryError("JSON nested too deeply", source=source) from None
    except json.JSONDecodeError as exc:
        # "Extra data" after a first value means JSONL; a .jsonl file reports errors per line.
        if not (exc.msg.startswith("Extra data") or source.lower().endswith((".jsonl", ".ndjson"))):
            raise HistoryError(json_problem(exc, text), source=source, line=exc.lineno, column=exc.colno) from None
    if doc is not _NOT_JSON and not (isinstance(doc, dict) and _jsonl_kind(doc)):
        check_depth(text, source=source)
        kind = _document_kind(doc)
        if kind is None:
            raise HistoryError(_unknown(doc, _JSON_FORMATS), source=source)
        return kind, doc
    records = jsonl_records(text, source=source, warnings=warnings)
    return _records_kind(records, source=source), records


def _records_kind(records: list[Record], *, source: str) -> str:
    """The JSONL format of the records, judged from the first 20."""
    for record in records[:20]:
        if isinstance(record[2], dict):
            kind = _jsonl_kind(record[2])
            if kind is not None:
                return kind
    raise locate(HistoryError(_unknown(records[0][2], _JSONL_FORMATS)), records[0], source=source)


def _unknown(value: Any, tried: tuple[str, ...]) -> str:
    shape = (f"an object with keys {', '.join(cut(str(k), 40) for k in list(value)[:8])}" if isinstance(value, dict)
             else type_name(value))
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
    try:
        return _parse(text, source=source, format=format)
    except RecursionError:  # a guard missed a deep value: still one located line, never a traceback
        raise HistoryError("nested too deeply to read", source=source) from None


def _parse(text: str, *, source: str, format: str | None) -> History:
    warnings: list[LoadWarning] = []
    if format is None:
        kind, parsed = _detect(text, source=source, warnings=warnings)
        if kind in _FROM_RECORDS:
            return with_warnings(_FROM_RECORDS[kind](parsed, source=source), warnings)
        return _FROM_DOCUMENT[kind](parsed, source=source)
    if format in _FROM_RECORDS:
        records = jsonl_records(text, source=source, warnings=warnings)
        return with_warnings(_FROM_RECORDS[format](records, source=source), warnings)
    if format in _FROM_DOCUMENT:
        return _FROM_DOCUMENT[format](load_json(text, source=source), source=source)
    if format == "stagewise_sqlite":
        raise HistoryError("stagewise_sqlite is a database file: use load_history(path) or load_stagewise_sqlite",
                           source=source)
    raise HistoryError(f"unknown format {shown(format)} (known: {', '.join(FORMATS)})", source=source)


# Histories bigger than this are refused before reading (a 100k-message log is ~70 MB); raise it with
# WORKBENCH_MAX_HISTORY_BYTES or load_history(..., max_bytes=...).
MAX_HISTORY_BYTES = 1 << 30
MAX_BYTES_ENV = "WORKBENCH_MAX_HISTORY_BYTES"


def max_history_bytes() -> int:
    """The size limit in force: ``$WORKBENCH_MAX_HISTORY_BYTES`` when set to a whole number, else 1 GiB."""
    raw = os.environ.get(MAX_BYTES_ENV, "").strip().replace("_", "")
    return int(raw) if raw.isdigit() and len(raw) < 20 else MAX_HISTORY_BYTES


def check_history_file(path: Path, *, max_bytes: int | None = None, what: str = "a history") -> int:
    """Refuse what cannot be a history before reading it: not a regular file, or over the size limit.

    Returns the file's size. ``/dev/zero``, a FIFO or a folder would otherwise be read until memory ran out.
    """
    source = str(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a character device" if stat.S_ISCHR(st.st_mode)
                else "a block device" if stat.S_ISBLK(st.st_mode) else "a pipe (FIFO)" if stat.S_ISFIFO(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise HistoryError(f"not a regular file ({kind}): {what} must be a file", source=source)
    limit = max_history_bytes() if max_bytes is None else max_bytes
    if st.st_size > limit:
        hint = f" (raise it with {MAX_BYTES_ENV}=N)" if what == "a history" else ""
        raise HistoryError(f"{st.st_size:,} bytes, over the {limit:,}-byte limit for {what}{hint}", source=source)
    return st.st_size


def load_history(path: str | Path, *, format: str | None = None, chat_id: str | None = None,
                 max_bytes: int | None = None) -> History:
    """Read a history file; a stagewise SQLite store needs ``chat_id`` unless it holds a single chat.

    Only regular files up to ``max_bytes`` (default :func:`max_history_bytes`) are read.
    """
    p = Path(path)
    source = str(p)
    limit = max_history_bytes() if max_bytes is None else max_bytes
    size = check_history_file(p, max_bytes=limit)
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    try:
        if format == "stagewise_sqlite" or (format is None and head == _SQLITE_MAGIC):
            return _one_chat(p, chat_id)
        gzipped = head[:2] == _GZIP_MAGIC
        if format in (None, "canonical") and not gzipped:
            streamed = _load_canonical_lines(p, source=source)
            if streamed is not None:
                return streamed
        try:
            with p.open("rb") as fh:
                data = _read_at_most(fh, limit + 1, size)  # the file may have grown since it was checked
        except OSError as exc:
            raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
        if gzipped:  # agents' logs are often kept compressed (`.jsonl.gz`): read them as the text they hold
            data = _gunzip(data, limit, source=source)
        if len(data) > limit:
            raise HistoryError(f"over the {limit:,}-byte limit for a history (raise it with {MAX_BYTES_ENV}=N)",
                               source=source)
        if format is None or format in _FROM_RECORDS:
            loaded = _load_jsonl_bytes(data, source=source, format=format)
            if loaded is not None:
                return loaded
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(data, exc, source=source) from None
        del data  # the text is a copy: parsing needs only it
        return parse_history(text, source=source, format=format)
    except RecursionError:
        raise HistoryError("nested too deeply to read", source=source) from None


def _read_at_most(fh: Any, n: int, size: int) -> bytes:
    """``fh.read(n)`` without asking for ``n`` bytes at once: a read of the 1 GiB limit sets that much aside
    first (~0.4 ms a file). The file's measured ``size`` + 1 is read first; only a file that grew meanwhile
    is read on, up to ``n``."""
    data: bytes = fh.read(min(n, size + 1))
    if size + 1 <= len(data) < n:
        data += fh.read(n - len(data))
    return data


def _gunzip(data: bytes, limit: int, *, source: str) -> bytes:
    """The text a gzip file holds, read no further than ``limit + 1`` bytes (a small file can unpack huge)."""
    unpack = zlib.decompressobj(wbits=31)
    try:
        out = unpack.decompress(data, limit + 1)
    except zlib.error as exc:
        raise HistoryError(f"not a readable gzip file: {exc}", source=source) from None
    if len(out) <= limit and not unpack.eof:
        raise HistoryError("not a readable gzip file: it ends early (truncated?)", source=source)
    return out


def _not_utf8(data: bytes, exc: UnicodeDecodeError, *, source: str) -> HistoryError:
    """The not-UTF-8 error, naming UTF-16/32 when a byte-order mark or NUL bytes say so."""
    line = data.count(b"\n", 0, exc.start) + 1
    hint = ""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        hint = ": looks like UTF-16 or UTF-32; save it as UTF-8"
    return HistoryError(f"not UTF-8 text (byte {exc.start}){hint}", source=source, line=line)


@gc_paused
def _load_jsonl_bytes(data: bytes, *, source: str, format: str | None) -> History | None:
    """A JSONL file read from its bytes (``jsonl_bytes_records``); None when the text path must read it."""
    records = jsonl_bytes_records(data)
    if records is None:
        return None
    kind = format or _records_kind(records, source=source)
    return _FROM_RECORDS[kind](records, source=source)


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
    warnings: list[LoadWarning] = []
    with path.open("rb") as fh:
        offset = 0
        for number, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HistoryError(f"not UTF-8 text (byte {offset + exc.start})", source=source,
                                   line=number) from None
            offset += len(raw)
            ended = line.endswith("\n")
            if ended:
                line = line[:-1]
            if number == 1:
                line = strip_bom(line)
            if not line or line.isspace():
                if number == 1:
                    return None
                continue
            if number == 1 and (len(line) > 100_000 or '"kind"' not in line):
                return None  # not our header: the whole-text path reads it
            check_depth(line, source=source, line=number)
            try:
                # json.loads's own check (the decoder lacks it), so a stray BOM fails with its message
                value = json.loads(line) if line.startswith("\ufeff") else decode(line)
            except json.JSONDecodeError as exc:
                if number == 1:
                    return None
                _check_utf8(fh, offset, number + 1, source=source)  # the whole-text path reports these first
                problem = json_problem(exc, line)
                if (not ended or "ends early" in problem) and _only_blank_left(fh):
                    warnings.append(cut_off_warning(source, number, problem))
                    break
                raise HistoryError(problem, source=source, line=number, column=exc.colno) from None
            if number == 1 and not (isinstance(value, dict) and value.get("kind") == CANONICAL_KIND):
                return None
            records.append((number, None, value))
    if not records:  # an empty file: the whole-text path says so
        return None
    return with_warnings(canonical_from_records(records, source=source), warnings)


def _only_blank_left(fh: Any) -> bool:
    """Whether only blank lines remain in ``fh`` (so the line just read was the last one)."""
    return all(not raw.strip() for raw in fh)


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
