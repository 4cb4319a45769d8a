"""A local OpenAI-compatible chat server for briefer tests: real HTTP, deterministic answers, no network.

litellm is pointed at it with ``api_base=server.api_base`` and models such as ``openai/fake-good``.
The behaviour of a model is chosen by its name (the part after ``fake-``) or set per model through
``POST /control`` / :meth:`FakeProvider.set_behaviour`:

    good   a sectioned briefing built from the request (headings + every link found in the prompt)
    slow   sleeps ``slow_s`` seconds before answering (longer than the client's timeout)
    fail   answers HTTP 500
    short  answers "ok" (under stagewise's 30-char minimum)
    leak   a good briefing wrapped in <previous-chat-history> tags
    trickle  a good answer sent one byte of padding every 0.1 s for ``slow_s`` seconds first: the
             connection never goes quiet long enough for a read timeout, so the call stays pending
    echo   answers HTTP 401 quoting the request's Authorization header (as careless providers do)
    parrot a good briefing (HTTP 200) that quotes the request's Authorization header in its text

Every request is counted per model (``GET /stats`` or :attr:`FakeProvider.counts`); every request whatever its path
is kept in :attr:`FakeProvider.wire` (method, path, headers), so a test can tell what reached the server at all.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BEHAVIOURS = ("good", "slow", "fail", "short", "leak", "trickle", "echo", "parrot")
_LINK_RE = re.compile(r"\[[^\]\n]*\]\([^)\s]+\)")


def behaviour_of(model: str) -> str:
    """``fake-slow`` → slow; a name without a known behaviour is good."""
    name = model.rsplit("/", 1)[-1]
    for b in BEHAVIOURS:
        if name == f"fake-{b}" or name.startswith(f"fake-{b}-"):
            return b
    return "good"


def briefing_for(messages: list[dict[str, Any]]) -> str:
    """A deterministic briefing derived from the prompt: counts, then every link, then a status line."""
    user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    if not isinstance(user, str):
        user = json.dumps(user)
    links = list(dict.fromkeys(_LINK_RE.findall(user)))
    turns = user.count("<user>")
    steps = user.count("<assistant>")
    chained = "<previous-chat-history>" in user
    lines = [
        "## Conversation so far",
        "",
        f"You and the user exchanged {turns} user turns and {steps} assistant turns"
        + (", continuing the previous briefing." if chained else "."),
        "",
        "## Files and links",
        "",
        " ".join(links) if links else "No files were touched.",
        "",
        "## Current status",
        "",
        f"The transcript was {len(user):,} characters long; the work continues from here.",
    ]
    return "\n".join(lines)


class FakeProvider:
    """The server plus its per-model counters and behaviours; use as a context manager."""

    def __init__(self, *, slow_s: float = 1.5) -> None:
        self.slow_s = slow_s
        self.counts: Counter[str] = Counter()
        self.behaviours: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []
        self.wire: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-provider", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def set_behaviour(self, model: str, behaviour: str) -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {', '.join(BEHAVIOURS)}, got {behaviour!r}")
        with self._lock:
            self.behaviours[model.rsplit("/", 1)[-1]] = behaviour

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self.behaviours.clear()
            self.requests.clear()
            self.wire.clear()

    @property
    def total_requests(self) -> int:
        return sum(self.counts.values())

    def _seen(self, method: str, path: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.wire.append({"method": method, "path": path, "headers": headers})

    def _record(self, model: str, body: dict[str, Any], headers: dict[str, str]) -> str:
        with self._lock:
            self.counts[model] += 1
            self.requests.append({"model": model, "body": body, "headers": headers})
            return self.behaviours.get(model) or behaviour_of(model)


def _completion(model: str, content: str, prompt_chars: int) -> dict[str, Any]:
    prompt_tokens = max(1, prompt_chars // 4)
    completion_tokens = max(1, len(content) // 4)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _handler_for(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass  # keep test output clean (and never print request headers)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _trickle(self, payload: dict[str, Any], seconds: float) -> None:
            pad = int(seconds / 0.1)
            data = json.dumps(payload).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(pad + len(data)))
                self.end_headers()
                for _ in range(pad):  # JSON allows leading whitespace
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                value = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return {}
            return value if isinstance(value, dict) else {}

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            provider._seen("GET", self.path, {k.lower(): v for k, v in self.headers.items()})
            if self.path.rstrip("/") in ("/stats", "/v1/stats"):
                self._send(200, {"counts": dict(provider.counts), "total": provider.total_requests})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            provider._seen("POST", self.path, {k.lower(): v for k, v in self.headers.items()})
            path = self.path.split("?", 1)[0].rstrip("/")
            body = self._body()
            if path in ("/control", "/v1/control"):
                try:
                    provider.set_behaviour(str(body.get("model", "")), str(body.get("behaviour", "")))
                except ValueError as exc:
                    self._send(400, {"error": {"message": str(exc)}})
                    return
                self._send(200, {"ok": True})
                return
            if path not in ("/chat/completions", "/v1/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            model = str(body.get("model", ""))
            messages = body.get("messages") or []
            behaviour = provider._record(model, body, {k.lower(): v for k, v in self.headers.items()})
            prompt_chars = sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, dict))
            if behaviour == "fail":
                self._send(500, {"error": {"message": "fake provider: internal error", "type": "server_error"}})
                return
            if behaviour == "echo":
                auth = self.headers.get("Authorization", "")
                self._send(401, {"error": {"message": f"invalid credentials: {auth}", "type": "auth_error"}})
                return
            if behaviour == "trickle":
                self._trickle(_completion(model, briefing_for(messages), prompt_chars), provider.slow_s)
                return
            if behaviour == "slow":
                time.sleep(provider.slow_s)
            if behaviour == "short":
                content = "ok"
            else:
                content = briefing_for(messages)
                if behaviour == "leak":
                    content = f"<previous-chat-history>\n{content}\n</previous-chat-history>"
                elif behaviour == "parrot":
                    content += f"\n\nFor the record, you called me with {self.headers.get('Authorization', '')}."
            self._send(200, _completion(model, content, prompt_chars))

    return Handler
