"""Readers for the native session logs of coding agents: Claude Code ``.jsonl`` and Codex CLI rollouts.

Both logs hold far more than the model saw (UI events, snapshots, token counts); only model-facing
records become messages, following ``shared/real_histories/SOURCES.md``. What is dropped is counted
in ``History.meta`` so a reader can tell a quiet log from a lossy read. Text in, History out; no I/O.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from workbench.history.builder import HistoryBuilder, parse_arguments
from workbench.history.chat_formats import add_anthropic_content, file_part
from workbench.history.errors import HistoryError
from workbench.history.jsontext import Record, gc_paused, jsonl_records, locate, require_object, type_name
from workbench.history.model import History, Part, text_part
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
    meta: dict[str, Any] = {"summaries": [], "compactions": []}
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
    reader = _ClaudeCode(meta["compactions"])
    for record in chosen:
        try:
            reader.line(record[2])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="claude_code", meta=meta)
    return with_warnings(history, _unknown_type_warnings(unknown, skipped, source=source, log="Claude Code"))


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
    """Turns Claude Code lines into messages; lines of one API response (same ``message.id``) merge."""

    def __init__(self, compactions: list[dict[str, Any]]) -> None:
        self.b = HistoryBuilder()
        self.by_api_id: dict[str, int] = {}
        self.compactions = compactions

    def line(self, obj: dict[str, Any]) -> None:
        stamp = obj.get("timestamp")
        if obj.get("type") == "system":  # compact_boundary: the following user line is the summary
            info = obj.get("compactMetadata")
            self.compactions.append({"index": len(self.b), "timestamp": stamp, **(info if isinstance(info, dict) else {})})
            return
        message = obj.get("message")
        if not isinstance(message, dict):
            raise HistoryError(f"must be an object, got {type_name(message)}", field="message")
        metadata: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
        if obj["type"] == "assistant":
            api_id = message.get("id")
            usage = {"usage": message["usage"]} if isinstance(message.get("usage"), dict) else {}
            earlier = self.by_api_id.get(api_id) if isinstance(api_id, str) else None
            if earlier is not None:
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
        add_anthropic_content(self.b, "user", message.get("content"), id=obj.get("uuid"), metadata=metadata or None)


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
            reader.line(require_object(record[2], what="a JSON object"))
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
        kind = record[2].get("type")
        if kind not in _CODEX_TYPES:
            unknown.setdefault(str(kind), record)
    meta = reader.meta
    meta["dropped_items"] = dict(reader.dropped)
    meta["skipped_records"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="codex", meta=meta)
    return with_warnings(history, _unknown_type_warnings(unknown, reader.skipped, source=source, log="Codex"))


class _Codex:
    """Groups consecutive assistant items (text, reasoning, calls) into one message until an output arrives."""

    def __init__(self) -> None:
        self.b = HistoryBuilder()
        self.group: int | None = None
        self.last_assistant: int | None = None
        self.meta: dict[str, Any] = {"models": [], "compactions": [], "turns_aborted": 0}
        self.dropped: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()

    def line(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            raise HistoryError(f"must be an object, got {type_name(payload)}", field="payload")
        stamp = obj.get("timestamp")
        metadata = {"createdAt": stamp} if isinstance(stamp, str) else None
        if kind == "response_item":
            self.item(payload, metadata)
        elif kind == "session_meta":
            self.session(payload, metadata)
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model not in self.meta["models"]:
                self.meta["models"].append(model)
        elif kind == "compacted":  # Codex's own compaction: not a message; the file keeps what came before
            history = payload.get("replacement_history")
            self.meta["compactions"].append({"index": len(self.b), "timestamp": stamp,
                                             "replacement_items": len(history) if isinstance(history, list) else 0})
            self.group = None
        elif kind == "event_msg":  # the UI's copy of the stream; only usage and aborts are worth keeping
            event = payload.get("type")
            if event == "token_count" and self.last_assistant is not None and isinstance(payload.get("info"), dict):
                usage = payload["info"].get("last_token_usage")
                if isinstance(usage, dict):
                    self.b.extend(self.last_assistant, [], metadata={"usage": usage})
            elif event == "turn_aborted":
                self.meta["turns_aborted"] += 1
            self.skipped[f"event_msg:{event}"] += 1
        else:
            self.skipped[str(kind)] += 1

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
