"""Claude Code's session log (``~/.claude/projects/*/<session>.jsonl``) as a History with its SessionLog.

Only model-facing records become messages (user and assistant lines, merged per API response); the
``compact_boundary`` system records are the agent's own compactions, the compact-summary user line after
each holds the real summary. Sidechains (subagents) are read apart. Text in, History out; no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers.agent_log_common import logged_calls, record_type, unknown_type_warnings, with_log
from workbench.history.readers.builder import HistoryBuilder
from workbench.history.readers.chat_formats import add_anthropic_content
from workbench.history.readers.jsontext import (
    Record,
    corrupt_line_warnings,
    gc_paused,
    jsonl_records,
    locate,
    type_name,
)
from workbench.history.session_log import MAX_FILE_LINES, LoggedCompaction, SessionLog, token_count, usage_problem
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Record types the log is known to hold besides messages; any other type is skipped with a warning.
# System records the reader follows: the agent's compactions, and its microcompactions (tool results it cleared from
# the context, ``microcompactMetadata.compactedToolIds``: 2.1.17 and 2.1.20 logs in ../shared/real_sessions_large).
_BOUNDARIES = ("compact_boundary", "microcompact_boundary")
# A session's slug as Claude Code makes it (words joined by hyphens, 2.1.39 cli.js ``j_6``): anything else in the field
# is not taken for a file name.
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_CLAUDE_OTHER_TYPES = frozenset({"summary", "system", "file-history-snapshot", "queue-operation", "progress", "pr-link"})


@gc_paused
def parse_claude_code(text: str, *, source: str = "<text>", sidechain: str | None = None) -> History:
    """Read a Claude Code session log: the main thread, or the sidechain (subagent) rooted at ``sidechain``.

    A file that holds only sidechains yields its first one. ``meta["sidechains"]`` lists every root uuid.
    """
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []
    records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
    warnings[:0] = corrupt_line_warnings("claude_code", corrupt, len(records))
    return with_warnings(claude_code_from_records(records, source=source, sidechain=sidechain), warnings)


def claude_code_from_records(records: list[Record], *, source: str, sidechain: str | None = None) -> History:
    main: list[Record] = []
    side: list[Record] = []
    meta: dict[str, Any] = {"summaries": []}
    skipped: Counter[str] = Counter()
    unknown: dict[str, Record] = {}
    restarts: list[int] = []  # lines where the agent's process started again on this transcript (resumed)
    missing = ["sessionId", "version", "cwd", "gitBranch"]  # the meta keys no record has given yet, in this order
    uuids: set[str] = set()  # every record's, gathered in this one pass over the records
    for record in records:
        obj = record[2]
        if not isinstance(obj, dict):
            raise locate(HistoryError(f"expected a JSON object, got {type_name(obj)}"), record, source=source)
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            uuids.add(uuid)
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = record_type(obj)
        if kind == "progress" and _resumed(obj) and record[0] is not None:
            restarts.append(record[0])
        if kind in ("user", "assistant") or (kind == "system" and obj.get("subtype") in _BOUNDARIES):
            (side if obj.get("isSidechain") else main).append(record)
        elif kind == "summary":  # a session title for the picker, pointing at the leaf it describes
            meta["summaries"].append({"summary": obj.get("summary"), "leafUuid": obj.get("leafUuid")})
        else:
            skipped[kind] += 1
            if kind not in _CLAUDE_OTHER_TYPES:
                unknown.setdefault(kind, record)
        if missing:  # once each has been found, no record is asked again
            found = [key for key in missing if isinstance(obj.get(key), str)]
            if found:
                for key in found:
                    meta[key] = obj[key]
                missing = [key for key in missing if key not in meta]
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
    reader = _ClaudeCode(uuids, source=source, restarts=restarts)
    for record in chosen:
        try:
            reader.line(record[2], record[0])
        except HistoryError as exc:
            raise locate(exc, record, source=source) from None
    meta["tool_calls"] = reader.b.calls
    for index, ids in reader.microcompactions:  # on the first message after it: a window of the log keeps it
        if index < len(reader.b):
            reader.b.extend(index, [], metadata={"clearedToolIds": ids})
    history = reader.b.build(source=source, source_format="claude_code", meta=meta)
    models = tuple(dict.fromkeys(model for m in history.messages if isinstance(model := m.meta("model"), str)))
    # A log whose first record already has a parent it does not hold is a later part of a longer session:
    # the context its first call reads is more than the transcript shows.
    first = next((r[2].get("parentUuid") for r in records if isinstance(r[2], dict) and "parentUuid" in r[2]), None)
    extra: dict[str, Any] = {"starts_mid_session": True} if isinstance(first, str) and first not in reader._uuids else {}
    if extra:  # when the earlier part ended: its last turn's records (stop hook, turn duration) open the file
        when = next((r[2]["timestamp"] for r in records if isinstance(r[2], dict)
                     and isinstance(r[2].get("timestamp"), str)), None)
        if when is not None:
            extra["earlier_time"] = when
    if reader.microcompactions:
        extra["microcompactions"] = reader.microcompactions
    log = SessionLog(agent="claude_code", version=meta.get("version"), models=models,
                     calls=logged_calls(history.messages), compactions=tuple(reader.compactions()),
                     session_id=meta.get("sessionId"), extra=extra)
    return with_warnings(with_log(history, log),
                         [*reader.warnings, *unknown_type_warnings(unknown, skipped, source=source, log="Claude Code")])



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


def _resumed(obj: dict[str, Any]) -> bool:
    """A record that says the session was resumed: the SessionStart hook of source ``resume`` ran (a hook_progress
    record, ``SessionStart:resume``), which Claude Code does as it loads a transcript to go on with it."""
    data = obj.get("data")
    return isinstance(data, dict) and data.get("hookName") == "SessionStart:resume"


class _ClaudeCode:
    """Turns Claude Code lines into messages; lines of one API response (same ``message.id``) merge.

    A ``compact_boundary`` record is the agent's compaction; the compact-summary user line after it holds
    the real summary. One response is logged a content block per line, each with a usage snapshot: the
    last line's usage is kept (its ``output_tokens`` is the highest the log has, which can still be short
    of the final count).
    """

    def __init__(self, uuids: set[str] | None = None, *, source: str = "<text>", restarts: list[int] | None = None) -> None:
        self.b = HistoryBuilder()
        self._restarts = sorted(restarts or [], reverse=True)  # the next one last
        self.by_api_id: dict[str, int] = {}
        self._compactions: list[dict[str, Any]] = []
        self.microcompactions: list[list[Any]] = []  # [first message after it, [cleared tool call ids]]
        self._uuids = uuids or set()
        self.source = source
        self.warnings: list[LoadWarning] = []
        self._line: int | None = None

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(LoadWarning(source=self.source, line=self._line, field=field, message=message))

    def compactions(self) -> list[LoggedCompaction]:
        out = []
        for c in self._compactions:
            out.append(LoggedCompaction(
                source_line=c.get("line"), index=c["index"], trigger="manual" if c.get("trigger") == "manual" else "auto",
                tokens_before=c.get("preTokens"),
                summary=c.get("summary"), summary_index=c.get("summary_index"), timestamp=c.get("timestamp"),
                parent_missing=c.get("parent_missing", False)))
        return out

    def line(self, obj: dict[str, Any], number: int | None = None) -> None:
        stamp = obj.get("timestamp")
        self._line = number
        kind = obj.get("type")
        if kind == "system":
            if obj.get("subtype") == "microcompact_boundary":
                info = obj.get("microcompactMetadata")
                ids = info.get("compactedToolIds") if isinstance(info, dict) else None
                if isinstance(ids, list):
                    self.microcompactions.append([len(self.b), [i for i in ids if isinstance(i, str)]])
                return
            # compact_boundary: the following user line is the summary
            self._compactions.append(self._boundary(obj, stamp, number))
            return
        message = obj.get("message")
        if not isinstance(message, dict):
            raise HistoryError(f"must be an object, got {type_name(message)}", field="message")
        metadata: dict[str, Any] = {"createdAt": stamp} if isinstance(stamp, str) else {}
        if number is not None:
            metadata["sourceLine"] = number
            if self._restarts and self._restarts[-1] < number:  # the first message after the session was resumed
                while self._restarts and self._restarts[-1] < number:
                    self._restarts.pop()
                metadata["resumed"] = True
        if kind == "assistant":
            api_id = message.get("id")
            usage = self._usage(message.get("usage"))
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
        if obj.get("isMeta") is True:
            metadata["isMeta"] = True
        if obj.get("isCompactSummary") is True:
            metadata["isCompactSummary"] = True
        if _thinking_off(obj.get("thinkingMetadata")):  # the prompt asked for no thinking (analysis.real_logs.bill)
            metadata["thinkingOff"] = True
        plan = obj.get("planContent")
        if isinstance(plan, str):  # a session started from a plan approved with "clear context"
            metadata["planContent"] = plan  # (its plan file goes on: counting.restore re-attaches it)
            slug = obj.get("slug")  # the plan file's name (the session's slug, which it took over)
            if isinstance(slug, str) and _SLUG.fullmatch(slug):
                metadata["planSlug"] = slug
        elif plan is not None:
            self.warn("planContent", f"not text ({shown(plan, 40)}): no approved plan is re-attached")
        lines = _read_lines(obj.get("toolUseResult"))
        if lines == ():
            self.warn("toolUseResult.file", f"line counts that are no line counts (over {MAX_FILE_LINES:,}): the "
                                            "file's size is taken from what the read showed")
        elif lines is not None:
            metadata["readLines"] = list(lines)
        index = len(self.b)
        add_anthropic_content(self.b, "user", message.get("content"), id=obj.get("uuid"), metadata=metadata or None)
        pending = self._compactions[-1] if self._compactions else None
        if obj.get("isCompactSummary") is True and pending is not None and "summary_index" not in pending:
            content = message.get("content")
            pending["summary_index"] = index
            pending["summary"] = content if isinstance(content, str) else "\n".join(
                b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
            ) if isinstance(content, list) else None


    def _boundary(self, obj: dict[str, Any], stamp: Any, number: int | None) -> dict[str, Any]:
        """A compact_boundary's entry: only the two fields read from ``compactMetadata`` (trigger, preTokens), so no
        key of it can overwrite the reader's own (index, line, summary)."""
        info = obj.get("compactMetadata")
        info = info if isinstance(info, dict) else {}
        parent = obj.get("logicalParentUuid")
        pre = info.get("preTokens")
        tokens = token_count(pre)
        if pre is not None and tokens is None:
            self.warn("compactMetadata.preTokens", f"not a token count ({shown(pre, 40)}): the compaction's logged "
                                                   "size is unknown")
        return {"index": len(self.b), "timestamp": stamp if isinstance(stamp, str) else None, "line": number,
                "parent_missing": isinstance(parent, str) and parent not in self._uuids,
                "trigger": info.get("trigger"), "preTokens": tokens}

    def _usage(self, usage: Any) -> dict[str, Any]:
        """``{"usage": usage}`` for the message's metadata; empty (the call's usage ignored, with a warning) when
        one of its numbers is not a token count."""
        if not isinstance(usage, dict):
            return {}
        bad = usage_problem(usage)
        if bad is not None:
            self.warn(f"message.usage.{bad}", f"not a token count ({shown(usage[bad], 40)}): this call's usage "
                                              "ignored")
            return {}
        return {"usage": usage}


def _thinking_off(info: Any) -> bool:
    """Whether a prompt's ``thinkingMetadata`` says thinking was off: ``maxThinkingTokens`` 0 (2.1.19 and later),
    ``disabled`` or ``level`` "none" (before)."""
    if not isinstance(info, dict):
        return False
    budget = info.get("maxThinkingTokens")  # a JSON 0, not false or 0.0 (which compare equal to it)
    return (type(budget) is int and budget == 0) or info.get("disabled") is True or info.get("level") == "none"


def _read_lines(result: Any) -> tuple[int, ...] | None:
    """(first line, lines shown, lines in the file) of a Read result (``toolUseResult.file``): what a replay needs to
    size the whole file the agent may re-read after a compaction when the read showed only a range. None when the
    result has no such counts; () when they are whole numbers past ``MAX_FILE_LINES`` (the caller warns)."""
    file = result.get("file") if isinstance(result, dict) else None
    if not isinstance(file, dict):
        return None
    values = [file.get(k) for k in ("startLine", "numLines", "totalLines")]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    if len(ints) != 3:
        return None
    return tuple(ints) if max(ints) <= MAX_FILE_LINES else ()
