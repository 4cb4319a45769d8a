"""Playground bundles in stagewise's layout (spec §10): one folder per compression, ready to paste.

Each ``<NNN>-<title>/compression-<NNN>/`` folder holds ``system-prompt.md``, ``user-message.md``,
``compact-history.xml``, ``actual-output.md`` and ``metadata.json`` with stagewise's field names.
A history that already carries briefings (a real stagewise chat) gives one bundle per real compression
point, with the stored briefing as the actual output, like stagewise's extraction script; any other
history gives one bundle per compression of a replay, with the briefer's text as the actual output.
Pure: returns ``{relative path: text}``; the ``workbench bundles`` command writes the files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.briefing.prompt import PREVIOUS_TAG, SYSTEM_PROMPT, TARGET_CHARS, build_user_message
from workbench.history.jsjson import utf16_len
from workbench.history.model import History, Message

if TYPE_CHECKING:
    from workbench.replay import Run

FILES = ("system-prompt.md", "user-message.md", "compact-history.xml", "actual-output.md", "metadata.json")


def clean_title(title: str) -> str:
    """stagewise's folder title: drop chars outside [A-Za-z0-9 _-], whitespace runs → '-', lower, 80 chars."""
    kept = re.sub(r"[^A-Za-z0-9 _-]", "", title)
    return re.sub(r"\s+", "-", kept).lower()[:80]


def chat_folder(number: int, title: str) -> str:
    """``NNN-title`` (just ``NNN-`` for an untitled chat, as the script's template gives)."""
    return f"{number:03d}-{clean_title(title)}"


def _title(history: History) -> str:
    title = history.meta.get("title") if isinstance(history.meta, dict) else None
    return title if isinstance(title, str) and title else history.id


def _bundle(
    folder: str,
    number: int,
    *,
    compact: str,
    previous_chars: int,
    actual: str,
    target_chars: int,
    metadata: dict[str, Any],
) -> dict[str, str]:
    user = build_user_message(compact, previous_chars, target_chars)
    extra = metadata.pop("workbench", None)
    meta = {
        **metadata,
        "compactHistoryChars": utf16_len(compact),
        "userMessageChars": utf16_len(user),
        "actualOutputChars": utf16_len(actual),
        "actualOutputIncludesPreviousTag": PREVIOUS_TAG in actual,
    }
    if extra is not None:  # our own fields go last, after stagewise's in stagewise's order
        meta["workbench"] = extra
    base = f"{folder}/compression-{number:03d}/"
    return {
        base + "system-prompt.md": SYSTEM_PROMPT,
        base + "user-message.md": user,
        base + "compact-history.xml": compact,
        base + "actual-output.md": actual,
        base + "metadata.json": json.dumps(meta, indent=2, ensure_ascii=False) + "\n",
    }


def _common(history: History, channel: str, number: int, total: int, b: int, prev: int | None,
            prev_size: int | None) -> dict[str, Any]:
    msgs = history.messages
    return {
        "chatId": str(history.meta.get("chat_id") or history.id) if isinstance(history.meta, dict) else history.id,
        "chatTitle": _title(history),
        "channel": channel,
        "compressionNumber": number,
        "totalCompressions": total,
        "totalChatMessages": len(msgs),
        "boundaryMessageIndex": b,
        "boundaryMessageId": msgs[b].id if msgs[b] else None,
        "totalMessagesInSlice": b,
        "serializedMessageCount": b - prev if prev is not None else b,
        "previousCompressionIndex": prev,
        "previousCompressionSize": prev_size,
    }


def real_bundles(
    history: History,
    *,
    channel: str = "workbench",
    chat_number: int = 1,
    host: bool = True,
    target_chars: int = TARGET_CHARS,
) -> dict[str, str]:
    """One bundle per stored briefing (``compressedHistory`` present, even ``''``), like stagewise's script.

    ``host=True`` serializes with the app's browser markers (what the app sent); ``host=False`` gives
    the script's own output byte for byte (it runs without a host, so shell/lint markers read ``[tool-…]``).
    """
    from workbench.stagewise.serialize import serialize_compact_history

    msgs = history.messages
    points = list(history.briefing_indices())
    folder = chat_folder(chat_number, _title(history))
    out: dict[str, str] = {}
    prev: int | None = None
    for n, b in enumerate(points, start=1):
        prev_size = utf16_len(msgs[prev].briefing or "") if prev is not None else None
        compact = serialize_compact_history(msgs[:b], host=host)
        meta = _common(history, channel, n, len(points), b, prev, prev_size)
        meta["workbench"] = {"source": "stored briefing", "host_markers": host}
        out.update(_bundle(folder, n, compact=compact, previous_chars=prev_size or 0, actual=msgs[b].briefing or "",
                           target_chars=target_chars, metadata=meta))
        prev = b
    return out


def run_bundles(
    history: History,
    run: Run,
    *,
    channel: str = "workbench",
    chat_number: int = 1,
    host: bool = True,
) -> dict[str, str]:
    """One bundle per summarizing compression of a replay (landed or failed), the briefer's text as output.

    A size-only briefer (the simulated one) has no text: its briefings appear as a one-line placeholder
    naming their size, both as the actual output and inside later compact histories.
    """
    from workbench.stagewise.serialize import serialize_compact_history

    base_history = history if run.knobs.keep_existing_briefings else history.without_briefings()
    work: list[Message] = list(base_history.messages)
    comps = [c for c in run.compressions if c.summarize and c.status in ("landed", "failed")]
    folder = chat_folder(chat_number, _title(history))
    out: dict[str, str] = {}
    prev: int | None = None
    prev_size: int | None = None
    for n, c in enumerate(comps, start=1):
        b = c.boundary
        compact = serialize_compact_history(work[:b], host=host)
        actual = _text_of(c)
        meta = _common(base_history, channel, n, len(comps), b, prev, prev_size)
        meta["workbench"] = {
            "source": "replay",
            "briefer": run.briefer,
            "model": c.record.model,
            "status": c.status,
            "chainIndex": c.chain_index,
            "bucket": c.bucket,
            "cacheHit": c.record.cache_hit,
            "attempts": [f"{a.outcome}:{a.model}" for a in c.record.attempts],
            "host_markers": host,
        }
        out.update(_bundle(folder, n, compact=compact, previous_chars=c.previous_chars, actual=actual,
                           target_chars=run.knobs.target_briefing_chars, metadata=meta))
        if c.status == "landed" and b < len(work):
            work[b] = work[b].with_metadata(compressedHistory=actual)
            prev, prev_size = b, utf16_len(actual)
    return out


def _text_of(c: Any) -> str:
    rec = c.record
    if rec.text is not None:
        return rec.text
    if rec.failed:
        return ""
    return f"[{rec.model} briefing: {rec.chars:,} chars, size only, no text]"


def make_bundles(
    history: History,
    run: Run | None = None,
    *,
    channel: str = "workbench",
    chat_number: int = 1,
    host: bool = True,
) -> dict[str, str]:
    """Real bundles when the history carries briefings, else bundles of ``run`` (which is then required)."""
    if history.briefing_indices():
        return real_bundles(history, channel=channel, chat_number=chat_number, host=host)
    if run is None:
        raise ValueError(f"history {history.id!r} carries no briefings: pass the Run of a replay to bundle")
    return run_bundles(history, run, channel=channel, chat_number=chat_number, host=host)


_BUNDLE_PATH = re.compile(r"\d{3,}-[a-z0-9_-]*(/compression-\d{3,}(/(" + "|".join(re.escape(f) for f in FILES) + "))?)?")


def foreign_paths(paths: Sequence[str]) -> list[str]:
    """The relative paths (POSIX) that are not part of a bundles folder: ``--force`` replaces a folder whole, so it
    must hold nothing else (``NNN-title/compression-NNN/`` and the five files, and nothing more)."""
    return [p for p in paths if not _BUNDLE_PATH.fullmatch(p)]


def bundle_folders(files: Sequence[str]) -> list[str]:
    """The compression folders in a bundle mapping, in order."""
    return sorted({f.rsplit("/", 1)[0] for f in files})
