"""A Codex CLI rollout (``~/.codex/sessions/.../rollout-*.jsonl``) as a History with its SessionLog.

Each line is ``{timestamp, type, payload}``; only ``response_item``s become messages (consecutive assistant
items grouped into one message until an output arrives). ``token_count`` events give each call's billed
usage and the logged window; ``compacted`` records are the agent's own compactions, with the
``replacement_history`` it kept. Text in, History out; no I/O.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Message, Part, text_part
from workbench.history.readers.agent_log_common import logged_calls, record_type, unknown_type_warnings, with_log
from workbench.history.readers.builder import HistoryBuilder, parse_arguments
from workbench.history.readers.chat_formats import file_part
from workbench.history.readers.jsontext import (
    Record,
    corrupt_line_warnings,
    gc_paused,
    jsonl_records,
    locate,
    require_object,
    type_name,
)
from workbench.history.session_log import USAGE_KEYS, LoggedCompaction, SessionLog, token_count, usage_problem
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Record types a rollout is known to hold; any other type is skipped with a warning.
_CODEX_TYPES = frozenset({"response_item", "session_meta", "turn_context", "compacted", "event_msg"})

_ASSISTANT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call")


@gc_paused
def parse_codex(text: str, *, source: str = "<text>") -> History:
    """Read a Codex CLI rollout (``{timestamp, type, payload}`` per line); only ``response_item``s are messages."""
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    warnings[:0] = corrupt_line_warnings("codex", corrupt, len(records))
    return with_warnings(codex_from_records(records, source=source), warnings)


def codex_from_records(records: list[Record], *, source: str) -> History:
    reader = _Codex(source=source)
    unknown: dict[str, Record] = {}
    for record in records:
        try:
            kind = reader.line(require_object(record[2], what="a JSON object"), record[0])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        if kind not in _CODEX_TYPES:
            unknown.setdefault(kind, record)
    reader.end_turn()
    meta = reader.meta
    meta["dropped_items"] = dict(reader.dropped)
    meta["skipped_records"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="codex", meta=meta)
    log = SessionLog(agent="codex", version=meta.get("cli_version"), models=tuple(meta["models"]),
                     window_logged=reader.window, calls=logged_calls(history.messages),
                     compactions=tuple(reader.compactions()), session_id=meta.get("session_id"),
                     extra={"window_line": reader.window_line} if reader.window_line is not None else {})
    return with_warnings(with_log(history, log),
                         [*reader.warnings, *unknown_type_warnings(unknown, reader.skipped, source=source, log="Codex")])



def _metadata(stamp: Any, number: int | None) -> dict[str, Any] | None:
    """A message's metadata from its record: made only for the records that add a message (a rollout's event_msg
    lines, most of a file, need none)."""
    if isinstance(stamp, str):
        return {"createdAt": stamp} if number is None else {"createdAt": stamp, "sourceLine": number}
    return None if number is None else {"sourceLine": number}


class _Codex:
    """Groups consecutive assistant items (text, reasoning, calls) into one message until an output arrives.

    ``token_count`` events carry the billed usage of the call that wrote the current assistant group (its
    ``last_token_usage``) and the session's running sum; a repeat of the same running sum is the same call
    logged twice, and a ``last_token_usage`` of zeros right after a compaction is the agent's estimate of the
    new context. A ``compacted`` record in a turn that holds no model-facing item is a manual ``/compact``
    (observed in the rollouts of ../shared/real_sessions: codex__f4 line 538); any other is automatic.
    """

    def __init__(self, *, source: str = "<text>") -> None:
        self.source = source
        self.warnings: list[LoadWarning] = []
        self.window_line: int | None = None
        self.b = HistoryBuilder()
        self.group: int | None = None
        self.last_assistant: int | None = None
        self.meta: dict[str, Any] = {"models": [], "turns_aborted": 0}
        self.dropped: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.window: int | None = None
        self._compactions: list[dict[str, Any]] = []
        self._last_total: Any = None
        self._last_call_tokens: int | None = None
        self._turn_items = 0
        self._turn_compactions: list[dict[str, Any]] = []
        self.line_number: int | None = None

    def compactions(self) -> list[LoggedCompaction]:
        return [LoggedCompaction(source_line=c["line"], index=c["index"], trigger=c.get("trigger", "auto"),
                                 tokens_before=c.get("before"), tokens_after=c.get("after"), summary=c.get("summary"),
                                 kept=tuple(c["kept"]), opaque_items=c["opaque"], timestamp=c.get("timestamp"))
                for c in self._compactions]

    def end_turn(self) -> None:
        """A turn ended: compactions in a turn with no model-facing item were the user's /compact."""
        for c in self._turn_compactions:
            c["trigger"] = "manual" if self._turn_items == 0 else "auto"
        self._turn_compactions = []
        self._turn_items = 0

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(LoadWarning(source=self.source, line=self.line_number, field=field, message=message))

    def line(self, obj: dict[str, Any], number: int | None = None) -> str:
        """Read one record; its type (``record_type``), which the caller checks too."""
        kind = record_type(obj)
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise HistoryError(f"must be an object, got {type_name(payload)}", field="payload")
        stamp = obj.get("timestamp")
        self.line_number = number
        if kind == "response_item":
            self._turn_items += 1
            self.item(payload, _metadata(stamp, number))
        elif kind == "session_meta":
            self.session(payload, _metadata(stamp, number))
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model not in self.meta["models"]:
                self.meta["models"].append(model)
        elif kind == "compacted":  # Codex's own compaction: not a message; the file keeps what came before
            self.compacted(payload, stamp, number)
        elif kind == "event_msg":  # the UI's copy of the stream; usage, turns and aborts are worth keeping
            event = payload.get("type")
            if event == "token_count" and isinstance(payload.get("info"), dict):
                self.token_count(payload["info"])
            elif event == "turn_aborted":
                self.meta["turns_aborted"] += 1
            elif event in ("task_started", "task_complete"):
                self.end_turn()
            self.skipped[f"event_msg:{event}"] += 1
        else:
            self.skipped[kind] += 1
        return kind

    def token_count(self, info: dict[str, Any]) -> None:
        window = info.get("model_context_window")
        if window is not None:
            if token_count(window):
                self.window, self.window_line = token_count(window), self.line_number
            else:
                self.warn("payload.info.model_context_window", f"not a window size ({shown(window, 40)}): ignored")
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict):
            return
        bad = usage_problem(last)
        if bad is not None:  # one bad number: this call's usage is not known
            self.warn(f"payload.info.last_token_usage.{bad}",
                      f"not a token count ({shown(last[bad], 40)}): this call's usage ignored")
            return
        if isinstance(total, dict) and usage_problem(total) is not None:
            bad = usage_problem(total)
            self.warn(f"payload.info.total_token_usage.{bad}",
                      f"not a token count ({shown(total[bad], 40)}): the session's running total ignored")
            total = None
        spent = sum(token_count(v) or 0 for k, v in last.items() if k in USAGE_KEYS and k != "total_tokens")
        if spent == 0:  # no call: the agent's estimate of the context it just rebuilt
            if self._compactions and self._compactions[-1].get("after") is None:
                self._compactions[-1]["after"] = token_count(last.get("total_tokens"))
            return
        if total is not None and total == self._last_total:
            return  # the same call's usage logged again
        self._last_total = total
        if self.last_assistant is None:
            return
        self._last_call_tokens = token_count(last.get("total_tokens"))
        extra: dict[str, Any] = {"usage": last}
        if isinstance(total, dict):
            extra["usageTotal"] = total
        self.b.extend(self.last_assistant, [], metadata=extra)

    def compacted(self, payload: dict[str, Any], stamp: Any, number: int | None) -> None:
        history = payload.get("replacement_history")
        kept: list[Message] = []
        opaque = 0
        if isinstance(history, list):
            scratch = _Codex()
            for item in history:
                if isinstance(item, dict) and item.get("type") in ("compaction", "compaction_summary"):
                    opaque += 1
                elif isinstance(item, dict):
                    try:
                        scratch.item(item, None)
                    except HistoryError:
                        continue
            kept = list(scratch.b.messages())
        message = payload.get("message")
        entry = {"line": number, "index": len(self.b), "timestamp": stamp if isinstance(stamp, str) else None,
                 "before": self._last_call_tokens, "kept": kept, "opaque": opaque,
                 "summary": message if isinstance(message, str) and message else None}
        self._compactions.append(entry)
        self._turn_compactions.append(entry)
        self.group = None

    def session(self, payload: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        for key in ("id", "cwd", "cli_version", "originator"):
            if isinstance(payload.get(key), str):
                self.meta[f"session_{key}" if key == "id" else key] = payload[key]
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else payload.get("instructions")
        if isinstance(text, str) and text:  # 0.141+ log the Responses API instructions; 0.58 logs null
            self.b.add("system", [text_part(text)], metadata=metadata)

    def item(self, p: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        kind = p.get("type")
        if not isinstance(kind, str):
            raise HistoryError(f"must be a string, got {type_name(kind)}", field="payload.type")
        if kind == "message":
            role = p.get("role")
            if role == "assistant":
                self.assistant(self._content(p.get("content")), p, metadata)
            elif role in ("user", "developer", "system"):
                self.group = None
                self.b.add("user" if role == "user" else "system", self._content(p.get("content")),
                           id=p.get("id"), metadata=metadata)
            else:
                raise HistoryError(f"unknown role {shown(role)} (expected user, developer, assistant)", field="payload.role")
        elif kind in _ASSISTANT_ITEMS:
            self.assistant([self._assistant_part(kind, p)], p, metadata)
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self.group = None
            call_id = p.get("call_id")
            if not isinstance(call_id, str):
                raise HistoryError(f"must be a string, got {type_name(call_id)}", field="payload.call_id")
            self.b.result(None, call_id, p.get("output"), id=p.get("id"), metadata=metadata)
        else:  # ghost_snapshot, web_search_call (no call id, result not logged), future items
            self.dropped[kind] += 1

    def assistant(self, parts: list[Any], p: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        if self.group is None:
            self.group = self.b.add("assistant", parts, id=p.get("id"), metadata=metadata)
        else:
            self.b.extend(self.group, parts)
        self.last_assistant = self.group

    def _assistant_part(self, kind: str, p: dict[str, Any]) -> Any:
        if kind == "reasoning":
            summary = p.get("summary")
            texts = [s.get("text", "") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
            data: dict[str, Any] = {"type": "reasoning", "text": "\n\n".join(t for t in texts if isinstance(t, str))}
            if p.get("encrypted_content"):
                data["providerMetadata"] = {"openai": {"reasoningEncryptedContent": p["encrypted_content"]}}
            return Part(data=data)
        call_id = p.get("call_id")
        if not isinstance(call_id, str):
            raise HistoryError(f"must be a string, got {type_name(call_id)}", field="payload.call_id")
        if kind == "local_shell_call":
            return self.b.call("local_shell", call_id, p.get("action"))
        name = p.get("name")
        if not isinstance(name, str) or not name:
            raise HistoryError(f"must be a non-empty string, got {type_name(name)}", field="payload.name")
        if kind == "custom_tool_call":  # freeform input (apply_patch): wrapped as the converter does
            return self.b.call(name, call_id, {"input": p.get("input")})
        return self.b.call(name, call_id, parse_arguments(p.get("arguments")))

    @staticmethod
    def _content(content: Any) -> list[Part]:
        if isinstance(content, str):
            return [text_part(content)]
        if not isinstance(content, list):
            raise HistoryError(f"must be a string or a list of blocks, got {type_name(content)}",
                               field="payload.content")
        parts = []
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                raise HistoryError(f"must be an object, got {type_name(block)}", field=f"payload.content[{j}]")
            if block.get("type") in ("input_text", "output_text", "text"):
                parts.append(text_part(str(block.get("text", ""))))
            elif block.get("type") == "input_image":
                parts.append(file_part(str(block.get("image_url", ""))))
            else:
                parts.append(Part(data=block))
        return parts or [text_part("")]
