"""Small scripted histories for table-like tests: message sizes in, compaction decisions out."""

from __future__ import annotations

from workbench.history.model import History, Message, text_part, tool_call_part, tool_result_part


def uniform_history(count: int, chars: int = 4000, *, roles: tuple[str, ...] = ("user", "assistant")) -> History:
    """``count`` text messages of ``chars`` ASCII chars each: each estimates ceil((chars + 400) / 4) tokens."""
    msgs = tuple(
        Message(id=f"m{i:04d}", role=roles[i % len(roles)], parts=(text_part("a" * chars),)) for i in range(count)
    )
    return History(id=f"uniform-{count}x{chars}", messages=msgs)


def sized_history(sizes: list[int], *, role_cycle: tuple[str, ...] = ("user", "assistant")) -> History:
    """One text message per size (chars), roles cycling."""
    msgs = tuple(
        Message(id=f"m{i:04d}", role=role_cycle[i % len(role_cycle)], parts=(text_part("x" * s),))
        for i, s in enumerate(sizes)
    )
    return History(id="sized", messages=msgs)


def tool_history(turns: int, *, output_chars: int = 8000, text_chars: int = 400) -> History:
    """user asks, then per turn: assistant calls a read tool, a tool message returns ``output_chars``."""
    msgs: list[Message] = [Message(id="u0", role="user", parts=(text_part("Please fix the bug in src/app.py"),))]
    for t in range(turns):
        call_id = f"call{t}"
        msgs.append(
            Message(
                id=f"a{t}",
                role="assistant",
                parts=(text_part("b" * text_chars), tool_call_part("read", call_id, {"path": f"src/f{t}.py"},
                                                                   state="output-available")),
            )
        )
        msgs.append(Message(id=f"t{t}", role="tool", parts=(tool_result_part("read", call_id, "c" * output_chars),)))
    return History(id=f"tools-{turns}", messages=tuple(msgs))
