"""The Pi coding agent's session file (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``) as a History.

Each line is an entry ``{type, id, parentId, timestamp, ...}`` after a ``session`` header: ``message`` entries
(``message.role`` user, assistant, toolResult, bashExecution, custom, branchSummary), ``model_change``
(``provider``, ``modelId``), ``thinking_level_change``, ``compaction`` (``summary``, ``firstKeptEntryId``,
``tokensBefore``) and others. Entries form a tree; the session is the path from the last entry to the root, as
@mariozechner/pi-coding-agent 0.73.1 builds it (dist/core/session-manager.js ``buildSessionContext``). Each
assistant message carries its call's ``usage`` (input uncached, output, cacheRead, cacheWrite, totalTokens). Pure.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Message, Part, text_part
from workbench.history.readers.agent_log_common import logged_calls, record_type, unknown_type_warnings, with_log
from workbench.history.readers.builder import HistoryBuilder
from workbench.history.readers.jsontext import (
    Record,
    corrupt_line_warnings,
    gc_paused,
    jsonl_records,
    locate,
    require_object,
    type_name,
)
from workbench.history.session_log import CallUsage, LoggedCompaction, SessionLog, token_count
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Entry types Pi writes besides messages and compactions (session-manager.js); others are skipped with a warning.
_PI_OTHER_TYPES = frozenset({"session", "model_change", "thinking_level_change", "branch_summary", "custom",
                             "custom_message", "label", "session_info"})
# How Pi shows the model a compacted history's summary (messages.js COMPACTION_SUMMARY_PREFIX, 0.73.1).
SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
SUMMARY_SUFFIX = "\n</summary>"


def is_pi_entry(obj: dict[str, Any]) -> bool:
    """Whether one JSONL record is a Pi session entry (its header, or an entry of its tree)."""
    kind = obj.get("type")
    if kind == "session":
        return isinstance(obj.get("id"), str) and "cwd" in obj
    return (kind in ("message", "model_change", "thinking_level_change", "compaction") and isinstance(obj.get("id"), str)
            and "parentId" in obj)


@gc_paused
def parse_pi(text: str, *, source: str = "<text>") -> History:
    """Read a Pi session file."""
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    warnings[:0] = corrupt_line_warnings("pi", corrupt, len(records))
    return with_warnings(pi_from_records(records, source=source), warnings)


def pi_from_records(records: list[Record], *, source: str) -> History:
    entries: list[Record] = []
    header: dict[str, Any] = {}
    for record in records:
        try:
            obj = require_object(record[2], what="a JSON object")
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        if obj.get("type") == "session" and not header:
            header = obj
        elif isinstance(obj.get("id"), str):
            entries.append(record)
    path, off, broken = _branch(entries)
    reader = _Pi(source)
    unknown: dict[str, Record] = {}
    for record in path:
        try:
            reader.entry(record)
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        kind = record_type(record[2])
        if kind not in _PI_OTHER_TYPES and kind not in ("message", "compaction"):
            reader.skipped[kind] += 1
            unknown.setdefault(kind, record)
    if not len(reader.b):
        raise HistoryError("no message entries (not a Pi session?)", source=source)
    meta: dict[str, Any] = {k: header[k] for k in ("id", "cwd", "timestamp") if isinstance(header.get(k), str)}
    meta["skipped_records"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="pi", meta=meta)
    models = tuple(dict.fromkeys([*(m for msg in history.messages if isinstance(m := msg.meta("model"), str)),
                                  *reader.models]))
    extra: dict[str, Any] = {}
    if token_count(header.get("version")) is not None:
        extra["format_version"] = header["version"]  # the session file's format, not Pi's release
    if reader.thinking:
        extra["thinking_level"] = reader.thinking
    if reader.providers:
        extra["providers"] = list(reader.providers)
    warnings = [*reader.warnings, *unknown_type_warnings(unknown, reader.skipped, source=source, log="Pi")]
    if off:
        warnings.insert(0, LoadWarning(source=source, message=f"{off:,} entries on other branches of the session "
                                                              "tree left out (the last entry's branch is read)"))
    if broken:
        warnings.insert(0, LoadWarning(source=source, field="parentId",
                                       message=f"{broken:,} entries name a parent the file does not hold (a damaged "
                                               "line?): the entry before each in the file is taken as its parent"))
    log = SessionLog(agent="pi", version=None, models=models, calls=logged_calls(history.messages),
                     compactions=tuple(reader.compactions(history)),
                     session_id=meta.get("id"), extra=extra)
    return with_warnings(with_log(history, log), warnings)


def _branch(entries: list[Record]) -> tuple[list[Record], int, int]:
    """(the entries from the root to the last entry, in file order; how many entries that path leaves out; how many
    parent links pointed nowhere). A parent missing from the file (a damaged line) is bridged by the entry before
    it in the file, so one lost line loses one entry, not the session's start."""
    if not entries:
        return [], 0, 0
    by_id = {r[2]["id"]: r for r in entries}
    position = {id(r): n for n, r in enumerate(entries)}
    path: list[Record] = []
    seen: set[int] = set()
    broken = 0
    node: Record | None = entries[-1]
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        path.append(node)
        parent = node[2].get("parentId")
        if not isinstance(parent, str):
            break
        found = by_id.get(parent)
        if found is None:
            broken += 1
            at = position[id(node)]
            found = entries[at - 1] if at > 0 else None
        node = found
    path.reverse()
    return path, len(entries) - len(path), broken


class _Pi:
    """Turns the branch's entries into messages; a compaction keeps its summary and the messages it kept."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.b = HistoryBuilder()
        self.warnings: list[LoadWarning] = []
        self.skipped: Counter[str] = Counter()
        self.models: list[str] = []
        self.providers: list[str] = []
        self.thinking: str | None = None
        self._entry_index: dict[str, int] = {}  # entry id -> the first message at or after it
        self._compactions: list[dict[str, Any]] = []
        self._line: int | None = None

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(LoadWarning(source=self.source, line=self._line, field=field, message=message))

    def entry(self, record: Record) -> None:
        obj = record[2]
        self._line = record[0]
        kind = record_type(obj)
        self._entry_index.setdefault(obj["id"], len(self.b))
        stamp = obj.get("timestamp")
        if kind == "message":
            self.message(obj.get("message"), stamp, record[0])
        elif kind == "model_change":
            for key, seen in (("modelId", self.models), ("provider", self.providers)):
                value = obj.get(key)
                if isinstance(value, str) and value not in seen:
                    seen.append(value)
        elif kind == "thinking_level_change":
            level = obj.get("thinkingLevel")
            self.thinking = level if isinstance(level, str) else self.thinking
        elif kind == "compaction":
            before = obj.get("tokensBefore")
            if before is not None and token_count(before) is None:
                self.warn("tokensBefore", f"not a token count ({shown(before, 40)}): the compaction's logged size is "
                                          "unknown")
            summary = obj.get("summary")
            kept = obj.get("firstKeptEntryId")
            self._compactions.append({"line": record[0], "index": len(self.b), "before": token_count(before),
                                      "summary": summary if isinstance(summary, str) else None,
                                      "kept": kept if isinstance(kept, str) else None,
                                      # Pi writes the same entry for /compact and its threshold (agent-session.js
                                      # compact and _runAutoCompaction): the trigger is not logged
                                      "timestamp": stamp if isinstance(stamp, str) else None})
        elif kind == "custom_message":
            text = _content_text(obj.get("content"))
            if text:
                self.b.add("user", [text_part(text)], id=obj["id"], metadata=_meta(stamp, record[0]))

    def message(self, msg: Any, stamp: Any, line: int | None) -> None:
        if not isinstance(msg, dict):
            raise HistoryError(f"must be an object, got {type_name(msg)}", field="message")
        role = msg.get("role")
        metadata = _meta(stamp, line)
        if role == "user":
            self.b.add("user", _content(msg.get("content"), "message.content") or [text_part("")], metadata=metadata)
        elif role == "assistant":
            self.assistant(msg, metadata)
        elif role == "toolResult":
            call_id = msg.get("toolCallId")
            if not isinstance(call_id, str):
                raise HistoryError(f"must be a string, got {type_name(call_id)}", field="message.toolCallId")
            name = msg.get("toolName")
            content = msg.get("content")
            output: Any = _content_text(content) if isinstance(content, list) and all(
                isinstance(c, dict) and c.get("type") == "text" for c in content) else content
            self.b.result(name if isinstance(name, str) else None, call_id, output, is_error=msg.get("isError") is True,
                          metadata=metadata)
        elif role == "bashExecution":  # a "!command" the user ran: the model reads its command and output
            if msg.get("excludeFromContext") is True:
                return
            self.b.add("user", [text_part(bash_text(msg))], metadata=metadata)
        elif role in ("custom", "branchSummary", "compactionSummary"):
            summary = msg.get("summary")
            text = _content_text(msg.get("content")) or (summary if isinstance(summary, str) else "")
            self.b.add("user", [text_part(text)], metadata=metadata)
        else:
            raise HistoryError(f"unknown role {shown(role)} (expected user, assistant, toolResult, bashExecution)",
                               field="message.role")

    def assistant(self, msg: dict[str, Any], metadata: dict[str, Any]) -> None:
        content = msg.get("content")
        if content is not None and not isinstance(content, list):
            raise HistoryError(f"must be a list of blocks, got {type_name(content)}", field="message.content")
        parts: list[Any] = []
        for j, block in enumerate(content or ()):
            if not isinstance(block, dict):
                raise HistoryError(f"must be an object, got {type_name(block)}", field=f"message.content[{j}]")
            kind = block.get("type")
            if kind == "text":
                parts.append(text_part(block["text"] if isinstance(block.get("text"), str) else ""))
            elif kind == "thinking":
                thinking = block.get("thinking")
                parts.append(Part(data={"type": "reasoning", "text": thinking if isinstance(thinking, str) else ""}))
            elif kind == "toolCall":
                name, call_id = block.get("name"), block.get("id")
                if not isinstance(name, str) or not name or not isinstance(call_id, str):
                    raise HistoryError("needs an id and a name (strings)", field=f"message.content[{j}]")
                parts.append(self.b.call(name, call_id, block.get("arguments")))
            else:
                parts.append(Part(data=block))
        for key, name in (("model", "model"), ("provider", "provider"), ("stopReason", "stopReason")):
            if isinstance(msg.get(key), str):
                metadata[name] = msg[key]
        usage = self.usage(msg.get("usage"), msg.get("stopReason"))
        if usage is not None:
            metadata["usage"] = usage.to_dict()
        self.b.add("assistant", parts or [text_part("")], metadata=metadata)

    def usage(self, usage: Any, stop: Any) -> CallUsage | None:
        """``message.usage``; none for an aborted or failed call (Pi skips those too: compaction.js)."""
        if not isinstance(usage, dict) or stop in ("aborted", "error"):
            return None
        values: dict[str, int] = {}
        for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
            value = usage.get(key)
            if value is None:
                continue
            count = token_count(value)
            if count is None:
                self.warn(f"message.usage.{key}", f"not a token count ({shown(value, 40)}): this call's usage ignored")
                return None
            values[key] = count
        out = CallUsage(input_tokens=values.get("input", 0), cache_read_tokens=values.get("cacheRead", 0),
                        cache_write_tokens=values.get("cacheWrite", 0), output_tokens=values.get("output", 0),
                        logged_total=values.get("totalTokens") or None)
        return out if out.total_tokens > 0 else None

    def compactions(self, history: History) -> list[LoggedCompaction]:
        out = []
        for c in self._compactions:
            start = self._entry_index.get(c["kept"], c["index"]) if c["kept"] else c["index"]
            kept = history.messages[min(start, c["index"]): c["index"]]
            summary = c["summary"]
            carried = (text_part(SUMMARY_PREFIX + summary + SUMMARY_SUFFIX),) if summary else ()
            head = (Message(id=f"compaction-summary-{c['index']}", role="user", parts=carried),) if carried else ()
            out.append(LoggedCompaction(source_line=c["line"], index=c["index"],
                                        trigger="auto", tokens_before=c["before"],
                                        summary=summary, kept=head + tuple(kept), timestamp=c["timestamp"]))
        return out


def bash_text(msg: dict[str, Any]) -> str:
    """What the model reads of a user's ``!command`` (messages.js ``bashExecutionToText``, 0.73.1)."""
    command, output, code = msg.get("command"), msg.get("output"), msg.get("exitCode")
    text = f"Ran `{command if isinstance(command, str) else ''}`\n"
    text += f"```\n{output}\n```" if isinstance(output, str) and output else "(no output)"
    if msg.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and not isinstance(code, bool) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    return text


def _meta(stamp: Any, line: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
    if line is not None:
        out["sourceLine"] = line
    return out


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _content(content: Any, field: str) -> list[Part]:
    if isinstance(content, str):
        return [text_part(content)]
    if not isinstance(content, list):
        raise HistoryError(f"must be a string or a list of blocks, got {type_name(content)}", field=field)
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            out.append(text_part(block["text"] if isinstance(block.get("text"), str) else ""))
        elif isinstance(block, dict) and block.get("type") == "image":
            mime = block.get("mimeType") if isinstance(block.get("mimeType"), str) else "image/png"
            data = block.get("data") if isinstance(block.get("data"), str) else ""
            out.append(Part(data={"type": "file", "mediaType": mime, "url": f"data:{mime};base64,{data}"}))
        elif isinstance(block, dict):
            out.append(Part(data=block))
    return out
