"""Claude Code's own hidden prefix, read from its published package: the system prompt and tool schemas it sends.

For each version, ``npm pack @anthropic-ai/claude-code@VERSION`` is unpacked into a temporary folder and its
``cli.js`` run once (``node cli.js -p hello --model MODEL``) against a local stand-in for the Messages API
(``ANTHROPIC_BASE_URL`` on 127.0.0.1, a dummy key, a fresh HOME with no settings, CLAUDE.md, MCP servers or skills,
in an empty git repository), which records each request and answers "ok". Nothing leaves the machine but the npm
download. The request with the most tools is the main loop's; its ``system`` text and ``tools`` JSON are counted in
o200k tokens (``counting.encodings.count_text_tokens``) and printed as the table
``analysis/real_logs/agent_prefix.py`` carries (``--code``). The prompt's text itself is Anthropic's and is neither
printed nor kept.

Needs ``npm`` and ``node`` on the path. ``-p`` (print mode) sends what the interactive loop sends, less what an
interactive session adds to its first user message (the user's CLAUDE.md, reminders), which is the user's part.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.counting.encodings import count_text_tokens  # noqa: E402

# the versions and models of ../shared/real_sessions_large and ../shared/real_sessions' Claude Code logs
DEFAULT = ("2.0.76", "2.1.1", "2.1.2", "2.1.5", "2.1.7", "2.1.12", "2.1.14", "2.1.17", "2.1.19", "2.1.20", "2.1.25",
           "2.1.29", "2.1.31", "2.1.32", "2.1.33", "2.1.36", "2.1.37", "2.1.38", "2.1.39", "2.1.42", "2.1.45")


def _model_for(version: str) -> str:
    """The model the logs of that version ran (Opus 4.6 from 2.1.32, Opus 4.5 before)."""
    parts = tuple(int(x) for x in version.split("."))
    return "claude-opus-4-6" if parts >= (2, 1, 32) else "claude-opus-4-5-20251101"


def _server(requests: list[dict[str, Any]]) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server name)
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            req = json.loads(body or b"{}")
            requests.append(req)
            message = {"id": "msg_1", "type": "message", "role": "assistant", "model": req.get("model"),
                       "content": [], "stop_reason": None, "stop_sequence": None,
                       "usage": {"input_tokens": 1, "output_tokens": 1}}
            if req.get("stream"):
                events = [("message_start", {"type": "message_start", "message": message}),
                          ("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}),
                          ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": "ok"}}),
                          ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                          ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                             "usage": {"output_tokens": 1}}),
                          ("message_stop", {"type": "message_stop"})]
                data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
                kind = "text/event-stream"
            else:
                data = json.dumps({**message, "content": [{"type": "text", "text": "ok"}],
                                   "stop_reason": "end_turn"}).encode()
                kind = "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def measure(version: str, model: str, work: Path) -> dict[str, Any]:
    """System and tool tokens of the main request ``version`` sends for ``model``."""
    pkg = work / f"pkg-{version}"
    if not (pkg / "package" / "cli.js").exists():
        pkg.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", f"@anthropic-ai/claude-code@{version}", "--silent"], cwd=pkg, check=True,
                       capture_output=True)
        tarball = next(pkg.glob("*.tgz"))
        subprocess.run(["tar", "xzf", tarball.name], cwd=pkg, check=True)
    requests: list[dict[str, Any]] = []
    server = _server(requests)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home, repo = work / f"home-{version}", work / "repo"
    home.mkdir(exist_ok=True)
    repo.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=False)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}", "ANTHROPIC_API_KEY": "sk-local-dummy",
           "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    try:
        subprocess.run(["node", str(pkg / "package" / "cli.js"), "-p", "hello", "--model", model], cwd=repo, env=env,
                       capture_output=True, timeout=300, check=False)
    finally:
        server.shutdown()
    main = max((r for r in requests if r.get("tools")), key=lambda r: len(json.dumps(r["tools"])), default=None)
    if main is None:
        return {"version": version, "model": model, "error": "no request with tools"}
    system = main.get("system")
    text = "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system or "")
    tools = json.dumps(main["tools"], ensure_ascii=False)
    return {"version": version, "model": model, "tools": len(main["tools"]),
            "system_tokens": count_text_tokens(text, "o200k_base"), "tools_tokens": count_text_tokens(tools, "o200k_base")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="*", default=list(DEFAULT))
    parser.add_argument("--code", action="store_true", help="print the rows as agent_prefix.py's table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(v, _model_for(v), Path(tmp)) for v in args.versions]
    for r in rows:
        if "error" in r:
            print(f"# {r['version']}: {r['error']}")
        elif args.code:
            print(f'    "{r["version"]}": ({r["system_tokens"]}, {r["tools_tokens"]}, {r["tools"]}),')
        else:
            print(f"{r['version']} {r['model']}: system {r['system_tokens']:,}, {r['tools']} tools "
                  f"{r['tools_tokens']:,}, together {r['system_tokens'] + r['tools_tokens']:,} o200k tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
