"""A Claude Code log (and a canonical upload) whose every free-text field carries Markdown and HTML that would make a
browser fetch, link or style: the id, the agent's version and model, user and assistant text, tool and file names,
the real summary. ``hostile(host)`` is the payload; the tests check it is shown as text and nothing is fetched."""

from __future__ import annotations

import dataclasses

from agent_log_builders import ClaudeLog, text_block, tool_use


def hostile(host: str) -> str:
    """An image, an <img> tag, a bare link, an autolink, a www link, an e-mail address, an emoji and an icon."""
    return (f"![t]({host}/md.png) <img src={host}/tag.png> {host}/bare <{host}/auto> www.example.com "
            "mail@example.com :smile: :material/home:")


def hostile_name() -> str:
    """The same for a file name (no slashes): relative URLs, fetched from the app's own server if rendered."""
    return "![t](md-name.png) <img src=tag-name.png> www.example.com :smile:"


def hostile_claude_log(host: str) -> bytes:
    """Two tool steps and one logged compaction (the shape of tests/test_reality.py's ``claude_crossing``)."""
    p = hostile(host)
    log = ClaudeLog(version=f"2.1.25 {p}", model=f"claude-opus-4-5 {p}")
    log.user(f"Refactor the parser. {p}")
    log.assistant([text_block(f"Reading. {p}"), tool_use("t1", name=f"Read {p}", file_path=f"src/{p}.py")],
                  input_total=160_000, output=100)
    log.tool_result("t1", f"{p} " + "x" * 20_000)
    log.assistant([tool_use("t2", name="Read", file_path=f"/repo/{p}.py")], input_total=165_200, output=100)
    log.tool_result("t2", "y" * 10_000)
    log.compact("auto", 167_700, f"This session is being continued. {p}\n\n## Files\n\n- {p}\n\n{p}")
    return log.user(f"go on {p}").text().encode()


def hostile_upload(host: str) -> bytes:
    """The same log as canonical JSONL whose header id is the payload too (the id a history upload names)."""
    from workbench.history.readers.parse import parse_history
    from workbench.history.writers import write_canonical_jsonl

    history = parse_history(hostile_claude_log(host).decode(), source="session.jsonl")
    return write_canonical_jsonl(dataclasses.replace(history, id=f"session {hostile(host)}")).encode()
