"""Text in any supported text format to a History: ``parse_history`` detects the format or is told it.

One reader per format (``canonical``, ``chat_formats``, ``claude_code``, ``codex``, ``opencode``,
``copilot_cli``, ``gemini_cli``, ``pi``): JSONL formats read
records (``FROM_RECORDS``), JSON formats a whole document (``FROM_DOCUMENT``). No I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers.canonical import canonical_from_records, stagewise_from_document
from workbench.history.readers.chat_formats import anthropic_from_document, openai_document_records, openai_from_records
from workbench.history.readers.claude_code import claude_code_from_records
from workbench.history.readers.codex import codex_from_records
from workbench.history.readers.copilot_cli import copilot_cli_from_records
from workbench.history.readers.detect import detect
from workbench.history.readers.gemini_cli import gemini_cli_from_records, parse_gemini_cli
from workbench.history.readers.jsontext import corrupt_line_warnings, gc_paused, jsonl_records, load_json
from workbench.history.readers.opencode import opencode_from_document
from workbench.history.readers.pi import pi_from_records
from workbench.history.warnings import LoadWarning, shown, with_warnings

# Every format name; "stagewise_sqlite" is a database file, so only load_history reads it.
FORMATS: tuple[str, ...] = (
    "canonical",
    "stagewise",
    "openai",
    "openai_jsonl",
    "anthropic",
    "claude_code",
    "codex",
    "opencode",
    "copilot_cli",
    "gemini_cli",
    "pi",
    "stagewise_sqlite",
)


def list_format_names() -> list[str]:
    """Every format name ``parse_history``/``load_history`` accept."""
    return list(FORMATS)


FROM_RECORDS: dict[str, Callable[..., History]] = {
    "canonical": canonical_from_records,
    "openai_jsonl": lambda records, *, source: openai_from_records(records, source=source, source_format="openai_jsonl"),
    "claude_code": claude_code_from_records,
    "codex": codex_from_records,
    "copilot_cli": copilot_cli_from_records,
    "gemini_cli": gemini_cli_from_records,
    "pi": pi_from_records,
}
FROM_DOCUMENT: dict[str, Callable[..., History]] = {
    "stagewise": stagewise_from_document,
    "openai": lambda doc, *, source: openai_from_records(openai_document_records(doc, source=source),
                                                         source=source, source_format="openai"),
    "anthropic": anthropic_from_document,
    "opencode": opencode_from_document,
}


@gc_paused
def parse_history(text: str, *, source: str = "<text>", format: str | None = None) -> History:
    """Read a history from text in any text format; ``format=None`` detects it."""
    try:
        return _parse(text, source=source, format=format)
    except RecursionError:  # a guard missed a deep value: still one located line, never a traceback
        raise HistoryError("nested too deeply to read", source=source) from None


def _parse(text: str, *, source: str, format: str | None) -> History:
    warnings: list[LoadWarning] = []
    corrupt: list[HistoryError] = []  # lines that are not JSON: skipped in an agent log, else the first is raised
    if format is None:
        kind, parsed = detect(text, source=source, warnings=warnings, corrupt=corrupt)
        if kind in FROM_RECORDS:
            skipped = corrupt_line_warnings(kind, corrupt, len(parsed))
            return with_warnings(FROM_RECORDS[kind](parsed, source=source), [*skipped, *warnings])
        return FROM_DOCUMENT[kind](parsed, source=source)
    if format == "gemini_cli":  # either layout: one JSON document (over many lines) or a record per line
        return parse_gemini_cli(text, source=source)
    if format in FROM_RECORDS:
        records = jsonl_records(text, source=source, warnings=warnings, corrupt=corrupt)
        skipped = corrupt_line_warnings(format, corrupt, len(records))
        return with_warnings(FROM_RECORDS[format](records, source=source), [*skipped, *warnings])
    if format in FROM_DOCUMENT:
        return FROM_DOCUMENT[format](load_json(text, source=source), source=source)
    if format == "stagewise_sqlite":
        raise HistoryError("stagewise_sqlite is a database file: use load_history(path) or load_stagewise_sqlite",
                           source=source)
    raise HistoryError(f"unknown format {shown(format)} (known: {', '.join(FORMATS)})", source=source)
