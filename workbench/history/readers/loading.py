"""Reading a history file: ``load_history`` refuses what cannot be one, then reads it the cheapest exact way.

A stagewise SQLite store goes to its own reader; our canonical JSONL is read a line at a time (a third of the
peak memory); JSONL is parsed from the file's bytes by orjson where that gives json's values; anything else,
and any file where it might not, is decoded and read by ``parse_history``, whose results and errors every
path keeps. The only module here that opens history files (besides the SQLite store's).
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers.canonical import canonical_from_records
from workbench.history.readers.detect import records_kind
from workbench.history.readers.jsontext import (
    Record,
    check_depth,
    cut_off_warning,
    gc_paused,
    json_problem,
    jsonl_bytes_records,
    strip_bom,
)
from workbench.history.readers.opencode_store import (
    SESSION_MARK,
    is_storage_session_file,
    load_opencode_db,
    load_opencode_storage_session,
    looks_like_opencode_db,
)
from workbench.history.readers.parse import FROM_RECORDS, parse_history
from workbench.history.readers.parse_bounds import check_parse_cost, parse_budget, parse_cost, too_costly
from workbench.history.readers.stagewise_store import load_stagewise_sqlite
from workbench.history.warnings import LoadWarning, with_warnings
from workbench.history.writers import CANONICAL_KIND

_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_MAX_BYTES = 100_000  # our canonical header line is far shorter
_GZIP_MAGIC = b"\x1f\x8b"

# Histories bigger than this are refused before reading (a 100k-message log is ~70 MB); raise it with
# WORKBENCH_MAX_HISTORY_BYTES or load_history(..., max_bytes=...).
MAX_HISTORY_BYTES = 1 << 30
MAX_BYTES_ENV = "WORKBENCH_MAX_HISTORY_BYTES"


def max_history_bytes() -> int:
    """The size limit in force: ``$WORKBENCH_MAX_HISTORY_BYTES`` when set to a whole number, else 1 GiB."""
    raw = os.environ.get(MAX_BYTES_ENV, "").strip().replace("_", "")
    return int(raw) if raw.isdigit() and len(raw) < 20 else MAX_HISTORY_BYTES


def check_history_file(path: Path, *, max_bytes: int | None = None, what: str = "a history") -> int:
    """Refuse what cannot be a history before reading it: not a regular file, or over the size limit.

    Returns the file's size. ``/dev/zero``, a FIFO or a folder would otherwise be read until memory ran out.
    """
    source = str(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a character device" if stat.S_ISCHR(st.st_mode)
                else "a block device" if stat.S_ISBLK(st.st_mode) else "a pipe (FIFO)" if stat.S_ISFIFO(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise HistoryError(f"not a regular file ({kind}): {what} must be a file", source=source)
    limit = max_history_bytes() if max_bytes is None else max_bytes
    if st.st_size > limit:
        hint = f" (raise it with {MAX_BYTES_ENV}=N)" if what == "a history" else ""
        raise HistoryError(f"{st.st_size:,} bytes, over the {limit:,}-byte limit for {what}{hint}", source=source)
    return st.st_size


def load_history(path: str | Path, *, format: str | None = None, chat_id: str | None = None,
                 max_bytes: int | None = None) -> History:
    """Read a history file; a stagewise SQLite store or OpenCode database needs ``chat_id`` unless it holds a single
    chat (``opencode.db#<session id>`` names one session of an OpenCode database; a session file of OpenCode's older
    storage folder is read with its message and part files).

    Only regular files up to ``max_bytes`` (default :func:`max_history_bytes`) are read.
    """
    p = Path(path)
    source = str(p)
    limit = max_history_bytes() if max_bytes is None else max_bytes
    if SESSION_MARK in p.name and not p.exists():  # ``opencode.db#<session>``: one session of OpenCode's database
        db_name, _, session = p.name.partition(SESSION_MARK)
        db = p.with_name(db_name)
        check_history_file(db, max_bytes=limit)
        return load_opencode_db(db, session or chat_id)
    size = check_history_file(p, max_bytes=limit)
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
    try:
        if format == "opencode" and head == _SQLITE_MAGIC or (format is None and head == _SQLITE_MAGIC
                                                              and looks_like_opencode_db(p)):
            return load_opencode_db(p, chat_id)
        if format == "stagewise_sqlite" or (format is None and head == _SQLITE_MAGIC):
            return _one_chat(p, chat_id)
        if format in (None, "opencode") and is_storage_session_file(p):
            return load_opencode_storage_session(p, max_bytes=limit)
        gzipped = head[:2] == _GZIP_MAGIC
        if format in (None, "canonical") and not gzipped:
            streamed = _load_canonical_lines(p, source=source)
            if streamed is not None:
                return streamed
        try:
            with p.open("rb") as fh:
                data = _read_at_most(fh, limit + 1, size)  # the file may have grown since it was checked
        except OSError as exc:
            raise HistoryError(f"cannot read: {exc.strerror or exc}", source=source) from None
        return _from_bytes(data, source=source, format=format, limit=limit)
    except RecursionError:
        raise HistoryError("nested too deeply to read", source=source) from None


def load_history_bytes(data: bytes, *, source: str, format: str | None = None, max_bytes: int | None = None) -> History:
    """The history a file's bytes hold, read elsewhere (a cluster worker gets a file's bytes, not its path): the
    same History and the same errors as ``load_history(source)`` on that file. JSON and JSONL, gzipped or not; a
    SQLite store or an OpenCode storage folder must be read from its path."""
    limit = max_history_bytes() if max_bytes is None else max_bytes
    if len(data) > limit:
        raise HistoryError(f"{len(data):,} bytes, over the {limit:,}-byte limit for a history", source=source)
    if data[:16] == _SQLITE_MAGIC:
        raise HistoryError("a SQLite store is read from its path, not from bytes", source=source)
    try:
        return _from_bytes(data, source=source, format=format, limit=limit)
    except RecursionError:
        raise HistoryError("nested too deeply to read", source=source) from None


def _from_bytes(data: bytes, *, source: str, format: str | None, limit: int) -> History:
    """A JSON or JSONL file's history from its bytes (gzipped or not)."""
    if data[:2] == _GZIP_MAGIC:  # agents' logs are often kept compressed (`.jsonl.gz`): read them as the text they hold
        data = _gunzip(data, limit, source=source)
    if len(data) > limit:
        raise HistoryError(f"over the {limit:,}-byte limit for a history (raise it with {MAX_BYTES_ENV}=N)",
                           source=source)
    check_parse_cost(data, source=source)  # what parsing would take: bounded by a multiple of the size
    if format is None or format in FROM_RECORDS:
        loaded = _load_jsonl_bytes(data, source=source, format=format)
        if loaded is not None:
            return loaded
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(data, exc, source=source) from None
    del data  # the text is a copy: parsing needs only it
    return parse_history(text, source=source, format=format)


def _read_at_most(fh: Any, n: int, size: int) -> bytes:
    """``fh.read(n)`` without asking for ``n`` bytes at once: a read of the 1 GiB limit sets that much aside
    first (~0.4 ms a file). The file's measured ``size`` + 1 is read first; only a file that grew meanwhile
    is read on, up to ``n``."""
    data: bytes = fh.read(min(n, size + 1))
    if size + 1 <= len(data) < n:
        data += fh.read(n - len(data))
    return data


def _gunzip(data: bytes, limit: int, *, source: str) -> bytes:
    """The text a gzip file holds, read no further than ``limit + 1`` bytes (a small file can unpack huge)."""
    unpack = zlib.decompressobj(wbits=31)
    try:
        out = unpack.decompress(data, limit + 1)
    except zlib.error as exc:
        raise HistoryError(f"not a readable gzip file: {exc}", source=source) from None
    if len(out) <= limit and not unpack.eof:
        raise HistoryError("not a readable gzip file: it ends early (truncated?)", source=source)
    return out


def _not_utf8(data: bytes, exc: UnicodeDecodeError, *, source: str) -> HistoryError:
    """The not-UTF-8 error, naming UTF-16/32 when a byte-order mark or NUL bytes say so."""
    line = data.count(b"\n", 0, exc.start) + 1
    hint = ""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        hint = ": looks like UTF-16 or UTF-32; save it as UTF-8"
    return HistoryError(f"not UTF-8 text (byte {exc.start}){hint}", source=source, line=line)


@gc_paused
def _load_jsonl_bytes(data: bytes, *, source: str, format: str | None) -> History | None:
    """A JSONL file read from its bytes (``jsonl_bytes_records``); None when the text path must read it."""
    records = jsonl_bytes_records(data)
    if records is None:
        return None
    kind = format or records_kind(records, source=source)
    return FROM_RECORDS[kind](records, source=source)


@gc_paused
def _load_canonical_lines(path: Path, *, source: str) -> History | None:
    """Canonical JSONL read a line at a time; None when the first line is not our header.

    Reading the whole file holds its bytes, its text (two bytes a character as soon as one character
    is not Latin-1) and its lines besides the parsed values: seven times the file size at the peak
    for 100k messages, against three here. Results and errors are parse_history's, UTF-8 errors first.
    """
    keys: dict[str, str] = {}

    def share_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # json shares a key's string only within one line; sharing across the file saves a third of the
        # file size in memory for ~20% more parsing (the same dict: later duplicates win, first position).
        out: dict[str, Any] = {}
        for k, v in pairs:
            out[keys.setdefault(k, k)] = v
        return out

    decode = json.JSONDecoder(object_pairs_hook=share_keys).decode
    records: list[Record] = []
    warnings: list[LoadWarning] = []
    with path.open("rb") as fh:
        head = fh.readline(_HEADER_MAX_BYTES + 1)
        if len(head) > _HEADER_MAX_BYTES:  # not our header (nor worth decoding a long first line to see so)
            return None
        fh.seek(0)
        offset = 0
        for number, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise HistoryError(f"not UTF-8 text (byte {offset + exc.start})", source=source,
                                   line=number) from None
            offset += len(raw)
            ended = line.endswith("\n")
            if ended:
                line = line[:-1]
            if number == 1:
                line = strip_bom(line)
            if not line or line.isspace():
                if number == 1:
                    return None
                continue
            if number == 1 and '"kind"' not in line:
                return None  # not our header: the whole-text path reads it
            check_depth(line, source=source, line=number)
            try:
                # json.loads's own check (the decoder lacks it), so a stray BOM fails with its message
                value = json.loads(line) if line.startswith("\ufeff") else decode(line)
            except json.JSONDecodeError as exc:
                if number == 1:
                    return None
                _check_utf8(fh, offset, number + 1, source=source)  # the whole-text path reports these first
                problem = json_problem(exc, line)
                if (not ended or "ends early" in problem) and _only_blank_left(fh):
                    warnings.append(cut_off_warning(source, number, problem))
                    break
                raise HistoryError(problem, source=source, line=number, column=exc.colno) from None
            if number == 1:
                if not (isinstance(value, dict) and value.get("kind") == CANONICAL_KIND):
                    return None
                _check_file_parse_cost(path, source=source)  # ours: bounded as the whole-file paths are
            records.append((number, None, value))
    if not records:  # an empty file: the whole-text path says so
        return None
    return with_warnings(canonical_from_records(records, source=source), warnings)


def _check_file_parse_cost(path: Path, *, source: str) -> None:
    """``check_parse_cost`` of a file read a chunk (then, when over, a line) at a time: never held whole."""
    size = cost = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 23):
            size += len(chunk)
            cost += parse_cost(chunk)
    if cost <= parse_budget(size):
        return
    cost, budget = 0, parse_budget(size)
    with path.open("rb") as fh:
        for raw in fh:
            cost += parse_cost(raw, exact=True)
            if cost > budget:
                raise too_costly(cost, size, source=source)


def _only_blank_left(fh: Any) -> bool:
    """Whether only blank lines remain in ``fh`` (so the line just read was the last one)."""
    return all(not raw.strip() for raw in fh)


def _check_utf8(fh: Any, offset: int, number: int, *, source: str) -> None:
    """Raise the not-UTF-8 error for the first bad line left in ``fh`` (line ``number`` on, at ``offset``)."""
    for line_number, raw in enumerate(fh, number):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HistoryError(f"not UTF-8 text (byte {offset + exc.start})", source=source,
                               line=line_number) from None
        offset += len(raw)


def _one_chat(path: Path, chat_id: str | None) -> History:
    if chat_id is not None:
        return load_stagewise_sqlite(path, chat_id=chat_id)
    chats = [h for h in load_stagewise_sqlite(path) if h.messages]
    if len(chats) == 1:
        return chats[0]
    listing = "; ".join(f"{h.id} ({h.meta.get('title') or 'untitled'}, {len(h)} messages)" for h in chats)
    raise HistoryError(f"holds {len(chats)} chats: pass chat_id= one of {listing}", source=str(path))
