"""Assemble a History from a chat log that keeps tool calls and tool results in separate messages.

Readers of OpenAI, Anthropic, Claude Code and Codex logs all share one rule: a tool call's state
depends on a result that arrives later, so calls stay open until ``build()``, which fixes each state
(``output-available``, ``output-error`` or ``input-available``). The output itself lives only in the
tool message, never copied into the call. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.history.model import History, Message, Part, tool_call_part, tool_result_part
from workbench.history.readers.jsontext import history_id, loads_line, source_path


@dataclass
class _Call:
    name: str
    call_id: str
    input: Any
    state: str = "input-available"


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as a value: parsed JSON text, or the raw string when it is not valid JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return loads_line(raw)  # json's value, by orjson where that is exact
    except ValueError:
        return raw


class HistoryBuilder:
    """Collects messages in order; ids come from the source when it has them, else ``m0007``."""

    def __init__(self) -> None:
        self._rows: list[tuple[str, str, list[Part | _Call], dict[str, Any] | None]] = []
        self._ids: set[str] = set()
        self._suffix: dict[str, int] = {}
        self._names: dict[str, str] = {}
        self._open: dict[str, list[_Call]] = {}
        self.calls = 0

    def __len__(self) -> int:
        return len(self._rows)

    def _new_id(self, wanted: Any) -> str:
        base = wanted if isinstance(wanted, str) and wanted else f"m{len(self._rows):04d}"
        candidate = base
        if candidate in self._ids:  # ids must stay unique: stagewise finds a briefing's message by id
            k = self._suffix.get(base, 1)
            while candidate in self._ids:
                k += 1
                candidate = f"{base}-{k}"
            self._suffix[base] = k
        self._ids.add(candidate)
        return candidate

    def add(self, role: str, parts: Sequence[Part | _Call], *, id: Any = None,
            metadata: dict[str, Any] | None = None) -> int:
        """Append a message and return its index."""
        self._rows.append((self._new_id(id), role, list(parts), metadata))
        return len(self._rows) - 1

    def extend(self, index: int, parts: Sequence[Part | _Call], *, metadata: dict[str, Any] | None = None) -> None:
        """Add parts (and metadata keys) to an earlier message: one API response logged over several lines."""
        row = self._rows[index]
        row[2].extend(parts)
        if metadata:
            merged = dict(row[3] or {})
            merged.update(metadata)
            self._rows[index] = (row[0], row[1], row[2], merged)

    def metadata(self, index: int) -> dict[str, Any] | None:
        return self._rows[index][3]

    def role(self, index: int) -> str:
        return self._rows[index][1]

    def call(self, name: str, call_id: str, input: Any) -> _Call:
        """A tool call placeholder to put in an assistant message's parts."""
        call = _Call(name=name, call_id=call_id, input=input)
        self._names[call_id] = name
        self._open.setdefault(call_id, []).append(call)
        self.calls += 1
        return call

    def result(
        self,
        name: str | None,
        call_id: str | None,
        output: Any,
        *,
        is_error: bool = False,
        id: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Append a ``tool`` message and close the matching open call (the latest one with that id)."""
        if call_id is not None:
            if name is None:
                name = self._names.get(call_id)
            waiting = self._open.get(call_id)
            if waiting:
                waiting.pop().state = "output-error" if is_error else "output-available"
        part = tool_result_part(name, call_id, output, is_error=is_error)
        return self.add("tool", [part], id=id, metadata=metadata)

    def messages(self) -> tuple[Message, ...]:
        out = []
        for msg_id, role, parts, metadata in self._rows:
            frozen = tuple([
                tool_call_part(p.name, p.call_id, p.input, state=p.state) if isinstance(p, _Call) else p for p in parts
            ])
            out.append(Message(id=msg_id, role=role, parts=frozen, metadata=metadata))
        return tuple(out)

    def build(self, *, source: str, source_format: str, meta: dict[str, Any]) -> History:
        """The History, named after its source file."""
        return History(
            id=history_id(source),
            messages=self.messages(),
            source_format=source_format,
            source_path=source_path(source),
            meta=meta,
        )
