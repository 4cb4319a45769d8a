"""One small file per history format, as bytes an upload would carry (fixtures plus built ones)."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from workbench.history.samples.generate import generate_session
from workbench.history.writers import write_canonical_jsonl, write_uimessage_json

FIXTURES = Path(__file__).parent / "fixtures" / "histories"


def stagewise_store_bytes(chats: int = 1) -> bytes:
    """A minimal stagewise ``instances.sqlite`` (agentInstances + agentMessages with superjson cells)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "instances.sqlite"
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE agentInstances (id TEXT, title TEXT, created_at INTEGER)")
            con.execute("CREATE TABLE agentMessages (agent_instance_id TEXT, seq INTEGER, message_id TEXT, "
                        "role TEXT, parts TEXT, metadata TEXT)")
            for c in range(chats):
                con.execute("INSERT INTO agentInstances VALUES (?, ?, ?)", (f"chat{c}", f"Chat {c}", c))
                for seq, role in enumerate(("user", "assistant")):
                    parts = json.dumps({"json": [{"type": "text", "text": f"{role} says hello in chat {c}"}]})
                    con.execute("INSERT INTO agentMessages VALUES (?, ?, ?, ?, ?, ?)",
                                (f"chat{c}", seq, f"m{c}{seq}", role, parts, json.dumps({"json": {}})))
        con.close()
        return path.read_bytes()


def format_samples() -> dict[str, tuple[str, bytes]]:
    """Format name → (file name, bytes) for every format the readers detect."""
    small = generate_session(7, turns=4, id="small")
    openai_lines = "\n".join(json.dumps(m) for m in (
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug in app.py"},
        {"role": "assistant", "content": "Done: the bug was an off-by-one."},
    ))
    out = {
        "canonical": ("small.jsonl", write_canonical_jsonl(small).encode()),
        "stagewise": ("small_uimessages.json", write_uimessage_json(small).encode()),
        "openai_jsonl": ("chat.jsonl", openai_lines.encode()),
        "stagewise_sqlite": ("instances.sqlite", stagewise_store_bytes()),
    }
    named = {"openai": "openai_chat.json", "anthropic": "anthropic_messages.json",
             "claude_code": "claude_code_session.jsonl", "codex": "codex_rollout.jsonl",
             "stagewise_superjson": "stagewise_history_superjson.json"}
    for fmt, name in named.items():
        out[fmt] = (name, (FIXTURES / name).read_bytes())
    return out
