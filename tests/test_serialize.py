"""The compact transcript: tool markers, user annotations, and the walk that stops at a briefing."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.history.model import Message, Part
from workbench.stagewise.serialize import (
    escape_xml,
    previous_briefing_chars,
    serialize_compact_history,
    serialize_message,
    serialize_part,
    serialized_from_index,
    wrap_previous_briefing,
)


def tool(name: str, state: str = "output-available", input: Any = None, **rest: Any) -> dict[str, Any]:
    part = {"type": f"tool-{name}", "toolCallId": "t1", "state": state, "input": {} if input is None else input}
    part.update(rest)
    return part


def msg(role: str, *parts: Any, metadata: dict[str, Any] | None = None, id: str = "m") -> Message:
    return Message(id=id, role=role, parts=tuple(Part(data=p) for p in parts), metadata=metadata)


def user(text: str, **kw: Any) -> Message:
    return msg("user", {"type": "text", "text": text}, **kw)


MARKERS = [
    ("read", tool("read", input={"path": "a<b>.ts"}), "[read: a&lt;b&gt;.ts]", None),
    (
        "read-error-first-line",
        tool("read", "output-error", {"path": "a"}, errorText="no\nmore"),
        "[read: a ✗ no]",
        None,
    ),
    ("error-empty-text", tool("read", "output-error", {"path": "a"}, errorText=""), "[read: a ✗ unknown error]", None),
    ("error-keeps-cr", tool("glob", "output-error", {"pattern": "*"}, errorText="x\r\ny"), "[glob: * ✗ x\r]", None),
    ("denied", tool("delete", "output-denied", {"path": "d"}), "[deleted: d ✗ denied]", None),
    ("multiedit", tool("multiEdit", input={"path": "p", "edits": [{}, {}]}), "[edited: p (2 edits)]", None),
    ("multiedit-no-array", tool("multiEdit", input={"path": "p", "edits": 3}), "[edited: p (? edits)]", None),
    (
        "write-created",
        tool("write", input={"path": "w"}, output={"message": "Successfully created file: w"}),
        "[created: w]",
        None,
    ),
    (
        "write-updated",
        tool("write", input={"path": "created/w"}, output={"message": "updated"}),
        "[wrote: created/w]",
        None,
    ),
    (
        "write-output-ignored-unless-available",
        tool("write", "input-available", {"path": "w"}, output={"message": "created"}),
        "[wrote: w]",
        None,
    ),
    ("copy", tool("copy", input={"input_path": "a", "output_path": "b"}), "[copied: a → b]", None),
    ("move", tool("copy", input={"input_path": "a", "output_path": "b", "move": True}), "[moved: a → b]", None),
    (
        "grep",
        tool("grepSearch", input={"query": 'x"y', "include_file_pattern": "*.ts"}),
        '[searched: "x&quot;y" in *.ts]',
        None,
    ),
    (
        "grep-error-drops-pattern",
        tool("grepSearch", "output-error", {"query": "q", "include_file_pattern": "*.ts"}, errorText="e"),
        '[searched: "q" ✗ e]',
        None,
    ),
    ("empty-object-input-is-truthy", tool("glob", input={}), "[glob: ]", None),
    ("null-input-dropped", tool("read", input=None) | {"input": None}, None, None),
    ("no-input-key-dropped", {"type": "tool-read", "state": "input-available"}, None, None),
    ("unknown-tool", tool("ls", input={"path": "."}), "[tool-ls]", "[tool-ls]"),
    ("unknown-tool-error", tool("ls", "output-error", {"path": "."}, errorText="boom"), "[tool-ls ✗ boom]", None),
    ("dynamic-tool-dropped", {"type": "dynamic-tool", "toolName": "x", "input": {"a": 1}}, None, None),
    ("reasoning-dropped", {"type": "reasoning", "text": "hmm"}, None, None),
    ("text-escaped", {"type": "text", "text": "a & 'b'"}, "a &amp; &apos;b&apos;", None),
    ("null-part", None, "[unknown: serialization-error]", None),
    ("missing-type", {"input": {"path": "x"}}, "[unknown: serialization-error]", None),
    (
        "shell-exit",
        tool("executeShellCommand", input={"command": "make"}, output={"exit_code": 2}),
        "[shell: make → exit 2]",
        "[tool-executeShellCommand]",
    ),
    (
        "shell-ok",
        tool("executeShellCommand", input={"explanation": "build", "command": "make"}, output={"exit_code": 0}),
        "[shell: build → ✓]",
        "[tool-executeShellCommand]",
    ),
    (
        "shell-timeout",
        tool("executeShellCommand", input={"command": "x"}, output={"exit_code": 0, "timed_out": True}),
        "[shell: x → timed out]",
        "[tool-executeShellCommand]",
    ),
    (
        "shell-null-exit",
        tool("executeShellCommand", input={"command": "x"}, output={"exit_code": None}),
        "[shell: x]",
        "[tool-executeShellCommand]",
    ),
    (
        "session",
        tool("createShellSession", input={"cwd": "w1"}, output={"session_id": "s1"}),
        "[shell: new session s1 in w1]",
        "[tool-createShellSession]",
    ),
    (
        "session-error",
        tool("createShellSession", "output-error", {"cwd": "w1"}, errorText="x"),
        "[shell: new session ? in w1 ✗ x]",
        "[tool-createShellSession ✗ x]",
    ),
    (
        "lint-clean",
        tool("getLintingDiagnostics", input={"paths": ["a", "b"]}, output={"summary": {"totalIssues": 0}}),
        "[lint: a, b → clean]",
        "[tool-getLintingDiagnostics]",
    ),
    (
        "lint-counts",
        tool(
            "getLintingDiagnostics",
            input={"paths": "a"},
            output={"summary": {"totalIssues": 4, "errors": 1, "warnings": 2}},
        ),
        "[lint: a → 1 errors, 2 warnings]",
        "[tool-getLintingDiagnostics]",
    ),
    (
        "docs",
        tool("searchInLibraryDocs", input={"libraryId": "/r", "topic": "<h>"}),
        "[docs-read: /r → &lt;h&gt;]",
        "[tool-searchInLibraryDocs]",
    ),
    (
        "ask-completed",
        tool(
            "askUserQuestions",
            input={"title": "T", "steps": [{"fields": [{"questionId": "c", "label": "Color"}]}]},
            output={"completed": True, "cancelled": False, "answers": {"c": ["red", "blue"], "d": False}},
        ),
        "[asked user: T → Color: red,blue; d: false]",
        "[tool-askUserQuestions]",
    ),
    (
        "ask-cancelled",
        tool("askUserQuestions", input={"title": "T"}, output={"completed": False, "cancelled": True}),
        "[asked user: T → cancelled]",
        "[tool-askUserQuestions]",
    ),
    (
        "ask-no-output",
        tool("askUserQuestions", "input-available", {"steps": []}),
        "[asked user: form]",
        "[tool-askUserQuestions]",
    ),
    (
        "watcher",
        tool("createWatcherSession", input={"title": "dev"}, output={"session_id": "w1"}),
        "[watcher created: dev → session w1]",
        "[tool-createWatcherSession]",
    ),
    (
        "watcher-failed",
        tool("createWatcherSession", "output-denied", {"title": "dev"}),
        "[watcher creation failed: dev ✗ denied]",
        "[tool-createWatcherSession ✗ denied]",
    ),
    ("tostring-quirk", tool("toString"), "[object Undefined]", "[tool-toString]"),
    ("prototype-name-falls-back", tool("valueOf"), "[tool-valueOf]", "[tool-valueOf]"),
]


@pytest.mark.parametrize(
    ("part", "host_marker", "no_host_marker"), [m[1:] for m in MARKERS], ids=[m[0] for m in MARKERS]
)
def test_markers(part: Any, host_marker: str | None, no_host_marker: str | None) -> None:
    """Each part renders as stagewise's marker, with and without the browser host registry."""
    assert serialize_part(part, host=True) == host_marker
    assert serialize_part(part, host=False) == (host_marker if no_host_marker is None else no_host_marker)


def test_shell_label_cut_at_80_units_before_escaping() -> None:
    """The explanation is cut to 80 UTF-16 units first, then escaped, so entities may pass 80."""
    part = tool("executeShellCommand", input={"explanation": "&" * 100}, output={})
    assert serialize_part(part) == "[shell: " + "&amp;" * 80 + "]"


def test_escape_order() -> None:
    """& is replaced first, so entities already in the text are escaped again."""
    assert escape_xml("&amp; <\"'>") == "&amp;amp; &lt;&quot;&apos;&gt;"
    assert escape_xml(None) == ""
    assert escape_xml([1, None, True]) == "1,,true"


def test_user_annotations_come_first_and_are_not_escaped() -> None:
    """Attachments, then mentions, then text; labels keep their raw < and &."""
    m = msg(
        "user",
        {"type": "text", "text": "hi <x>"},
        {"type": "tool-read", "input": {"path": "ignored"}},
        metadata={
            "attachments": [None, {"path": "a/b/c.png"}, {"originalFileName": "<f>.pdf"}, {}],
            "mentions": [{"providerType": "tab", "title": "A & B"}, {"providerType": "symbol"}, {}],
        },
    )
    assert serialize_message(m) == (
        "<user>[attached: c.png, <f>.pdf, file]\n[mentioned: A & B, symbol, unknown]\nhi &lt;x&gt;</user>"
    )


@pytest.mark.parametrize(
    ("message", "chunk"),
    [
        (None, None),
        (Message(id="s", role="system", parts=(Part(data={"type": "text", "text": "x"}),)), None),
        (Message(id="t", role="tool", parts=(Part(data={"type": "tool-result", "output": "x"}),)), None),
        (Message(id="a", role="assistant", parts=None), "<assistant></assistant>"),
        (Message(id="u", role="user", parts=None), "<user></user>"),
        (
            msg("assistant", {"type": "step-start"}, {"type": "text"}, {"type": "text", "text": "x"}),
            "<assistant>\nx</assistant>",
        ),
    ],
    ids=["null", "system", "tool-role", "assistant-no-parts", "user-no-parts", "assistant-text-without-text"],
)
def test_message_chunks(message: Message | None, chunk: str | None) -> None:
    """Only user and assistant messages contribute a chunk; a missing text is an empty line."""
    assert serialize_message(message) == chunk


def test_walk_stops_at_the_newest_truthy_briefing() -> None:
    """Older messages vanish behind the briefing; an empty '' briefing does not stop the walk."""
    history = [
        user("old"),
        user("first", metadata={"compressedHistory": "B1"}),
        None,
        user("second", metadata={"compressedHistory": "<B2 & raw>"}),
        user("third", metadata={"compressedHistory": ""}),
    ]
    assert serialize_compact_history(history) == (
        "<previous-chat-history><B2 & raw></previous-chat-history>\n<user>second</user>\n<user>third</user>"
    )
    assert serialized_from_index(history) == 3
    assert previous_briefing_chars(history) == len("<B2 & raw>")
    assert serialized_from_index(history[:1]) == 0 and previous_briefing_chars(history[:1]) == 0


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4, 5, 6])
def test_cached_chunks_compose_the_whole_transcript(cut: int) -> None:
    """Joining per-message chunks from the stop index, after the briefing block, gives the whole string."""
    history = [
        user("a"),
        msg("assistant", tool("read", input={"path": "p"})),
        None,
        user("b", metadata={"compressedHistory": "brief 😀"}),
        msg("system", {"type": "text", "text": "s"}),
        msg("assistant", {"type": "text", "text": "c"}),
    ][:cut]
    start = serialized_from_index(history)
    chunks = [c for m in history[start:] if (c := serialize_message(m)) is not None]
    stop = history[start] if history else None
    if stop is not None and stop.briefing:
        chunks.insert(0, wrap_previous_briefing(stop.briefing))
    assert "\n".join(chunks) == serialize_compact_history(history)
