"""Read any supported history format into a History, detecting the format when not told: one module per format.

One ``parse_<format>(text, source=...)`` per format; ``parse_history`` picks one. Readers take text and
return values. ``load_history`` is the only function here that reads a file (SQLite stores go through
``load_stagewise_sqlite``). Every bad input raises HistoryError naming file, line or item, and field.

This package's ``__init__`` gathers the public names; the code lives by concern: ``canonical`` (our JSONL and
stagewise's JSON, with ``uimessage`` and ``superjson``), ``chat_formats`` (OpenAI, Anthropic), ``claude_code``,
``codex``, ``opencode`` (with ``opencode_store``), ``copilot_cli``, ``gemini_cli`` and ``pi`` (agents' session logs,
sharing ``agent_log_common`` and ``builder``), ``stagewise_store`` (stagewise's
SQLite store), ``jsontext`` (JSON text to located records), ``detect`` (which format), ``parse`` (text to
History), ``parse_bounds`` (memory a parse would take) and ``loading`` (files).
"""

from __future__ import annotations

from workbench.history.readers.canonical import (
    canonical_from_records,
    parse_canonical,
    parse_stagewise,
    stagewise_from_document,
)
from workbench.history.readers.chat_formats import (
    anthropic_from_document,
    openai_document_records,
    openai_from_records,
    parse_anthropic,
    parse_openai,
    parse_openai_jsonl,
)
from workbench.history.readers.claude_code import claude_code_from_records, parse_claude_code
from workbench.history.readers.codex import codex_from_records, parse_codex
from workbench.history.readers.copilot_cli import copilot_cli_from_records, parse_copilot_cli
from workbench.history.readers.detect import detect_format
from workbench.history.readers.gemini_cli import gemini_cli_from_records, parse_gemini_cli
from workbench.history.readers.loading import (
    MAX_BYTES_ENV,
    MAX_HISTORY_BYTES,
    check_history_file,
    load_history,
    load_history_bytes,
    max_history_bytes,
)
from workbench.history.readers.opencode import opencode_from_document, parse_opencode
from workbench.history.readers.parse import FORMATS, list_format_names, parse_history
from workbench.history.readers.pi import parse_pi, pi_from_records
from workbench.history.readers.stagewise_store import load_stagewise_sqlite

__all__ = [
    "FORMATS",
    "MAX_BYTES_ENV",
    "MAX_HISTORY_BYTES",
    "anthropic_from_document",
    "canonical_from_records",
    "check_history_file",
    "claude_code_from_records",
    "codex_from_records",
    "copilot_cli_from_records",
    "detect_format",
    "gemini_cli_from_records",
    "list_format_names",
    "load_history",
    "load_history_bytes",
    "load_stagewise_sqlite",
    "max_history_bytes",
    "openai_document_records",
    "openai_from_records",
    "opencode_from_document",
    "parse_anthropic",
    "parse_canonical",
    "parse_claude_code",
    "parse_codex",
    "parse_copilot_cli",
    "parse_gemini_cli",
    "parse_history",
    "parse_openai",
    "parse_openai_jsonl",
    "parse_opencode",
    "parse_pi",
    "parse_stagewise",
    "pi_from_records",
    "stagewise_from_document",
]
