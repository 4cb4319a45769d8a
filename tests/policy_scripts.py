"""Scripted histories for the policy tests: sizes chosen so every token count is a round number.

With ``overhead_chars_per_message=0`` and 4 chars per token, a text message of ``n`` chars estimates
``n / 4`` tokens, so the tables in the tests can be checked by hand.
"""

from __future__ import annotations

from workbench.history.model import History, Message, text_part, tool_call_part, tool_result_part
from workbench.knobs import Knobs


def plain(**changes: object) -> Knobs:
    """Knobs whose estimator is exactly chars / 4 (no per-message overhead), checked after every message."""
    base = {"overhead_chars_per_message": 0, "check_point": "message"}
    base.update(changes)
    return Knobs(**base)  # type: ignore[arg-type]


def chat(
    roles: str, chars: int = 1_000, *, sizes: dict[int, int] | None = None, texts: dict[int, str] | None = None
) -> History:
    """One text message per letter of ``roles`` (s system, u user, a assistant), ``chars`` chars each."""
    names = {"s": "system", "u": "user", "a": "assistant"}
    sizes, texts = sizes or {}, texts or {}
    msgs = []
    for i, r in enumerate(roles):
        n = sizes.get(i, chars)
        text = texts.get(i, "")
        body = (text + "x" * max(0, n - len(text)))[: max(n, len(text))]
        msgs.append(Message(id=f"m{i:03d}", role=names[r], parts=(text_part(body),)))
    return History(id=f"chat-{len(roles)}", messages=tuple(msgs))


def agent(
    steps: int,
    *,
    output_chars: int = 7_928,
    outputs: dict[int, int] | None = None,
    system: bool = False,
    users_before: tuple[int, ...] = (),
) -> History:
    """[system] user task, then per step an assistant tool call and a tool result message.

    Estimates (plain knobs): system 500 tokens, user 250, assistant 125, tool result 2,000 of which 1,970
    are freed when its output becomes a stub (30 tokens).

    ``outputs`` overrides the output size of some steps; a user message is inserted before each step in
    ``users_before`` (a new request).
    """
    outputs = outputs or {}
    msgs: list[Message] = []
    if system:
        msgs.append(Message(id="sys", role="system", parts=(text_part("s" * 2_000),)))
    msgs.append(Message(id="u0", role="user", parts=(text_part("Fix the bug in src/app.py" + "." * 975),)))
    for t in range(steps):
        if t in users_before:
            msgs.append(Message(id=f"u{t}", role="user", parts=(text_part("Now do the next task" + "." * 980),)))
        call = f"c{t:03d}"
        msgs.append(
            Message(
                id=f"a{t}",
                role="assistant",
                parts=(
                    text_part("b" * 400),
                    tool_call_part("read", call, {"path": f"src/f{t:03d}.py"}, state="output-available"),
                ),
            )
        )
        msgs.append(
            Message(
                id=f"t{t}", role="tool", parts=(tool_result_part("read", call, "c" * outputs.get(t, output_chars)),)
            )
        )
    return History(id=f"agent-{steps}", messages=tuple(msgs))
