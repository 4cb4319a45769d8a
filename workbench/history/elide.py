"""Tool-output elision: the stub a message becomes when its old tool outputs are cleared.

Used by staged compaction, OpenCode-style pruning and importance-based policies. The stub keeps the
call (name and input) so the agent still knows what it did, and drops only the output, the way
OpenCode renders "[Old tool result content cleared]" and Hermes "[Old tool output cleared ...]".
"""

from __future__ import annotations

from workbench.history.model import Message, Part

STUB_TEXT = "[Old tool output cleared to save context space]"


def _stub_part(part: Part) -> Part:
    data = part.data
    if not isinstance(data, dict):
        return part
    kind = part.kind
    if kind == "tool-result":
        return Part(data={**data, "output": STUB_TEXT})
    if kind == "tool" and "output" in data:
        return Part(data={**data, "output": STUB_TEXT})
    return part


def has_tool_output(msg: Message) -> bool:
    """Whether eliding this message can free anything."""
    for part in msg.parts or ():
        if part.kind == "tool-result" or (part.kind == "tool" and isinstance(part.data, dict) and "output" in part.data):
            return True
    return False


def stub_message(msg: Message) -> Message:
    """The message with every tool output replaced by a one-line stub."""
    if not has_tool_output(msg):
        return msg
    parts = tuple(_stub_part(p) for p in msg.parts or ())
    return Message(id=msg.id, role=msg.role, parts=parts, metadata=msg.metadata, extra=msg.extra)
