"""What the Claude Code and Codex readers share: the typed list of logged calls, the log attached to the
history, and one warning per record type a reader does not know. No I/O."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from workbench.history.model import History, Message
from workbench.history.readers.jsontext import Record, type_name
from workbench.history.session_log import CallUsage, LoggedCall, SessionLog
from workbench.history.warnings import LoadWarning, shown


def record_type(obj: dict[str, Any]) -> str:
    """A record's ``type`` as text; any other JSON value there (an object, an array, null) is named by its JSON type
    in angle brackets, an unknown type like any other (an object or array could not even be counted by)."""
    kind = obj.get("type")
    return kind if isinstance(kind, str) else f"<{type_name(kind)}>"


def unknown_type_warnings(first_line: dict[str, Record], counts: Counter[str], *, source: str,
                          log: str) -> list[LoadWarning]:
    """One warning per unknown record type: where it first appears and how many lines had it."""
    out = []
    for kind, record in first_line.items():
        n = counts[kind]
        more = f" (and {n - 1:,} more lines of that type)" if n > 1 else ""
        out.append(LoadWarning(source=source, line=record[0], where=record[1], field="type",
                               message=f"not a {log} record type ({_type_shown(kind)}): line skipped{more}"))
    return out


def _type_shown(kind: str) -> str:
    return kind if kind.startswith("<") and kind.endswith(">") else shown(kind, 40)


def logged_calls(messages: tuple[Message, ...]) -> tuple[LoggedCall, ...]:
    """One LoggedCall per assistant message that carries billed usage, in order."""
    out = []
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        usage = m.usage
        if usage is None:
            continue
        meta = m.metadata  # a dict: the usage came from it
        assert meta is not None
        total, model = meta.get("usageTotal"), meta.get("model")
        out.append(LoggedCall(index=i, source_line=m.source_line, usage=usage,
                              model=model if isinstance(model, str) else None,
                              cumulative=CallUsage.from_logged(total) if isinstance(total, dict) else None))
    return tuple(out)


def with_log(history: History, log: SessionLog) -> History:
    return dataclasses.replace(history, log=log)
