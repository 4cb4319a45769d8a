"""Read chats out of stagewise's ``instances.sqlite`` (spec §13): one History per chat, briefings included.

The app may be writing to the file, so it is copied (with any ``-wal``/``-shm``) and the copy opened
read-only. Messages are ``agentMessages`` rows in ``seq`` order, each cell a superjson envelope; a chat
with no rows but a legacy ``history`` cell is a migration-v7 casualty, read from the cell and flagged.
This module's only I/O is that copy and read.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, overload

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers.superjson import decode_superjson_text
from workbench.history.readers.uimessage import messages_from_uimessage_list

# Selected by name: migrated files hold the same columns in another physical order (§13.5).
_INSTANCE_COLUMNS = (
    "id", "title", "type", "parent_agent_instance_id", "side_chat_parent_id", "created_at", "last_message_at",
    "archived_at", "active_model_id", "active_provider_instance_id", "used_tokens", "unread", "title_locked_by_user",
    "tool_approval_mode", "history", "queued_messages",
)


@overload
def load_stagewise_sqlite(path: str | Path, chat_id: None = None) -> list[History]: ...
@overload
def load_stagewise_sqlite(path: str | Path, chat_id: str) -> History: ...
def load_stagewise_sqlite(path: str | Path, chat_id: str | None = None) -> list[History] | History:
    """Every chat in the store (oldest first), or the one chat with id ``chat_id``."""
    src = Path(path)
    source = str(src)
    if not src.is_file():
        raise HistoryError("no such file", source=source)
    with tempfile.TemporaryDirectory(prefix="workbench-sqlite-") as tmp:
        copy = Path(tmp) / "instances.sqlite"
        try:
            shutil.copyfile(src, copy)
            for suffix in ("-wal", "-shm"):  # the app may be mid-write: its journal belongs to the copy
                companion = src.with_name(src.name + suffix)
                if companion.is_file():
                    shutil.copyfile(companion, copy.with_name(copy.name + suffix))
        except OSError as exc:
            raise HistoryError(f"cannot copy: {exc.strerror or exc}", source=source) from None
        try:
            con = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot open as SQLite: {exc}", source=source) from None
        try:
            histories = _read(con, source=source, chat_id=chat_id)
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"cannot read as a stagewise store: {exc}", source=source) from None
        finally:
            con.close()
    if chat_id is None:
        return histories
    if not histories:
        raise HistoryError(f"no chat with id {chat_id!r}", source=source)
    return histories[0]


def _read(con: sqlite3.Connection, *, source: str, chat_id: str | None) -> list[History]:
    tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "agentInstances" not in tables:
        raise HistoryError("no agentInstances table (not a stagewise agents database)", source=source)
    version: Any = None
    if "meta" in tables:
        row = con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is not None:
            version = int(row[0]) if str(row[0]).isdigit() else row[0]
    present = {r[1] for r in con.execute("PRAGMA table_info(agentInstances)")}
    columns = [c for c in _INSTANCE_COLUMNS if c in present]
    sql = f"SELECT {', '.join(columns)} FROM agentInstances"
    args: tuple[Any, ...] = ()
    if chat_id is not None:
        sql, args = sql + " WHERE id = ?", (chat_id,)
    order = " ORDER BY created_at, id" if "created_at" in present else " ORDER BY id"
    has_rows = "agentMessages" in tables
    out = []
    for row in con.execute(sql + order, args).fetchall():
        info = dict(zip(columns, row, strict=True))
        out.append(_chat(con, info, source=source, version=version, has_rows=has_rows))
    return out


def _chat(con: sqlite3.Connection, info: dict[str, Any], *, source: str, version: Any, has_rows: bool) -> History:
    chat = str(info.pop("id"))
    legacy_cell = info.pop("history", None)
    queued_cell = info.pop("queued_messages", None)
    meta: dict[str, Any] = {"db_version": version, **info}
    if queued_cell is not None:  # messages waiting to be sent: not history, but worth a count
        queued = _decode(queued_cell, source=source, where=f"chat {chat}", field="queued_messages")
        meta["queued_messages"] = len(queued) if isinstance(queued, list) else 0
    items: list[Any] = []
    seqs: list[int] = []
    if has_rows:
        rows = con.execute(
            "SELECT seq, message_id, role, parts, metadata FROM agentMessages WHERE agent_instance_id = ? ORDER BY seq",
            (chat,),
        ).fetchall()
        for seq, message_id, role, parts, metadata in rows:
            where = f"chat {chat} seq {seq}"
            items.append({
                "id": message_id,
                "role": role,
                "parts": _decode(parts, source=source, where=where, field="parts"),
                "metadata": _decode(metadata, source=source, where=where, field="metadata"),
            })
            seqs.append(seq)
    legacy = _decode(legacy_cell, source=source, where=f"chat {chat}", field="history") if legacy_cell else None
    legacy_items = legacy if isinstance(legacy, list) else []
    if has_rows and items:
        meta["history_source"] = "agentMessages"
        if legacy_items:  # frozen at the last pre-v7 save: shorter, and missing later briefings
            meta["stale_legacy_history_messages"] = len(legacy_items)
        if seqs != list(range(len(seqs))):
            meta["seqs"] = seqs  # v7 skipped messages without a string id or role, leaving gaps
    elif legacy_items:
        meta["history_source"] = "history column"
        if has_rows:  # the app opens this chat empty; we read the cell instead, and say so
            meta["v7_casualty"] = True
        items = legacy_items
    else:
        meta["history_source"] = "agentMessages" if has_rows else "history column"
    try:
        converted = messages_from_uimessage_list(items, source=f"{source}#{chat}")
    except HistoryError as exc:
        raise exc.located(source=source, where=f"chat {chat}") from None
    messages = tuple(m for m in converted if m is not None)
    meta["briefing_seqs"] = [seqs[i] if len(seqs) == len(messages) else i
                             for i, m in enumerate(messages) if m.briefing is not None]
    return History(id=chat, messages=messages, source_format="stagewise_sqlite", source_path=source, meta=meta)


def _decode(cell: Any, *, source: str, where: str, field: str) -> Any:
    if cell is not None and not isinstance(cell, str):
        raise HistoryError(f"expected superjson text, got {type(cell).__name__}", source=source, where=where,
                           field=field)
    try:
        return decode_superjson_text(cell, field=field)
    except HistoryError as exc:
        raise exc.located(source=source, where=where) from None
