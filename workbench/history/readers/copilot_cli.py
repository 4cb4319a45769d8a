"""GitHub Copilot CLI's session events (``~/.copilot/session-state/<session>/events.jsonl``) as a History.

Each line is ``{type, data, id, timestamp, parentId}``. The main thread's ``system.message``, ``user.message``,
``assistant.message`` and ``tool.execution_complete`` events are the transcript; events with an ``agentId`` are a
subagent's and are read apart. ``session.compaction_start`` (the agent's own count: system, conversation and tool
definition tokens) and ``session.compaction_complete`` (``preCompactionTokens``, the summary) are its compactions.
A call's input usage (``assistant.usage``) is never written to the file (ephemeral in @github/copilot 1.0.73
schemas/session-events.schema.json), so a log has each message's ``outputTokens`` but no input bill. Pure.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Part, text_part
from workbench.history.readers.agent_log_common import logged_calls, record_type, unknown_type_warnings, with_log
from workbench.history.readers.builder import HistoryBuilder, parse_arguments
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

# Event types the log is known to hold besides the transcript's (UI, hooks, permissions, bookkeeping): skipped.
_COPILOT_OTHER_TYPES = frozenset({
    "session.start", "session.resume", "session.model_change", "session.info", "session.warning", "session.error",
    "session.mode_changed", "session.permissions_changed", "session.plan_changed", "session.task_complete",
    "session.usage_checkpoint", "session.shutdown", "session.context_changed", "session.workspace_file_changed",
    "session.title_changed", "session.handoff", "session.idle", "session.truncation", "session.snapshot_rewind",
    "session.usage_info", "session.remote_steerable_changed", "session.autopilot_objective_changed",
    "hook.start", "hook.end", "assistant.turn_start", "assistant.turn_end", "assistant.intent", "assistant.idle",
    "assistant.reasoning", "assistant.message_delta", "assistant.streaming_delta", "tool.execution_start",
    "tool.execution_partial_result", "tool.execution_progress", "permission.requested", "permission.completed",
    "subagent.started", "subagent.completed", "subagent.failed", "subagent.selected", "system.notification",
    "skill.invoked", "abort", "user_input.requested", "user_input.completed", "pending_messages.modified",
    "session.compaction_start", "session.compaction_complete", "assistant.usage",
})
# The events the detector recognises a Copilot CLI log by (its first lines).
COPILOT_FIRST_TYPES = frozenset({"session.start", "session.resume", "session.model_change", "user.message",
                                 "system.message", "assistant.message", "hook.start", "session.info"})


def is_copilot_event(obj: dict[str, Any]) -> bool:
    """Whether one JSONL record is a Copilot CLI session event: ``type`` ``session.*`` etc., ``data`` an object."""
    kind = obj.get("type")
    return (isinstance(kind, str) and isinstance(obj.get("data"), dict) and "timestamp" in obj
            and (kind in COPILOT_FIRST_TYPES or kind.startswith(("session.", "assistant.", "tool."))))


@gc_paused
def parse_copilot_cli(text: str, *, source: str = "<text>") -> History:
    """Read a Copilot CLI ``events.jsonl``."""
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    warnings[:0] = corrupt_line_warnings("copilot_cli", corrupt, len(records))
    return with_warnings(copilot_cli_from_records(records, source=source), warnings)


def copilot_cli_from_records(records: list[Record], *, source: str) -> History:
    reader = _Copilot(source)
    unknown: dict[str, Record] = {}
    for record in records:
        try:
            obj = require_object(record[2], what="a JSON object")
            reader.line(obj, record[0])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        kind = record_type(obj)
        if kind not in _COPILOT_OTHER_TYPES and kind not in reader.READ:
            reader.skipped[kind] += 1
            unknown.setdefault(kind, record)
    if not len(reader.b):
        raise HistoryError("no system, user or assistant events (not a Copilot CLI session?)", source=source)
    meta = reader.meta
    meta["skipped_records"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="copilot_cli", meta=meta)
    extra: dict[str, Any] = {}
    if reader.tool_tokens is not None:  # tool schemas: sent with every call, never in the transcript
        extra["tool_definitions_tokens"] = reader.tool_tokens
    if reader.shutdown:
        extra["shutdown"] = reader.shutdown
    if reader.breakdowns:
        extra["compaction_counts"] = reader.breakdowns
    # The models that answered first, most answers first (a session often starts on one and switches before a call).
    answered = Counter(m for msg in history.messages if isinstance(m := msg.meta("model"), str))
    models = tuple(dict.fromkeys([*(m for m, _ in answered.most_common()), *reader.models]))
    log = SessionLog(agent="copilot_cli", version=meta.get("copilotVersion"), models=models,
                     calls=logged_calls(history.messages), compactions=tuple(reader.compactions),
                     session_id=meta.get("sessionId"), extra=extra)
    return with_warnings(with_log(history, log),
                         [*reader.warnings,
                          *unknown_type_warnings(unknown, reader.skipped, source=source, log="Copilot CLI")])


class _Copilot:
    """Turns the main thread's events into messages and keeps the compactions and the agent's own counts."""

    READ = frozenset({"system.message", "user.message", "assistant.message", "tool.execution_complete"})

    def __init__(self, source: str) -> None:
        self.source = source
        self.b = HistoryBuilder()
        self.warnings: list[LoadWarning] = []
        self.skipped: Counter[str] = Counter()
        self.meta: dict[str, Any] = {"subagent_events": 0, "system_updates": 0}
        self.models: list[str] = []
        self.compactions: list[LoggedCompaction] = []
        self.tool_tokens: int | None = None
        self.shutdown: dict[str, Any] = {}
        self.breakdowns: list[dict[str, Any]] = []
        self._start: dict[str, Any] | None = None  # the compaction in progress (started, not complete)
        self._system: str | None = None
        self._last_user: str = ""
        self._line: int | None = None

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(LoadWarning(source=self.source, line=self._line, field=field, message=message))

    def line(self, obj: dict[str, Any], number: int | None) -> None:
        self._line = number
        kind = record_type(obj)
        data = obj.get("data")
        if not isinstance(data, dict):
            raise HistoryError(f"must be an object, got {type_name(data)}", field="data")
        if obj.get("agentId") is not None or data.get("parentToolCallId") is not None:
            self.meta["subagent_events"] += 1  # a subagent's own thread: not this context
            return
        stamp = obj.get("timestamp")
        metadata: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
        if number is not None:
            metadata["sourceLine"] = number
        if kind == "session.start":
            for key in ("sessionId", "copilotVersion", "startTime"):
                if isinstance(data.get(key), str) and key not in self.meta:
                    self.meta[key] = data[key]
        elif kind == "session.model_change":
            self.model(data.get("newModel"))
        elif kind == "session.resume":
            self.model(data.get("selectedModel"))
        elif kind == "system.message":
            self.system(data, metadata)
        elif kind == "user.message":
            self.user(data, metadata)
        elif kind == "assistant.message":
            self.assistant(data, metadata)
        elif kind == "tool.execution_complete":
            self.tool_result(data, metadata)
        elif kind == "assistant.usage":
            self.usage(data)
        elif kind == "session.compaction_start":
            self.compaction_start(data, stamp, number)
        elif kind == "session.compaction_complete":
            self.compaction_complete(data, stamp, number)
        elif kind == "session.shutdown":
            self.tool_count(data.get("toolDefinitionsTokens"), "data.toolDefinitionsTokens")
            details = data.get("tokenDetails")
            if isinstance(details, dict):
                self.shutdown = {k: c for k, v in details.items()
                                 if isinstance(v, dict) and (c := token_count(v.get("tokenCount"))) is not None}

    def model(self, name: Any) -> None:
        if isinstance(name, str) and name and name not in self.models:
            self.models.append(name)

    def system(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """The system prompt. Copilot holds one, rebuilt each turn: the first is the transcript's, later ones
        (the same prompt, its date or tool list changed) are counted in ``meta["system_updates"]``."""
        content = data.get("content")
        if not isinstance(content, str):
            raise HistoryError(f"must be a string, got {type_name(content)}", field="data.content")
        if self._system is None:
            self._system = content
            self.b.add("system", [text_part(content)], metadata=metadata)
        elif content != self._system:
            self.meta["system_updates"] += 1

    def user(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        content = data.get("transformedContent")  # what the model read: the prompt with the agent's reminders
        if not isinstance(content, str):
            content = data.get("content")
        if not isinstance(content, str):
            raise HistoryError(f"must be a string, got {type_name(content)}", field="data.content")
        raw = data.get("content")
        self._last_user = raw if isinstance(raw, str) else content
        parts: list[Any] = [text_part(content)]
        attachments = data.get("attachments")
        if isinstance(attachments, list):
            for item in attachments:
                if isinstance(item, dict) and isinstance(item.get("path"), str):
                    parts.append(Part(data={"type": "file", "url": item["path"],
                                            "mediaType": item.get("mimeType") or "application/octet-stream"}))
        self.b.add("user", parts, metadata=metadata)

    def assistant(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        parts: list[Any] = []
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            parts.append(Part(data={"type": "reasoning", "text": reasoning}))
        content = data.get("content")
        if isinstance(content, str) and content:
            parts.append(text_part(content))
        requests = data.get("toolRequests")
        if requests is not None and not isinstance(requests, list):
            raise HistoryError(f"must be an array, got {type_name(requests)}", field="data.toolRequests")
        for j, req in enumerate(requests or ()):
            if not isinstance(req, dict):
                raise HistoryError(f"must be an object, got {type_name(req)}", field=f"data.toolRequests[{j}]")
            call_id, name = req.get("toolCallId"), req.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str) or not name:
                raise HistoryError("needs a toolCallId and a name (strings)", field=f"data.toolRequests[{j}]")
            parts.append(self.b.call(name, call_id, parse_arguments(req.get("arguments"))))
        model = data.get("model")
        if isinstance(model, str):
            metadata["model"] = model
            self.model(model)
        out = data.get("outputTokens")
        if out is not None:
            count = token_count(out)
            if count is None:
                self.warn("data.outputTokens", f"not a token count ({shown(out, 40)}): ignored")
            else:
                metadata["outputTokens"] = count
                if isinstance(model, str) and model.startswith("claude"):
                    # Copilot's own count of a Claude model's answer is this number, hidden thinking included
                    # (@github/copilot 1.0.40 app.js PB: Bit(model) && role assistant && outputTokens)
                    metadata["loggedTokens"] = count
        self.b.add("assistant", parts or [text_part("")], id=data.get("messageId"), metadata=metadata)

    def tool_result(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            raise HistoryError(f"must be a string, got {type_name(call_id)}", field="data.toolCallId")
        result = data.get("result")
        output: Any = result.get("content") if isinstance(result, dict) else result
        error = data.get("error")
        failed = data.get("success") is False
        if failed and output is None:
            output = error.get("message") if isinstance(error, dict) else error
        self.b.result(None, call_id, "" if output is None else output, is_error=failed, metadata=metadata)

    def usage(self, data: dict[str, Any]) -> None:
        """``assistant.usage``, where a log has it (an SDK's own dump): ``inputTokens`` includes the cached ones."""
        counts = {k: token_count(data.get(k)) for k in ("inputTokens", "outputTokens", "cacheReadTokens",
                                                        "cacheWriteTokens", "reasoningTokens")}
        bad = next((k for k, v in counts.items() if v is None and data.get(k) is not None), None)
        if bad is not None:
            self.warn(f"data.{bad}", f"not a token count ({shown(data.get(bad), 40)}): this call's usage ignored")
            return
        read, write = counts["cacheReadTokens"] or 0, counts["cacheWriteTokens"] or 0
        usage = CallUsage(input_tokens=max(0, (counts["inputTokens"] or 0) - read - write), cache_read_tokens=read,
                          cache_write_tokens=write, output_tokens=counts["outputTokens"] or 0,
                          reasoning_tokens=counts["reasoningTokens"] or 0)
        last = next((i for i in range(len(self.b) - 1, -1, -1) if self.b.role(i) == "assistant"), None)
        if last is not None and usage.total_tokens > 0:
            self.b.extend(last, [], metadata={"usage": usage.to_dict()})

    def tool_count(self, value: Any, field: str) -> None:
        if value is None:
            return
        count = token_count(value)
        if count is None:
            self.warn(field, f"not a token count ({shown(value, 40)}): ignored")
        elif self.tool_tokens is None:
            self.tool_tokens = count

    def compaction_start(self, data: dict[str, Any], stamp: Any, number: int | None) -> None:
        counts = {}
        for key in ("systemTokens", "conversationTokens", "toolDefinitionsTokens"):
            value = data.get(key)
            counts[key] = token_count(value)
            if value is not None and counts[key] is None:
                self.warn(f"data.{key}", f"not a token count ({shown(value, 40)}): ignored")
        self.tool_count(data.get("toolDefinitionsTokens"), "data.toolDefinitionsTokens")
        parts = [v for v in counts.values() if v is not None]
        # A /compact typed by the user comes right after their message; the background compaction after a call.
        manual = self._last_user.lstrip().startswith("/compact") and self.b.role(len(self.b) - 1) == "user" \
            if len(self.b) else False
        self._start = {"index": len(self.b), "line": number, "timestamp": stamp if isinstance(stamp, str) else None,
                       "tokens": sum(parts) if len(parts) == 3 else None, "manual": manual}
        # The agent's own count at the start, by part: what a replay's count can be held against (docs/reality.md)
        self.breakdowns.append({"index": len(self.b), "line": number, "system": counts["systemTokens"],
                                "conversation": counts["conversationTokens"],
                                "tool_definitions": counts["toolDefinitionsTokens"]})

    def compaction_complete(self, data: dict[str, Any], stamp: Any, number: int | None) -> None:
        start, self._start = self._start, None
        if data.get("success") is False:
            self.meta["failed_compactions"] = self.meta.get("failed_compactions", 0) + 1
            return
        pre = data.get("preCompactionTokens")
        tokens = token_count(pre)
        if pre is not None and tokens is None:
            self.warn("data.preCompactionTokens", f"not a token count ({shown(pre, 40)}): the compaction's logged "
                                                  "size is unknown")
        summary = data.get("summaryContent")
        index = start["index"] if start else len(self.b)
        post = token_count(data.get("postCompactionTokens"))
        self.compactions.append(LoggedCompaction(
            source_line=start["line"] if start else number, index=index,
            trigger="manual" if start and start["manual"] else "auto",
            tokens_before=tokens if tokens is not None else (start or {}).get("tokens"), tokens_after=post,
            summary=summary if isinstance(summary, str) and summary else None,
            timestamp=start["timestamp"] if start else (stamp if isinstance(stamp, str) else None)))
