"""Readers for the native session logs of coding agents: Claude Code ``.jsonl`` and Codex CLI rollouts.

Both logs hold far more than the model saw (UI events, snapshots, token counts); only model-facing
records become messages, following ``shared/real_histories/SOURCES.md``. What the agent logged about
itself (billed usage per call, version, model, window, its own compactions with their real summaries)
becomes a typed ``SessionLog`` on ``History.log``; each message remembers its source line. What is
dropped is counted in ``History.meta`` so a reader can tell a quiet log from a lossy read. Text in,
History out; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from workbench.history.builder import HistoryBuilder, parse_arguments
from workbench.history.chat_formats import add_anthropic_content, file_part
from workbench.history.errors import HistoryError
from workbench.history.jsontext import Record, gc_paused, jsonl_records, locate, require_object, type_name
from workbench.history.model import History, Message, Part, text_part
from workbench.history.session_log import CallUsage, LoggedCall, LoggedCompaction, SessionLog
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Record types each log is known to hold besides messages; any other type is skipped with a warning.
_CLAUDE_OTHER_TYPES = frozenset({"summary", "system", "file-history-snapshot", "queue-operation", "progress", "pr-link"})
_CODEX_TYPES = frozenset({"response_item", "session_meta", "turn_context", "compacted", "event_msg"})


def _unknown_type_warnings(first_line: dict[str, Record], counts: Counter[str], *, source: str,
                           log: str) -> list[LoadWarning]:
    """One warning per unknown record type: where it first appears and how many lines had it."""
    out = []
    for kind, record in first_line.items():
        n = counts[kind]
        more = f" (and {n - 1:,} more lines of that type)" if n > 1 else ""
        out.append(LoadWarning(source=source, line=record[0], where=record[1], field="type",
                               message=f"not a {log} record type ({shown(kind, 40)}): line skipped{more}"))
    return out

# -- Claude Code ----------------------------------------------------------------------------------


@gc_paused
def parse_claude_code(text: str, *, source: str = "<text>", sidechain: str | None = None) -> History:
    """Read a Claude Code session log: the main thread, or the sidechain (subagent) rooted at ``sidechain``.

    A file that holds only sidechains yields its first one. ``meta["sidechains"]`` lists every root uuid.
    """
    warnings: list[LoadWarning] = []
    records = jsonl_records(text, source=source, warnings=warnings)
    return with_warnings(claude_code_from_records(records, source=source, sidechain=sidechain), warnings)


def claude_code_from_records(records: list[Record], *, source: str, sidechain: str | None = None) -> History:
    main: list[Record] = []
    side: list[Record] = []
    meta: dict[str, Any] = {"summaries": []}
    skipped: Counter[str] = Counter()
    unknown: dict[str, Record] = {}
    for record in records:
        obj = record[2]
        if not isinstance(obj, dict):
            raise locate(HistoryError(f"expected a JSON object, got {type_name(obj)}"), record, source=source)
        kind = obj.get("type")
        if kind in ("user", "assistant") or (kind == "system" and obj.get("subtype") == "compact_boundary"):
            (side if obj.get("isSidechain") else main).append(record)
        elif kind == "summary":  # a session title for the picker, pointing at the leaf it describes
            meta["summaries"].append({"summary": obj.get("summary"), "leafUuid": obj.get("leafUuid")})
        else:
            skipped[str(kind)] += 1
            if kind not in _CLAUDE_OTHER_TYPES:
                unknown.setdefault(str(kind), record)
        for key in ("sessionId", "version", "cwd", "gitBranch"):
            if key not in meta and isinstance(obj.get(key), str):
                meta[key] = obj[key]
    groups = _sidechains(side)
    meta["sidechains"] = list(groups)
    if sidechain is not None:
        if sidechain not in groups:
            known = ", ".join(groups) or "none"
            raise HistoryError(f"no sidechain rooted at {sidechain!r} (roots: {known})", source=source)
        chosen = groups[sidechain]
    elif any(r[2].get("type") != "system" for r in main) or not groups:
        chosen = main
    else:
        sidechain, chosen = next(iter(groups.items()))
    if sidechain is not None:
        meta["sidechain"] = sidechain
    if not chosen:
        raise HistoryError("no user or assistant records (not a Claude Code session?)", source=source)
    meta["skipped_records"] = dict(skipped)
    reader = _ClaudeCode({r[2]["uuid"] for r in records if isinstance(r[2], dict) and isinstance(r[2].get("uuid"), str)})
    for record in chosen:
        try:
            reader.line(record[2], record[0])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="claude_code", meta=meta)
    models = tuple(dict.fromkeys(model for m in history.messages if isinstance(model := m.meta("model"), str)))
    # A log whose first record already has a parent it does not hold is a later part of a longer session:
    # the context its first call reads is more than the transcript shows.
    first = next((r[2].get("parentUuid") for r in records if isinstance(r[2], dict) and "parentUuid" in r[2]), None)
    extra = {"starts_mid_session": True} if isinstance(first, str) and first not in reader._uuids else {}
    log = SessionLog(agent="claude_code", version=meta.get("version"), models=models,
                     calls=logged_calls(history.messages), compactions=tuple(reader.compactions()),
                     session_id=meta.get("sessionId"), extra=extra)
    return with_warnings(_with_log(history, log),
                         _unknown_type_warnings(unknown, skipped, source=source, log="Claude Code"))


def logged_calls(messages: tuple[Message, ...]) -> tuple[LoggedCall, ...]:
    """One LoggedCall per assistant message that carries billed usage, in order."""
    out = []
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        usage = m.usage
        if usage is None:
            continue
        total = m.meta("usageTotal")
        out.append(LoggedCall(index=i, source_line=m.source_line, usage=usage,
                              model=m.meta("model") if isinstance(m.meta("model"), str) else None,
                              cumulative=CallUsage.from_logged(total) if isinstance(total, dict) else None))
    return tuple(out)


def _with_log(history: History, log: SessionLog) -> History:
    return dataclasses.replace(history, log=log)


def _sidechains(side: list[Record]) -> dict[str, list[Record]]:
    """Group sidechain lines by their root (the line with ``parentUuid: null``), in file order."""
    parent = {r[2]["uuid"]: _str_or_none(r[2].get("parentUuid")) for r in side if isinstance(r[2].get("uuid"), str)}
    root_of: dict[Any, Any] = {}
    groups: dict[str, list[Record]] = {}
    for record in side:
        node, chain = _str_or_none(record[2].get("uuid")), []
        while node not in root_of and parent.get(node) in parent and node not in chain:
            chain.append(node)
            node = parent[node]
        root = root_of.get(node, node)
        for n in chain:
            root_of[n] = root
        root_of[node] = root
        groups.setdefault(str(root), []).append(record)
    return groups


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _ClaudeCode:
    """Turns Claude Code lines into messages; lines of one API response (same ``message.id``) merge.

    A ``compact_boundary`` record is the agent's compaction; the compact-summary user line after it holds
    the real summary. One response is logged a content block per line, each with a usage snapshot: the
    last line's usage is kept (its ``output_tokens`` is the highest the log has, which can still be short
    of the final count).
    """

    def __init__(self, uuids: set[str] | None = None) -> None:
        self.b = HistoryBuilder()
        self.by_api_id: dict[str, int] = {}
        self._compactions: list[dict[str, Any]] = []
        self._uuids = uuids or set()

    def compactions(self) -> list[LoggedCompaction]:
        out = []
        for c in self._compactions:
            pre = c.get("preTokens")
            out.append(LoggedCompaction(
                source_line=c.get("line"), index=c["index"], trigger="manual" if c.get("trigger") == "manual" else "auto",
                tokens_before=int(pre) if isinstance(pre, (int, float)) and not isinstance(pre, bool) else None,
                summary=c.get("summary"), summary_index=c.get("summary_index"), timestamp=c.get("timestamp"),
                parent_missing=c.get("parent_missing", False)))
        return out

    def line(self, obj: dict[str, Any], number: int | None = None) -> None:
        stamp = obj.get("timestamp")
        if obj.get("type") == "system":  # compact_boundary: the following user line is the summary
            info = obj.get("compactMetadata")
            parent = obj.get("logicalParentUuid")
            self._compactions.append({"index": len(self.b), "timestamp": stamp, "line": number,
                                      "parent_missing": isinstance(parent, str) and parent not in self._uuids,
                                      **(info if isinstance(info, dict) else {})})
            return
        message = obj.get("message")
        if not isinstance(message, dict):
            raise HistoryError(f"must be an object, got {type_name(message)}", field="message")
        metadata: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
        if number is not None:
            metadata["sourceLine"] = number
        if obj["type"] == "assistant":
            api_id = message.get("id")
            usage = {"usage": message["usage"]} if isinstance(message.get("usage"), dict) else {}
            earlier = self.by_api_id.get(api_id) if isinstance(api_id, str) else None
            if earlier is not None:
                before = (self.b.metadata(earlier) or {}).get("usage")
                if usage and isinstance(before, dict):  # streaming snapshots: keep the highest output count
                    seen = before.get("output_tokens")
                    now = usage["usage"].get("output_tokens")
                    if isinstance(seen, int) and isinstance(now, int) and seen > now:
                        usage = {"usage": {**usage["usage"], "output_tokens": seen}}
                add_anthropic_content(self.b, "assistant", message.get("content"), id=None, metadata=usage,
                                      merge_into=earlier)
                return
            if isinstance(message.get("model"), str):
                metadata["model"] = message["model"]
            metadata.update(usage)
            if isinstance(api_id, str):
                self.by_api_id[api_id] = len(self.b)
            add_anthropic_content(self.b, "assistant", message.get("content"), id=obj.get("uuid"),
                                  metadata=metadata or None)
            return
        for flag in ("isMeta", "isCompactSummary"):
            if obj.get(flag) is True:
                metadata[flag] = True
        index = len(self.b)
        add_anthropic_content(self.b, "user", message.get("content"), id=obj.get("uuid"), metadata=metadata or None)
        pending = self._compactions[-1] if self._compactions else None
        if obj.get("isCompactSummary") is True and pending is not None and "summary_index" not in pending:
            content = message.get("content")
            pending["summary_index"] = index
            pending["summary"] = content if isinstance(content, str) else "\n".join(
                b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
            ) if isinstance(content, list) else None


# -- Codex CLI ------------------------------------------------------------------------------------

_ASSISTANT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call")


@gc_paused
def parse_codex(text: str, *, source: str = "<text>") -> History:
    """Read a Codex CLI rollout (``{timestamp, type, payload}`` per line); only ``response_item``s are messages."""
    warnings: list[LoadWarning] = []
    records = jsonl_records(text, source=source, warnings=warnings)
    return with_warnings(codex_from_records(records, source=source), warnings)


def codex_from_records(records: list[Record], *, source: str) -> History:
    reader = _Codex()
    unknown: dict[str, Record] = {}
    for record in records:
        try:
            reader.line(require_object(record[2], what="a JSON object"), record[0])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        kind = record[2].get("type")
        if kind not in _CODEX_TYPES:
            unknown.setdefault(str(kind), record)
    reader.end_turn()
    meta = reader.meta
    meta["dropped_items"] = dict(reader.dropped)
    meta["skipped_records"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="codex", meta=meta)
    log = SessionLog(agent="codex", version=meta.get("cli_version"), models=tuple(meta["models"]),
                     window_logged=reader.window, calls=logged_calls(history.messages),
                     compactions=tuple(reader.compactions()), session_id=meta.get("session_id"))
    return with_warnings(_with_log(history, log),
                         _unknown_type_warnings(unknown, reader.skipped, source=source, log="Codex"))


class _Codex:
    """Groups consecutive assistant items (text, reasoning, calls) into one message until an output arrives.

    ``token_count`` events carry the billed usage of the call that wrote the current assistant group (its
    ``last_token_usage``) and the session's running sum; a repeat of the same running sum is the same call
    logged twice, and a ``last_token_usage`` of zeros right after a compaction is the agent's estimate of the
    new context. A ``compacted`` record in a turn that holds no model-facing item is a manual ``/compact``
    (observed in the rollouts of ../shared/real_sessions: codex__f4 line 538); any other is automatic.
    """

    def __init__(self) -> None:
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

    def line(self, obj: dict[str, Any], number: int | None = None) -> None:
        kind = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise HistoryError(f"must be an object, got {type_name(payload)}", field="payload")
        stamp = obj.get("timestamp")
        metadata: dict[str, Any] | None = {"createdAt": stamp} if isinstance(stamp, str) else None
        if number is not None:
            metadata = {**(metadata or {}), "sourceLine": number}
        self.line_number = number
        if kind == "response_item":
            self._turn_items += 1
            self.item(payload, metadata)
        elif kind == "session_meta":
            self.session(payload, metadata)
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
            self.skipped[str(kind)] += 1

    def token_count(self, info: dict[str, Any]) -> None:
        window = info.get("model_context_window")
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            self.window = window
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict):
            return
        spent = sum(v for k, v in last.items() if k != "total_tokens" and isinstance(v, int))
        if spent == 0:  # no call: the agent's estimate of the context it just rebuilt
            if self._compactions and self._compactions[-1].get("after") is None:
                after = last.get("total_tokens")
                self._compactions[-1]["after"] = after if isinstance(after, int) else None
            return
        if total is not None and total == self._last_total:
            return  # the same call's usage logged again
        self._last_total = total
        if self.last_assistant is None:
            return
        call_total = last.get("total_tokens")
        self._last_call_tokens = call_total if isinstance(call_total, int) else None
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
