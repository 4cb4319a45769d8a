"""OpenCode's session export (``opencode export``: ``info`` + ``messages[]`` of ``{info, parts}``) as a History.

One OpenCode assistant message is one model call: its ``tool`` parts hold each call's input and output, so they
stay in the assistant message (as AI SDK tool parts), and ``info.tokens`` is that call's bill. A user message whose
part is ``{"type": "compaction"}`` asks for a compaction; the assistant message after it (``summary: true``, agent
"compaction") holds the real summary. Tool outputs stamped ``state.time.compacted`` were pruned by the agent. Read
from opencode-ai 1.3.2's bundled source (src/session/compaction.ts, message-v2.ts). Pure: a document in.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History, Part, text_part, tool_call_part
from workbench.history.readers.agent_log_common import logged_calls, with_log
from workbench.history.readers.builder import HistoryBuilder
from workbench.history.readers.jsontext import gc_paused, load_json, type_name
from workbench.history.session_log import CallUsage, LoggedCompaction, LoggedPrune, SessionLog, token_count
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Parts that never reach the model (step bookkeeping, file snapshots, patches, agent switches): counted, not kept.
_SILENT_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "agent", "retry", "subtask"})
# What OpenCode sends in place of a compaction request part (message-v2.ts toModelMessages).
COMPACTION_PROMPT = "What did we do so far?"


def is_opencode_export(doc: Any) -> bool:
    """Whether a JSON document is an OpenCode export: ``info`` an object, ``messages`` items ``{info, parts}``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("info"), dict) or not isinstance(doc.get("messages"), list):
        return False
    items = [m for m in doc["messages"][:20] if isinstance(m, dict)]
    return bool(items) and any(isinstance(m.get("info"), dict) and "parts" in m for m in items)


@gc_paused
def parse_opencode(text: str, *, source: str = "<text>") -> History:
    """Read an OpenCode export (``opencode export <session>``)."""
    return opencode_from_document(load_json(text, source=source), source=source)


def opencode_from_document(doc: Any, *, source: str) -> History:
    if not isinstance(doc, dict):
        raise HistoryError(f"expected an OpenCode export object, got {type_name(doc)}", source=source)
    info = doc.get("info")
    if not isinstance(info, dict):
        raise HistoryError(f"must be an object, got {type_name(info)}", source=source, field="info")
    items = doc.get("messages")
    if not isinstance(items, list):
        raise HistoryError(f"must be an array, got {type_name(items)}", source=source, field="messages")
    reader = _OpenCode(source)
    for i, item in enumerate(items):
        where = f"messages[{i}]"
        try:
            reader.message(item, where)
        except HistoryError as exc:
            raise exc.located(source=source, where=where) from None
    meta: dict[str, Any] = {key: info[key] for key in ("id", "title", "directory", "version", "projectID")
                            if isinstance(info.get(key), str)}
    meta["skipped_parts"] = dict(reader.skipped)
    meta["tool_calls"] = reader.b.calls
    history = reader.b.build(source=source, source_format="opencode", meta=meta)
    models = tuple(dict.fromkeys(m for msg in history.messages if isinstance(m := msg.meta("model"), str)))
    version = info.get("version")
    session = info.get("id")
    log = SessionLog(agent="opencode", version=version if isinstance(version, str) else None, models=models,
                     calls=logged_calls(history.messages), compactions=tuple(reader.compactions),
                     session_id=session if isinstance(session, str) else None, prunes=reader.prunes(),
                     extra={"providers": sorted(reader.providers)} if reader.providers else {})
    return with_warnings(with_log(history, log), reader.warnings)


def iso_ms(value: Any) -> str | None:
    """A JavaScript epoch-milliseconds time as ISO 8601 UTC text (None for anything that is not one)."""
    ms = token_count(value)
    if ms is None:
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace(
            "+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


class _OpenCode:
    """Turns export messages into Messages, keeping the compactions, prunes and each call's bill."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.b = HistoryBuilder()
        self.warnings: list[LoadWarning] = []
        self.skipped: Counter[str] = Counter()
        self.compactions: list[LoggedCompaction] = []
        self.providers: set[str] = set()
        self._pending: dict[str, Any] | None = None  # a compaction request waiting for its summary
        self._last_total: int | None = None  # the last call's billed total: what OpenCode's isOverflow compares
        self._pruned: dict[int, list[int]] = {}  # compacted time (ms) -> messages whose outputs it cleared
        self._created: list[int | None] = []  # each message's created time (ms)
        self._where: str | None = None

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(LoadWarning(source=self.source, where=self._where, field=field, message=message))

    def message(self, item: Any, where: str) -> None:
        self._where = where
        if not isinstance(item, dict):
            raise HistoryError(f"expected a message object, got {type_name(item)}")
        info = item.get("info")
        if not isinstance(info, dict):
            raise HistoryError(f"must be an object, got {type_name(info)}", field="info")
        parts = item.get("parts")
        if parts is None:
            parts = []
        if not isinstance(parts, list):
            raise HistoryError(f"must be an array, got {type_name(parts)}", field="parts")
        role = info.get("role")
        time = info.get("time")
        created = token_count(time.get("created")) if isinstance(time, dict) else None
        metadata: dict[str, Any] = {}
        stamp = iso_ms(created)
        if stamp is not None:
            metadata["createdAt"] = stamp
        if role == "user":
            self.user(info, parts, metadata, created)
        elif role == "assistant":
            self.assistant(info, parts, metadata, created)
        else:
            raise HistoryError(f"unknown role {shown(role)} (expected user or assistant)", field="info.role")

    def user(self, info: dict[str, Any], parts: list[Any], metadata: dict[str, Any], created: int | None) -> None:
        request = next((p for p in parts if isinstance(p, dict) and p.get("type") == "compaction"), None)
        if request is not None:  # the agent's request for a compaction: a marker, not a message of the transcript
            self._pending = {"auto": request.get("auto") is not False, "timestamp": metadata.get("createdAt")}
            parts = [p for p in parts if p is not request]
            if not any(isinstance(p, dict) and p.get("type") in ("text", "file") for p in parts):
                return
        converted = [p for j, raw in enumerate(parts) if (p := self.part(raw, j)) is not None]
        self._add("user", converted, info, metadata, created)

    def assistant(self, info: dict[str, Any], parts: list[Any], metadata: dict[str, Any], created: int | None) -> None:
        for key, name in (("modelID", "model"), ("providerID", "provider")):
            if isinstance(info.get(key), str):
                metadata[name] = info[key]
        if isinstance(info.get("providerID"), str):
            self.providers.add(info["providerID"])
        converted = [p for j, raw in enumerate(parts) if (p := self.part(raw, j)) is not None]
        usage = self.usage(info.get("tokens"))
        summary = info.get("summary") is True or info.get("mode") == "compaction" or info.get("agent") == "compaction"
        if summary:
            # The summarizer's own call: its bill describes the old context with the compaction prompt, not the
            # context that follows; kept apart so the usage counter does not read it as the new context.
            if usage is not None:
                metadata["briefingUsage"] = usage.to_dict()
            index = self._add("assistant", converted, info, metadata, created)
            pending = self._pending or {"auto": True, "timestamp": metadata.get("createdAt")}
            text = "\n".join(p.text or "" for p in converted if p.kind == "text")
            self.compactions.append(LoggedCompaction(
                source_line=None, index=index, trigger="auto" if pending["auto"] else "manual",
                tokens_before=self._last_total, summary=text or None, summary_index=index,
                timestamp=pending["timestamp"]))
            self._pending = None
            return
        if usage is not None:
            metadata["usage"] = usage.to_dict()
            self._last_total = usage.total_tokens
        self._add("assistant", converted, info, metadata, created)

    def _add(self, role: str, parts: list[Part], info: dict[str, Any], metadata: dict[str, Any],
             created: int | None) -> int:
        index = self.b.add(role, parts or [text_part("")], id=info.get("id"), metadata=metadata or None)
        self._created.append(created)
        return index

    def usage(self, tokens: Any) -> CallUsage | None:
        """``info.tokens`` (input uncached, output, reasoning, cache read and write) as a call's usage."""
        if not isinstance(tokens, dict):
            return None
        cache = tokens.get("cache")
        cache = cache if isinstance(cache, dict) else {}
        raw = {"input": tokens.get("input"), "output": tokens.get("output"), "reasoning": tokens.get("reasoning"),
               "cache.read": cache.get("read"), "cache.write": cache.get("write"), "total": tokens.get("total")}
        values: dict[str, int] = {}
        for key, value in raw.items():
            if value is None:
                continue
            count = token_count(value)
            if count is None:
                self.warn(f"info.tokens.{key}", f"not a token count ({shown(value, 40)}): this call's usage ignored")
                return None
            values[key] = count
        reasoning = values.get("reasoning", 0)
        out = CallUsage(input_tokens=values.get("input", 0), cache_read_tokens=values.get("cache.read", 0),
                        cache_write_tokens=values.get("cache.write", 0),
                        output_tokens=values.get("output", 0) + reasoning, reasoning_tokens=reasoning,
                        logged_total=values.get("total") or None)
        return out if out.total_tokens > 0 else None

    def part(self, raw: Any, j: int) -> Part | None:
        if not isinstance(raw, dict):
            raise HistoryError(f"must be an object, got {type_name(raw)}", field=f"parts[{j}]")
        kind = raw.get("type")
        if kind == "text":
            text = raw.get("text")
            return text_part(text if isinstance(text, str) else "")
        if kind == "reasoning":
            text = raw.get("text")
            return Part(data={"type": "reasoning", "text": text if isinstance(text, str) else ""})
        if kind == "file":
            data = {"type": "file", "mediaType": raw.get("mime"), "url": raw.get("url")}
            if isinstance(raw.get("filename"), str):
                data["filename"] = raw["filename"]
            return Part(data=data)
        if kind == "tool":
            return self.tool(raw, j)
        if kind == "compaction":  # a request part inside a message that also holds text: what the model read
            return text_part(COMPACTION_PROMPT)
        self.skipped[str(kind) if isinstance(kind, str) else f"<{type_name(kind)}>"] += 1
        if not (isinstance(kind, str) and kind in _SILENT_PARTS):
            self.warn(f"parts[{j}].type", f"not an OpenCode part type ({shown(kind, 40)}): part skipped")
        return None

    def tool(self, raw: dict[str, Any], j: int) -> Part:
        name = raw.get("tool")
        call_id = raw.get("callID")
        if not isinstance(name, str) or not name:
            raise HistoryError(f"must be a non-empty string, got {type_name(name)}", field=f"parts[{j}].tool")
        if not isinstance(call_id, str):
            own = raw.get("id")
            call_id = own if isinstance(own, str) else f"call-{len(self.b)}-{j}"
        state = raw.get("state")
        state = state if isinstance(state, dict) else {}
        status = state.get("status")
        if status == "completed":
            output = state.get("output")
            time = state.get("time")
            compacted = token_count(time.get("compacted")) if isinstance(time, dict) else None
            if compacted is not None:
                self._pruned.setdefault(compacted, []).append(len(self.b))
            return tool_call_part(name, call_id, state.get("input"), state="output-available",
                                  output=output if output is not None else "")
        if status == "error":
            error = state.get("error")
            return tool_call_part(name, call_id, state.get("input"), state="output-error",
                                  error_text=error if isinstance(error, str) else shown(error))
        return tool_call_part(name, call_id, state.get("input"))

    def prunes(self) -> tuple[LoggedPrune, ...]:
        """Each prune: the outputs it cleared, from the first message created after its stamp (the end when none)."""
        out = []
        for stamp, messages in sorted(self._pruned.items()):
            index = next((i for i, t in enumerate(self._created) if t is not None and t > stamp), len(self._created))
            out.append(LoggedPrune(index=index, messages=tuple(sorted(set(messages))), timestamp=iso_ms(stamp)))
        return tuple(out)
