"""History values, the readers that build them (``readers/``), and the canonical writer."""

from workbench.history.errors import HistoryError
from workbench.history.model import (
    ROLES,
    History,
    Message,
    Part,
    text_part,
    tool_call_part,
    tool_result_part,
)
from workbench.history.readers import (
    FORMATS,
    detect_format,
    list_format_names,
    load_history,
    load_stagewise_sqlite,
    parse_history,
)
from workbench.history.writers import dump_canonical_jsonl, write_canonical_jsonl

__all__ = [
    "FORMATS",
    "ROLES",
    "History",
    "HistoryError",
    "Message",
    "Part",
    "detect_format",
    "dump_canonical_jsonl",
    "list_format_names",
    "load_history",
    "load_stagewise_sqlite",
    "parse_history",
    "text_part",
    "tool_call_part",
    "tool_result_part",
    "write_canonical_jsonl",
]
