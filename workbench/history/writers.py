"""Writers: a History to canonical JSONL text (our own format) or to a stagewise-style JSON array.

Canonical JSONL is one header line ``{"kind": "workbench.history", "version": 1, "id", "meta", ...}``
followed by one UIMessage (``Message.to_dict()``) per line, so ``parse_canonical(write_canonical_jsonl(h)) == h``.
The writers return text; ``dump_canonical_jsonl`` is the one helper here that writes a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.history.model import History

CANONICAL_KIND = "workbench.history"
CANONICAL_VERSION = 1


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def _ascii_line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=str)


def canonical_header(history: History) -> dict[str, Any]:
    """The first line: what the messages alone cannot say (the history's id, format and notes)."""
    header: dict[str, Any] = {
        "kind": CANONICAL_KIND,
        "version": CANONICAL_VERSION,
        "id": history.id,
        "source_format": history.source_format,
        "meta": history.meta,
    }
    if history.log is not None:  # an agent log's usage, version and compactions survive the round trip
        header["log"] = history.log.to_dict()
    return header


def write_canonical_jsonl(history: History) -> str:
    """The canonical JSONL text: the header line, then one UIMessage per line, each ending in a newline."""
    lines = [_line(canonical_header(history))]
    lines.extend(_line(m.to_dict()) for m in history.messages)
    text = "\n".join(lines) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (JS strings allow them) cannot be UTF-8: escape only the lines that hold one.
        lines = [_ascii_line(obj) if _has_lone_surrogate(line) else line
                 for obj, line in zip([canonical_header(history), *(m.to_dict() for m in history.messages)], lines,
                                      strict=True)]
        text = "\n".join(lines) + "\n"
    return text


def _has_lone_surrogate(line: str) -> bool:
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def write_uimessage_json(history: History, *, indent: int | None = None) -> str:
    """The messages as one JSON array of UIMessages (what stagewise's history cell holds, without superjson)."""
    return json.dumps([m.to_dict() for m in history.messages], ensure_ascii=True, indent=indent) + "\n"


def dump_canonical_jsonl(history: History, path: str | Path) -> Path:
    """Write canonical JSONL to ``path`` (UTF-8, ``\\n`` line ends) and return the path."""
    from workbench.io.files import atomic_write_bytes

    return atomic_write_bytes(path, write_canonical_jsonl(history).encode("utf-8"))
