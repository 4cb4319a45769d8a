"""msagent's offload log and summarization events, rebuilt from a Run (seed 001; spec/peers.md §2.1).

msagent appends the originals of every compaction to ``conversation_history/<thread_id>.md``: one
``## Offloaded at <ISO time>`` section per compaction holding a ``get_buffer_string`` dump (``Human:``,
``AI:``, ``Tool:`` lines), and records ``_summarization_event{cutoff_index, summary_message, file_path}``
plus a report (offloaded, kept, tokens before -> after, log path). Here all of it is a pure function of
the Run, the History, the thread id and the clock value passed in; writing (appending, never rewriting)
is the caller's choice, e.g. ``workbench simulate ... --offload-dir DIR``. Works for any policy's Run.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.history.model import History, Message
from workbench.history.words import counted
from workbench.replay import Compression, Run

PREFIXES = {"user": "Human", "assistant": "AI", "tool": "Tool", "system": "System"}


@dataclass(frozen=True, kw_only=True)
class SummarizationEvent:
    """msagent's ``_summarization_event``: where the kept messages start, the summary, the log's logical path."""

    cutoff_index: int  # first kept message, as an index into the whole history
    summary_message: str
    file_path: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class OffloadReport:
    """What msagent prints after a compaction."""

    chain_index: int
    check: int
    offloaded: int
    kept: int
    tokens_before: int
    tokens_after: int
    file_path: str

    @property
    def reduction(self) -> float:
        return 1 - self.tokens_after / self.tokens_before if self.tokens_before else 0.0

    def line(self) -> str:
        return (
            f"offloaded {counted(self.offloaded, 'message')}, kept {self.kept}; tokens {self.tokens_before:,} -> "
            f"{self.tokens_after:,} (-{self.reduction:.0%}); history saved to {self.file_path}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reduction": self.reduction}


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_SAFE_ID = 252  # a safe id is its own file name: <id>.md within the 255 bytes of a file name


def safe_thread_id(text: str) -> str:
    """A distinct file name for each thread id (msagent uses a UUID; ours default to the history id).

    An id that is already a portable file name (ASCII letters, digits, ``._-``, not starting or ending with ``.``
    or ``_``) is its own name, as it always was, so its earlier log is appended to. Any other id gets a readable
    slug, ``~`` and 16 hex digits of the sha256 of the exact id: ``a/b`` and ``a_b``, ``é`` and ``è`` no longer
    share a file, and no safe id can take a hashed name (it never holds ``~``).
    """
    if text and len(text) <= MAX_SAFE_ID and not _UNSAFE.search(text) and text.strip("._") == text:
        return text
    slug = _UNSAFE.sub("_", text).strip("._")[:60].strip("._") or "thread"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}~{digest}"


def log_path(thread_id: str) -> str:
    """The logical path msagent records: ``/conversation_history/<thread_id>.md``."""
    return f"/conversation_history/{safe_thread_id(thread_id)}.md"


def offloaded_indices(comp: Compression) -> list[int]:
    """Messages a landed compaction folded: [folded_from, boundary) less the pinned ones, which stayed."""
    pinned = set(comp.pinned)
    return [j for j in range(comp.folded_from, comp.boundary) if j not in pinned]


def _landed(run: Run) -> list[Compression]:
    return [c for c in run.compressions if c.status == "landed"]


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def buffer_lines(msg: Message) -> list[str]:
    """One message as LangChain's ``get_buffer_string`` writes it; tool calls as a JSON list after the text.

    An AI SDK message that carries tool outputs inline gets one ``Tool:`` line per output, where LangChain
    would have had separate ToolMessages.
    """
    prefix = PREFIXES.get(msg.role, msg.role.capitalize())
    calls: list[dict[str, Any]] = []
    outputs: list[str] = []
    for part in msg.parts or ():
        if part.kind == "tool":
            calls.append({"name": part.tool_name, "args": part.input, "id": part.tool_call_id})
            if isinstance(part.data, dict) and "output" in part.data:
                outputs.append(_value_text(part.output))
            elif part.error_text is not None:
                outputs.append(part.error_text)
        elif part.kind == "tool-result":
            outputs.append(_value_text(part.output))
    if msg.role == "tool":
        return [f"Tool: {msg.text or chr(10).join(outputs)}"]
    head = f"{prefix}: {msg.text}"
    if calls:
        head += json.dumps(calls, ensure_ascii=False, default=str)
    return [head] + [f"Tool: {out}" for out in outputs]


def offload_section(history: History, comp: Compression, when: datetime) -> str:
    """The section one compaction appends: heading, blank line, the buffer dump, blank line."""
    lines: list[str] = []
    for j in offloaded_indices(comp):
        lines.extend(buffer_lines(history.messages[j]))
    return f"## Offloaded at {when.isoformat(timespec='seconds')}\n\n" + "\n".join(lines) + "\n\n"


def offload_log(run: Run, history: History, *, now: datetime) -> str:
    """The text a replay appends to ``conversation_history/<thread_id>.md``: one section per landed compaction.

    ``history`` must be the one replayed (the Run keeps indices, not messages). Every section is stamped
    with ``now``: a replay has no wall clock of its own.
    """
    return "".join(offload_section(history, c, now) for c in _landed(run))


def summary_message(comp: Compression, file_path: str) -> str:
    """deepagents' wrapper around the summary plus msagent's stats line."""
    body = (
        comp.record.text
        if comp.record.text is not None
        else (f"[summary of {counted(comp.messages_folded, 'message')}, {comp.briefing_chars:,} chars; size-only briefer]")
    )
    after = comp.tokens_after if comp.tokens_after is not None else comp.tokens_before
    cut = 1 - after / comp.tokens_before if comp.tokens_before else 0.0
    return (
        "The conversation so far has been summarized to free context. "
        f"The full history was saved to {file_path}; read it if you need details the summary left out.\n\n"
        f"<summary>\n{body}\n</summary>\n\n"
        f"Offloaded {counted(len(offloaded_indices(comp)), 'message')}, kept {comp.kept}; "
        f"approximately {comp.tokens_before:,} -> {after:,} tokens (-{cut:.0%})."
    )


def summarization_events(run: Run, *, thread_id: str) -> list[SummarizationEvent]:
    """One ``_summarization_event`` per landed compaction, in order (the last one is the thread's state)."""
    path = log_path(thread_id)
    return [
        SummarizationEvent(cutoff_index=c.boundary, summary_message=summary_message(c, path), file_path=path)
        for c in _landed(run)
    ]


def offload_reports(run: Run, *, thread_id: str) -> list[OffloadReport]:
    """The report msagent prints after each compaction."""
    path = log_path(thread_id)
    return [
        OffloadReport(
            chain_index=c.chain_index,
            check=c.check_landed if c.check_landed is not None else c.check_started,
            offloaded=len(offloaded_indices(c)),
            kept=c.kept,
            tokens_before=c.tokens_before,
            tokens_after=c.tokens_after if c.tokens_after is not None else c.tokens_before,
            file_path=path,
        )
        for c in _landed(run)
    ]


@dataclass(frozen=True, kw_only=True)
class Offload:
    """Everything msagent records for one replay: the text to append, its path, the events and reports."""

    file_path: str  # logical: /conversation_history/<thread_id>.md
    text: str
    events: tuple[SummarizationEvent, ...]
    reports: tuple[OffloadReport, ...]


def build_offload(run: Run, history: History, *, thread_id: str, now: datetime) -> Offload:
    """The offload of a replay as one value: a pure function of the Run, the History, the thread id and ``now``."""
    return Offload(
        file_path=log_path(thread_id),
        text=offload_log(run, history, now=now),
        events=tuple(summarization_events(run, thread_id=thread_id)),
        reports=tuple(offload_reports(run, thread_id=thread_id)),
    )


def offload_file(directory: Path, thread_id: str) -> Path:
    """Where a caller appends the log under ``directory`` (msagent: ``<workdir>/.msagent``)."""
    return directory / "conversation_history" / f"{safe_thread_id(thread_id)}.md"
