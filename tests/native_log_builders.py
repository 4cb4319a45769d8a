"""Small OpenCode, Copilot CLI, Gemini CLI and Pi logs built record by record, so each reader rule is pinned by hand.

``OpenCodeLog`` writes an export (``info`` + ``messages[]`` of ``{info, parts}``), and the same session as OpenCode's
database or its older storage folder; ``CopilotLog`` writes ``events.jsonl``; ``GeminiLog`` a chat recording (the
JSON document or the record-per-line layout); ``PiLog`` a session file with its entry tree.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

T0 = 1_776_105_600_000  # ms


class OpenCodeLog:
    def __init__(self, version: str = "1.4.3", provider: str = "github-copilot", model: str = "claude-sonnet-4.6"):
        self.version, self.provider, self.model = version, provider, model
        self.messages: list[dict[str, Any]] = []
        self.t = T0

    def _info(self, role: str, **more: Any) -> dict[str, Any]:
        self.t += 1000
        n = len(self.messages)
        return {"id": f"msg_{n:04d}", "sessionID": "ses_1", "role": role, "time": {"created": self.t}, **more}

    def user(self, text: str) -> OpenCodeLog:
        info = self._info("user", agent="build", model={"providerID": self.provider, "modelID": self.model})
        self.messages.append({"info": info, "parts": [{"id": f"prt_{len(self.messages):04d}a", "type": "text",
                                                       "text": text}]})
        return self

    def assistant(self, text: str = "ok", *, total: int, tools: list[dict[str, Any]] = (),  # type: ignore[assignment]
                  summary: bool = False, tokens: dict[str, Any] | None = None) -> OpenCodeLog:
        """One step; ``total`` is its bill's total (input + cache read, output 100)."""
        toks = tokens or {"total": total, "input": 500, "output": 100, "reasoning": 0,
                          "cache": {"read": total - 600, "write": 0}}
        info = self._info("assistant", modelID=self.model, providerID=self.provider, tokens=toks,
                          mode="compaction" if summary else "build", agent="compaction" if summary else "build")
        if summary:
            info["summary"] = True
        parts: list[dict[str, Any]] = [{"type": "step-start"}, {"type": "text", "text": text}, *tools,
                                       {"type": "step-finish"}]
        self.messages.append({"info": info, "parts": parts})
        return self

    def compaction(self, *, auto: bool = True) -> OpenCodeLog:
        info = self._info("user", agent="build", model={"providerID": self.provider, "modelID": self.model})
        self.messages.append({"info": info, "parts": [{"type": "compaction", "auto": auto, "overflow": False}]})
        return self

    def doc(self) -> dict[str, Any]:
        return {"info": {"id": "ses_1", "slug": "s", "projectID": "p1", "directory": "/w", "title": "t",
                         "version": self.version, "time": {"created": T0, "updated": self.t}},
                "messages": self.messages}

    def text(self) -> str:
        return json.dumps(self.doc())

    def write_db(self, path: Path, *, extra_sessions: int = 0) -> Path:
        """The session as OpenCode's SQLite database holds it (rows' ``data`` without their ids)."""
        con = sqlite3.connect(path)
        con.executescript(
            "CREATE TABLE session (id text PRIMARY KEY, project_id text, parent_id text, slug text, directory text, "
            "title text, version text, time_created integer, time_updated integer);"
            "CREATE TABLE message (id text PRIMARY KEY, session_id text, time_created integer, time_updated integer, "
            "data text);"
            "CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, time_created integer, "
            "time_updated integer, data text);")
        for s in range(1 + extra_sessions):
            sid = "ses_1" if s == 0 else f"ses_{s + 1}"
            con.execute("INSERT INTO session VALUES (?,?,?,?,?,?,?,?,?)",
                        (sid, "p1", None, "s", "/w", f"t{s}", self.version, T0 + s, self.t))
            for m in self.messages:
                info = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
                mid = f"{m['info']['id']}-{s}"
                con.execute("INSERT INTO message VALUES (?,?,?,?,?)",
                            (mid, sid, m["info"]["time"]["created"], 0, json.dumps(info)))
                for j, part in enumerate(m["parts"]):
                    con.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
                                (f"prt_{mid}_{j:03d}", mid, sid, 0, 0, json.dumps(part)))
        con.commit()
        con.close()
        return path

    def write_storage(self, root: Path) -> Path:
        """The session as OpenCode's older storage folder holds it; returns the session file."""
        info = self.doc()["info"]
        (root / "session" / "p1").mkdir(parents=True)
        session_file = root / "session" / "p1" / "ses_1.json"
        session_file.write_text(json.dumps(info))
        for m in self.messages:
            mid = m["info"]["id"]
            (root / "message" / "ses_1").mkdir(parents=True, exist_ok=True)
            (root / "message" / "ses_1" / f"{mid}.json").write_text(json.dumps(m["info"]))
            (root / "part" / mid).mkdir(parents=True, exist_ok=True)
            for j, part in enumerate(m["parts"]):
                body = {**part, "id": f"prt_{mid}_{j:03d}", "messageID": mid, "sessionID": "ses_1"}
                (root / "part" / mid / f"prt_{mid}_{j:03d}.json").write_text(json.dumps(body))
        return session_file


def oc_tool(name: str, call_id: str, output: str, *, compacted: int | None = None,
            status: str = "completed") -> dict[str, Any]:
    time: dict[str, Any] = {"start": T0, "end": T0}
    if compacted is not None:
        time["compacted"] = compacted
    state: dict[str, Any] = {"status": status, "input": {"path": "a.py"}, "time": time}
    if status == "completed":
        state["output"] = output
    elif status == "error":
        state["error"] = output
    return {"type": "tool", "tool": name, "callID": call_id, "state": state}


class CopilotLog:
    def __init__(self, version: str = "1.0.74", model: str = "claude-fable-5") -> None:
        self.version, self.model = version, model
        self.lines: list[dict[str, Any]] = []
        self.event("session.start", sessionId="s-1", copilotVersion=version, startTime="2026-07-24T10:00:00Z")
        self.event("session.model_change", newModel=model)

    def event(self, kind: str, *, agent: str | None = None, **data: Any) -> CopilotLog:
        n = len(self.lines)
        obj: dict[str, Any] = {"type": kind, "data": data, "id": f"e{n}", "timestamp": f"2026-07-24T10:{n // 60:02d}:"
                                                                                        f"{n % 60:02d}.000Z",
                               "parentId": f"e{n - 1}" if n else None}
        if agent is not None:
            obj["agentId"] = agent
        self.lines.append(obj)
        return self

    def system(self, text: str = "You are the GitHub Copilot CLI.") -> CopilotLog:
        return self.event("system.message", role="system", content=text)

    def user(self, text: str) -> CopilotLog:
        return self.event("user.message", content=text, transformedContent=f"<now/>\n{text}", attachments=[])

    def assistant(self, text: str, *, calls: list[tuple[str, str]] = (), out: int = 50,  # type: ignore[assignment]
                  model: str | None = None) -> CopilotLog:
        requests = [{"toolCallId": cid, "name": name, "arguments": {"command": "ls"}, "type": "function"}
                    for cid, name in calls]
        return self.event("assistant.message", messageId=f"m{len(self.lines)}", model=model or self.model,
                          content=text, toolRequests=requests, outputTokens=out)

    def result(self, call_id: str, text: str, *, success: bool = True) -> CopilotLog:
        return self.event("tool.execution_complete", toolCallId=call_id, success=success, result={"content": text})

    def compaction(self, *, pre: int, summary: str = "<overview>done</overview>", tools: int = 1000) -> CopilotLog:
        self.event("session.compaction_start", systemTokens=100, conversationTokens=pre - 100 - tools,
                   toolDefinitionsTokens=tools)
        return self.event("session.compaction_complete", success=True, preCompactionTokens=pre,
                          preCompactionMessagesLength=3, summaryContent=summary)

    def text(self) -> str:
        return "\n".join(json.dumps(x) for x in self.lines) + "\n"


class GeminiLog:
    def __init__(self, model: str = "gemini-3-flash-preview") -> None:
        self.model = model
        self.messages: list[dict[str, Any]] = []

    def _msg(self, kind: str, **more: Any) -> dict[str, Any]:
        n = len(self.messages)
        msg = {"id": f"g{n}", "timestamp": f"2026-04-14T14:{n:02d}:00.000Z", "type": kind, **more}
        self.messages.append(msg)
        return msg

    def user(self, text: str) -> GeminiLog:
        self._msg("user", content=[{"text": text}])
        return self

    def info(self, text: str) -> GeminiLog:
        self._msg("info", content=text)
        return self

    def gemini(self, text: str, *, prompt: int, cached: int = 0, output: int = 20, thoughts: int = 5,
               calls: list[tuple[str, str, str]] = ()) -> GeminiLog:  # type: ignore[assignment]
        tool_calls = [{"id": cid, "name": name, "args": {"file_path": "a"}, "status": "success",
                       "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": out}}}]}
                      for cid, name, out in calls]
        more: dict[str, Any] = {"toolCalls": tool_calls} if tool_calls else {}
        self._msg("gemini", content=text, model=self.model, thoughts=[{"subject": "Plan", "description": "think"}],
                  tokens={"input": prompt, "output": output, "cached": cached, "thoughts": thoughts, "tool": 0,
                          "total": prompt + output + thoughts}, **more)
        return self

    def doc(self) -> dict[str, Any]:
        return {"sessionId": "gs-1", "projectHash": "ab" * 32, "startTime": "2026-04-14T14:00:00.000Z",
                "lastUpdated": "2026-04-14T15:00:00.000Z", "messages": self.messages, "kind": "main"}

    def jsonl(self, *extra: dict[str, Any]) -> str:
        head = {k: v for k, v in self.doc().items() if k != "messages"}
        return "\n".join(json.dumps(x) for x in [head, *self.messages, *extra]) + "\n"


class PiLog:
    def __init__(self, provider: str = "openai-codex", model: str = "gpt-5.5") -> None:
        self.provider, self.model = provider, model
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "pi-1",
                                             "timestamp": "2026-05-20T10:00:00.000Z", "cwd": "/w"}]
        self.parent: str | None = None
        self.entry("model_change", provider=provider, modelId=model)
        self.entry("thinking_level_change", thinkingLevel="medium")

    def entry(self, kind: str, *, parent: str | None = "", **more: Any) -> str:
        n = len(self.lines)
        eid = f"e{n:03d}"
        self.lines.append({"type": kind, "id": eid, "parentId": self.parent if parent == "" else parent,
                           "timestamp": f"2026-05-20T10:{n // 60:02d}:{n % 60:02d}.000Z", **more})
        self.parent = eid
        return eid

    def user(self, text: str, **kw: Any) -> str:
        return self.entry("message", message={"role": "user", "content": [{"type": "text", "text": text}]}, **kw)

    def assistant(self, text: str, *, total: int, call: str | None = None, stop: str = "toolUse", **kw: Any) -> str:
        content: list[dict[str, Any]] = [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": text}]
        if call:
            content.append({"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": "ls"}})
        usage = {"input": 100, "output": 50, "cacheRead": total - 150, "cacheWrite": 0, "totalTokens": total}
        return self.entry("message", message={"role": "assistant", "content": content, "provider": self.provider,
                                              "model": self.model, "usage": usage, "stopReason": stop}, **kw)

    def result(self, call: str, text: str) -> str:
        return self.entry("message", message={"role": "toolResult", "toolCallId": call, "toolName": "bash",
                                              "content": [{"type": "text", "text": text}], "isError": False})

    def compaction(self, first_kept: str, *, before: int, summary: str = "## Goal\nship it") -> str:
        return self.entry("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=before)

    def text(self) -> str:
        return "\n".join(json.dumps(x) for x in self.lines) + "\n"
