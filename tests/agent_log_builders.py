"""Small Claude Code and Codex logs built line by line, so each reader field and trigger rule is pinned by hand.

``ClaudeLog`` writes what Claude Code writes: user/assistant records chained by ``parentUuid``, one line per
content block of a response (same ``message.id``) with a usage snapshot, ``compact_boundary`` system records and
the compact-summary user line. ``CodexLog`` writes a rollout: ``session_meta``, ``turn_context``, ``response_item``
lines, ``token_count`` events and ``compacted`` records.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any


def png_bytes(width: int, height: int, *, noise: bool = False) -> bytes:
    """A valid greyscale PNG of the given size; with ``noise`` its pixels are random, so it compresses as badly as
    a screenshot's base64 does (a flat image would be a few hundred bytes)."""
    import random

    rng = random.Random(width * 7919 + height)
    raw = b"".join(b"\x00" + (rng.randbytes(width) if noise else b"\x80" * width) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class ClaudeLog:
    def __init__(self, version: str = "2.1.25", model: str = "claude-opus-4-5-20251101", *,
                 first_parent: str | None = None) -> None:
        self.version, self.model = version, model
        self.lines: list[dict[str, Any]] = []
        self.parent = first_parent
        self.n = 0

    def _base(self, kind: str) -> dict[str, Any]:
        self.n += 1
        uuid = f"u-{self.n:04d}"
        obj = {"parentUuid": self.parent, "isSidechain": False, "type": kind, "uuid": uuid,
               "sessionId": "s-1", "version": self.version, "timestamp": f"2026-01-01T00:{self.n // 60:02d}:{self.n % 60:02d}Z"}
        self.parent = uuid
        return obj

    def user(self, content: Any, **flags: Any) -> ClaudeLog:
        obj = self._base("user")
        obj["message"] = {"role": "user", "content": content}
        obj.update(flags)
        self.lines.append(obj)
        return self

    def tool_result(self, call_id: str, text: str) -> ClaudeLog:
        return self.user([{"type": "tool_result", "tool_use_id": call_id, "content": text}])

    def assistant(self, blocks: list[dict[str, Any]], *, input_total: int, output: int, msg_id: str | None = None,
                  snapshots: list[int] | None = None) -> ClaudeLog:
        """One response logged a block per line; ``snapshots`` are the output counts on each line."""
        msg_id = msg_id or f"msg_{self.n:04d}"
        outs = snapshots or [output] * len(blocks)
        for block, out in zip(blocks, outs, strict=True):
            obj = self._base("assistant")
            usage = {"input_tokens": 3, "cache_read_input_tokens": input_total - 3 - 100,
                     "cache_creation_input_tokens": 100, "output_tokens": out}
            obj["message"] = {"id": msg_id, "role": "assistant", "model": self.model, "content": [block],
                              "usage": usage}
            self.lines.append(obj)
        return self

    def compact(self, trigger: str, pre_tokens: int, summary: str, *, parent_missing: bool = False) -> ClaudeLog:
        obj = self._base("system")
        obj.update({"subtype": "compact_boundary", "content": "Conversation compacted",
                    "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
                    "logicalParentUuid": "u-missing" if parent_missing else obj["parentUuid"]})
        self.lines.append(obj)
        return self.user(summary, isCompactSummary=True)

    def microcompact(self, cleared: list[str], tokens_saved: int = 0) -> ClaudeLog:
        """Claude Code clearing tool results from the context (``microcompact_boundary``)."""
        obj = self._base("system")
        obj.update({"subtype": "microcompact_boundary", "content": "Context microcompacted",
                    "microcompactMetadata": {"trigger": "auto", "tokensSaved": tokens_saved,
                                             "compactedToolIds": cleared}})
        self.lines.append(obj)
        return self

    def text(self) -> str:
        return "\n".join(json.dumps(o) for o in self.lines) + "\n"


def thinking_block(text: str, signature: str = "") -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(call_id: str, name: str = "Bash", **inputs: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": inputs or {"command": "ls"}}


def image_block(width: int, height: int, *, noise: bool = True) -> dict[str, Any]:
    data = base64.b64encode(png_bytes(width, height, noise=noise)).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


class CodexLog:
    def __init__(self, version: str = "0.142.2", model: str = "gpt-5.5", window_logged: int = 258_400,
                 instructions: str = "You are Codex.") -> None:
        self.lines: list[dict[str, Any]] = []
        self.window = window_logged
        self.total = 0
        self.n = 0
        self.model = model
        self._add("session_meta", {"id": "sess-1", "cli_version": version, "base_instructions": {"text": instructions}})

    def _add(self, kind: str, payload: dict[str, Any]) -> CodexLog:
        self.n += 1
        self.lines.append({"timestamp": f"2026-06-01T00:00:{self.n:02d}.000Z", "type": kind, "payload": payload})
        return self

    def turn(self) -> CodexLog:
        self._add("event_msg", {"type": "task_started", "model_context_window": self.window})
        return self._add("turn_context", {"model": self.model, "effort": "high"})

    def end_turn(self) -> CodexLog:
        return self._add("event_msg", {"type": "task_complete"})

    def user(self, text: str) -> CodexLog:
        return self._add("response_item", {"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": text}]})

    def reasoning(self) -> CodexLog:
        return self._add("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "REDACTED"})

    def call(self, call_id: str, cmd: str = "ls") -> CodexLog:
        return self._add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call_id,
                                           "arguments": json.dumps({"cmd": cmd})})

    def output(self, call_id: str, text: str) -> CodexLog:
        return self._add("response_item", {"type": "function_call_output", "call_id": call_id, "output": text})

    def say(self, text: str) -> CodexLog:
        return self._add("response_item", {"type": "message", "role": "assistant",
                                           "content": [{"type": "output_text", "text": text}]})

    def tokens(self, input_tokens: int, output: int, *, cached: int = 0, reasoning: int = 0,
               repeat: bool = False) -> CodexLog:
        last = {"input_tokens": input_tokens, "cached_input_tokens": cached, "output_tokens": output,
                "reasoning_output_tokens": reasoning, "total_tokens": input_tokens + output}
        if not repeat:
            self.total += input_tokens + output
        info = {"total_token_usage": {"total_tokens": self.total}, "last_token_usage": last,
                "model_context_window": self.window}
        return self._add("event_msg", {"type": "token_count", "info": info})

    def compacted(self, kept_user: list[str], after_estimate: int) -> CodexLog:
        history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]}
                   for t in kept_user] + [{"type": "compaction", "encrypted_content": "REDACTED"}]
        self._add("compacted", {"message": "", "replacement_history": history})
        last = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
                "total_tokens": after_estimate}
        return self._add("event_msg", {"type": "token_count", "info": {"total_token_usage": {"total_tokens": self.total},
                                                                       "last_token_usage": last}})

    def text(self) -> str:
        return "\n".join(json.dumps(o) for o in self.lines) + "\n"
