"""Where an agent measures its context: the check points of a replay.

"message": after every message. "step": after an agent step, i.e. after an assistant message and the tool
results that follow it, and after the last message: where stagewise's handlePostStep runs, and where Codex
checks (before a turn, i.e. before the next user message is recorded, and after a model call that asked for a
tool, once its outputs are recorded: openai/codex@000c857e codex-rs/core/src/session/turn.rs).
"call": before every model call, i.e. after every user message and after the complete tool results of a step:
where Claude Code checks (its query loop, @anthropic-ai/claude-code 2.1.x cli.js). In a log the call that
follows may be replaced by the agent's compaction (its summary comes next instead), so the check is placed
by what precedes the call, not by the assistant message that would follow it. Pure; no I/O.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.history.model import History


def check_indices(history: History, check_point: str) -> np.ndarray:
    """Message indices after which the trigger is checked (ascending; always the last message)."""
    msgs = history.messages
    n = len(msgs)
    if check_point == "message" or n == 0:
        return np.arange(n, dtype=np.int64)
    roles = [m.role for m in msgs]
    if check_point == "call":
        # One comprehension, no call per message (every message of every replayed window is asked): a call follows
        # message i when an assistant message comes next; after every user message (several in a row: each one is
        # looked at); after a tool result when the step's results are complete; after an assistant message whose
        # tool results are missing from the log (the call came after them).
        out = [i for i, (role, nxt) in enumerate(zip(roles[:-1], roles[1:], strict=True))
               if nxt == "assistant" or role == "user" or (role == "tool" and nxt != "tool")
               or (role == "assistant" and _awaits_results(msgs[i]))]
        out.append(n - 1)
        return np.asarray(out, dtype=np.int64)
    out = [
        i
        for i in range(n)
        if i == n - 1 or (roles[i] in ("assistant", "tool") and roles[i + 1] in ("user", "assistant", "system"))
    ]
    return np.asarray(out, dtype=np.int64)


def _awaits_results(msg: Any) -> bool:
    """An assistant message with a tool call whose result never came (state input-available)."""
    return any(p.kind == "tool" and p.state == "input-available" for p in msg.parts or ())
