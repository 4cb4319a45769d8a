"""Which format a history's text is in, judged from its container and first records.

A JSON document is told apart from JSONL by trying the whole text first ("Extra data" after a first value
means one value per line); the parsed value is returned with the name so nothing is parsed twice. No I/O.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.readers.copilot_cli import is_copilot_event
from workbench.history.readers.gemini_cli import is_gemini_document, is_gemini_record
from workbench.history.readers.jsontext import (
    Record,
    check_depth,
    json_problem,
    jsonl_records,
    locate,
    strip_bom,
    type_name,
)
from workbench.history.readers.opencode import is_opencode_export
from workbench.history.readers.parse_bounds import check_array_shape
from workbench.history.readers.pi import is_pi_entry
from workbench.history.readers.superjson import is_envelope
from workbench.history.warnings import LoadWarning, cut
from workbench.history.writers import CANONICAL_KIND

_JSONL_FORMATS = ("canonical", "openai_jsonl", "claude_code", "codex", "copilot_cli", "gemini_cli", "pi")
_JSON_FORMATS = ("stagewise", "openai", "anthropic", "opencode", "gemini_cli")
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
                           "progress"})
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "leafUuid", "messageId")
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_NOT_JSON = object()


def detect_format(text: str, *, source: str = "<text>") -> str:
    """The name of the format ``text`` is in; raises HistoryError saying which formats were tried."""
    return detect(text, source=source, warnings=[])[0]


def detect(text: str, *, source: str, warnings: list[LoadWarning] | None = None,
           corrupt: list[HistoryError] | None = None) -> tuple[str, Any]:
    """(format, parsed value): a JSON document, or JSONL records, so nothing is parsed twice. With a ``corrupt``
    list, JSONL lines that are not one JSON value are left out and their errors put there (``jsonl_records``)."""
    text = strip_bom(text)
    if not text.strip():
        raise HistoryError("empty file", source=source)
    check_array_shape(text, source=source)
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
        if kind == "gemini_cli":  # the legacy layout: one record that holds the messages, read as Gemini reads it
            return kind, [(None, None, doc)]
        return kind, doc
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    return records_kind(records, source=source), records


def records_kind(records: list[Record], *, source: str) -> str:
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
    if is_copilot_event(obj):
        return "copilot_cli"
    if is_pi_entry(obj):
        return "pi"
    if is_gemini_record(obj) and not isinstance(obj.get("messages"), list):
        return "gemini_cli"
    if "role" in obj and "parts" in obj:
        return "canonical"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "openai_jsonl"
    return None


def _document_kind(doc: Any) -> str | None:
    """The JSON format of a whole document, judged from its container and its first messages."""
    if isinstance(doc, dict):
        if is_opencode_export(doc):
            return "opencode"
        if is_gemini_document(doc):
            return "gemini_cli"
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
