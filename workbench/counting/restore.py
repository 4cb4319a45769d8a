"""What an agent re-reads into its context right after a compaction: its most recently read files.

Claude Code restores up to 5 files it had read (or written), newest first, each re-read at most 5,000 tokens,
while the running total stays within 50,000; plan files and CLAUDE.md / memory files are left out
(2.1.88 source map compact.ts ``POST_COMPACT_MAX_FILES_TO_RESTORE = 5``, ``POST_COMPACT_MAX_TOKENS_PER_FILE =
5_000``, ``POST_COMPACT_TOKEN_BUDGET = 50_000``, ``createPostCompactFileAttachments``; the same constants are in
the 2.1.25 and 2.1.39 bundles). None of it is logged, so a replay works it out from the transcript: the file
tools' calls give the paths and their results (or a write's content) the sizes. Pure; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

RESTORE_BUDGET_TOKENS = 50_000
READ_TOOLS = frozenset({"Read", "read_file", "view", "read"})
WRITE_TOOLS = frozenset({"Write", "write_file", "create_file"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "edit_file", "str_replace", "NotebookEdit"})
_TOOL_TYPES = ("tool-", "dynamic-tool")  # the part types Part.kind calls "tool" or "tool-result"
_EXCLUDED_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
_EXCLUDED_PARTS = ("/.claude/plans/", "/.claude/memory", "/memory/")


def _path_of(data: dict[str, Any]) -> str | None:
    value = data.get("input")
    if isinstance(value, dict):
        for key in ("file_path", "path", "notebook_path", "filePath"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _excluded(path: str) -> bool:
    return path.endswith(_EXCLUDED_NAMES) or any(p in path for p in _EXCLUDED_PARTS)


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(len(v["text"]) for v in value if isinstance(v, dict) and isinstance(v.get("text"), str))
    return 0


def _read(size: dict[str, int], path: str, output: Any, start: int, chars_per_token: float) -> None:
    """The file's size as the latest read of it showed it (a range read shows only its range: the restore
    re-reads the file whole, so this can fall short; the log has no better measure)."""
    size[path] = math.ceil(_chars(output) / chars_per_token)


def restored_file_tokens(
    messages: Sequence[Any], *, files: int, per_file_tokens: int, chars_per_token: float = 4.0
) -> int:
    """Tokens of the files an agent restores after compacting at the end of ``messages``."""
    return sum(tokens for _, tokens in restored_files(messages, files=files, per_file_tokens=per_file_tokens,
                                                      chars_per_token=chars_per_token))


def restored_files(
    messages: Sequence[Any], *, files: int, per_file_tokens: int, chars_per_token: float = 4.0
) -> tuple[tuple[str, int], ...]:
    """The files (path, tokens restored), newest first, an agent restores after compacting at the end of ``messages``."""
    if files <= 0:
        return ()
    size: dict[str, int] = {}  # path -> tokens of its last known content
    last_use: dict[str, int] = {}  # path -> order of its last read, write or edit
    pending: dict[str, tuple[str, int]] = {}  # call id -> (path, first line read)
    order = 0
    for msg in messages:
        for part in msg.parts or ():
            data = part.data
            if not isinstance(data, dict):
                continue
            kind = data.get("type")
            if not (isinstance(kind, str) and kind.startswith(_TOOL_TYPES)):  # Part.kind, for text parts quickly
                continue
            kind = part.kind
            if kind == "tool":
                name = part.tool_name or ""
                path = _path_of(data)
                if path is None or _excluded(path):
                    continue
                order += 1
                if name in WRITE_TOOLS:
                    content = data["input"].get("content") if isinstance(data.get("input"), dict) else None
                    size[path] = math.ceil(_chars(content) / chars_per_token)
                    last_use[path] = order
                elif name in EDIT_TOOLS:
                    last_use[path] = order
                elif name in READ_TOOLS:
                    last_use[path] = order
                    raw_args = data.get("input")
                    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
                    offset = args.get("offset")
                    start = int(offset) if isinstance(offset, (int, float)) and not isinstance(offset, bool) else 0
                    if "output" in data:  # the result sits in the call (AI SDK shape)
                        _read(size, path, data["output"], start, chars_per_token)
                    elif part.tool_call_id:
                        pending[part.tool_call_id] = (path, start)
            elif kind == "tool-result" and part.tool_call_id in pending:
                path, start = pending.pop(part.tool_call_id or "")
                _read(size, path, data.get("output"), start, chars_per_token)
    total = 0
    chosen: list[tuple[str, int]] = []
    for path in sorted(last_use, key=lambda p: -last_use[p]):
        if path not in size:
            continue
        tokens = min(size[path], per_file_tokens)
        if total + tokens > RESTORE_BUDGET_TOKENS:
            break
        total += tokens
        chosen.append((path, tokens))
        if len(chosen) >= files:
            break
    return tuple(chosen)
