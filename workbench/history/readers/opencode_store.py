"""OpenCode's own storage as Histories: its SQLite database and the JSON files of its older storage folder.

OpenCode keeps sessions under its data folder (``~/.local/share/opencode``): from 1.2 in ``opencode.db`` (tables
``session``, ``message`` and ``part``, each row's ``data`` the object without its ids; opencode-ai 1.3.2 bundle
src/storage/db.ts and its migrations), before that as files ``storage/session/<project>/<session>.json``,
``storage/message/<session>/<message>.json`` and ``storage/part/<message>/<part>.json`` (the layout
src/storage/json-migration.ts reads). Both are assembled into the export's shape (messages by creation time, parts
by id, as MessageV2 orders them) and read by ``opencode.opencode_from_document``. A session of a database is named
``opencode.db#<session id>``. Reads files; the database through a read-only copy, as the stagewise store's.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers.jsontext import MAX_JSON_DEPTH, check_depth, type_name
from workbench.history.readers.opencode import opencode_from_document

SESSION_MARK = "#"  # ``opencode.db#ses_...``: one session of a database
_TABLES = {"session": {"id", "slug", "directory", "title", "version"}, "message": {"id", "session_id", "data"},
           "part": {"id", "message_id", "session_id", "data"}}


def is_opencode_db(con: sqlite3.Connection) -> bool:
    """Whether an open SQLite database has OpenCode's session, message and part tables."""
    for table, needed in _TABLES.items():
        columns = {row[1] for row in con.execute(f"PRAGMA table_info({table})")}
        if not needed <= columns:
            return False
    return True


def opencode_db_sessions(path: str | Path) -> list[tuple[str, str]]:
    """(session id, title) of every session in an OpenCode database with at least one message, oldest first."""
    with _copy(Path(path)) as con:
        try:
            if not is_opencode_db(con):
                raise HistoryError("not an OpenCode database (no session, message and part tables)", source=str(path))
            rows = con.execute("SELECT s.id, s.title FROM session s WHERE EXISTS (SELECT 1 FROM message m WHERE "
                               "m.session_id = s.id) ORDER BY s.time_created, s.id").fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot read as an OpenCode database: {exc}", source=str(path)) from None
    return [(str(i), str(t)) for i, t in rows]


def looks_like_opencode_db(path: Path) -> bool:
    """Whether ``path`` is a SQLite file holding OpenCode's tables (False for anything unreadable)."""
    try:
        with _copy(path) as con:
            return is_opencode_db(con)
    except (HistoryError, sqlite3.Error):
        return False


def load_opencode_db(path: str | Path, session_id: str | None = None) -> History:
    """One session of an OpenCode database: ``session_id``, or the only one it holds."""
    src = Path(path)
    try:
        return _load_db(src, session_id)
    except sqlite3.Error as exc:  # a damaged database
        raise HistoryError(f"cannot read as an OpenCode database: {exc}", source=str(src)) from None


def _load_db(src: Path, session_id: str | None) -> History:
    source = str(src)
    with _copy(src) as con:
        if not is_opencode_db(con):
            raise HistoryError("not an OpenCode database (no session, message and part tables)", source=source)
        if session_id is None:
            ids = [r[0] for r in con.execute("SELECT DISTINCT session_id FROM message ORDER BY session_id")]
            if len(ids) != 1:
                listing = ", ".join(str(i) for i in ids[:10]) + (" …" if len(ids) > 10 else "")
                raise HistoryError(f"holds {len(ids)} sessions: name one as {src.name}{SESSION_MARK}<id> ({listing})",
                                   source=source)
            session_id = str(ids[0])
        named = f"{source}{SESSION_MARK}{session_id}"
        row = con.execute("SELECT id, project_id, slug, directory, title, version, time_created, time_updated "
                          "FROM session WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no session {session_id!r} in this database", source=source)
        info = {"id": row[0], "projectID": row[1], "slug": row[2], "directory": row[3], "title": row[4],
                "version": row[5], "time": {"created": row[6], "updated": row[7]}}
        messages: list[dict[str, Any]] = []
        by_id: dict[str, dict[str, Any]] = {}
        for msg_id, data in con.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                                        (session_id,)):
            body = _object(data, named, f"message {msg_id}")
            item = {"info": {**body, "id": msg_id, "sessionID": session_id}, "parts": []}
            messages.append(item)
            by_id[str(msg_id)] = item
        for part_id, msg_id, data in con.execute("SELECT id, message_id, data FROM part WHERE session_id = ? "
                                                 "ORDER BY id", (session_id,)):
            target = by_id.get(str(msg_id))
            if target is not None:
                body = _object(data, named, f"part {part_id}")
                target["parts"].append({**body, "id": part_id, "sessionID": session_id, "messageID": msg_id})
    return opencode_from_document({"info": info, "messages": messages}, source=named)


def is_storage_session_file(path: Path) -> bool:
    """Whether ``path`` is a session file of OpenCode's storage folder (``storage/session/<project>/<id>.json``)."""
    root = path.parent.parent.parent
    return (path.suffix == ".json" and path.parent.parent.name == "session" and (root / "message").is_dir())


def load_opencode_storage_session(path: str | Path, *, max_bytes: int) -> History:
    """The session whose info file is ``path``, with its message and part files from the same storage folder."""
    session_file = Path(path)
    root = session_file.parent.parent.parent
    budget = [max_bytes]
    info = _read_json(session_file, budget)
    session_id = info.get("id")
    if not isinstance(session_id, str) or not session_id or "/" in session_id or session_id.startswith("."):
        raise HistoryError(f"must be a session id, got {type_name(session_id)}", source=str(session_file), field="id")
    messages: list[tuple[float, str, dict[str, Any]]] = []
    for msg_file in sorted((root / "message" / session_id).glob("*.json")):
        body = _read_json(msg_file, budget)
        own = body.get("id")
        msg_id = own if isinstance(own, str) else msg_file.stem
        parts: list[dict[str, Any]] = []
        if "/" not in msg_id and not msg_id.startswith("."):
            parts = [_read_json(p, budget) for p in sorted((root / "part" / msg_id).glob("*.json"))]
        parts.sort(key=lambda p: str(p.get("id", "")))
        messages.append((_created(body), msg_id, {"info": body, "parts": parts}))
    messages.sort(key=lambda m: (m[0], m[1]))
    return opencode_from_document({"info": info, "messages": [m[2] for m in messages]}, source=str(session_file))


def _created(info: dict[str, Any]) -> float:
    time = info.get("time")
    value = time.get("created") if isinstance(time, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _read_json(path: Path, budget: list[int]) -> dict[str, Any]:
    """One storage file's object; every file read counts against the history size limit."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    budget[0] -= len(data)
    if budget[0] < 0:
        raise HistoryError("the session's files are over the size limit for a history", source=source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HistoryError(f"not UTF-8 text (byte {exc.start})", source=source) from None
    check_depth(text, source=source)
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise HistoryError(f"invalid JSON: {exc}", source=source) from None
    if not isinstance(value, dict):
        raise HistoryError(f"expected an object, got {type_name(value)}", source=source)
    return value


def _object(data: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(data, str):
        raise HistoryError(f"must be JSON text, got {type(data).__name__}", source=source, where=where, field="data")
    if data.count("{") + data.count("[") > MAX_JSON_DEPTH:
        check_depth(data, source=source, field="data")
    try:
        value = json.loads(data)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise HistoryError(f"invalid JSON: {exc}", source=source, where=where, field="data") from None
    if not isinstance(value, dict):
        raise HistoryError(f"expected an object, got {type_name(value)}", source=source, where=where, field="data")
    return value


class _copy:
    """A read-only connection to a copy of the database (OpenCode may be writing it; its WAL comes along)."""

    def __init__(self, src: Path) -> None:
        self.src = src
        self.tmp: tempfile.TemporaryDirectory[str] | None = None
        self.con: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        source = str(self.src)
        if not self.src.is_file():
            raise HistoryError("no such file", source=source)
        self.tmp = tempfile.TemporaryDirectory(prefix="workbench-opencode-")
        copy = Path(self.tmp.name) / "opencode.db"
        try:
            shutil.copyfile(self.src, copy)
            for suffix in ("-wal", "-shm"):
                companion = self.src.with_name(self.src.name + suffix)
                if companion.is_file():
                    shutil.copyfile(companion, copy.with_name(copy.name + suffix))
            self.con = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        except OSError as exc:
            self.tmp.cleanup()
            raise HistoryError(f"cannot copy: {exc.strerror or exc}", source=source) from None
        except sqlite3.Error as exc:
            self.tmp.cleanup()
            raise HistoryError(f"cannot open as SQLite: {exc}", source=source) from None
        return self.con

    def __exit__(self, *exc: object) -> None:
        if self.con is not None:
            self.con.close()
        if self.tmp is not None:
            self.tmp.cleanup()
