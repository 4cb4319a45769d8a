"""Where agents keep their logs, found under a folder the way each lays them out, recursively.

Claude Code ``~/.claude/projects/<project>/<session>.jsonl`` (subagents beside them), Codex
``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, Copilot CLI ``~/.copilot/session-state/<session>/events.jsonl``
(@github/copilot 1.0.73 app.js: ``session-state``, ``events.jsonl``), Gemini CLI
``~/.gemini/tmp/<project>/chats/session-*.json[l]`` (@google/gemini-cli-core 0.61.0 chatRecordingService.js), Pi
``~/.pi/agent/sessions/--<cwd>--/*.jsonl`` (@mariozechner/pi-coding-agent 0.73.1 session-manager.js), OpenCode's
data folder ``~/.local/share/opencode``: ``opencode.db`` (or ``opencode-<channel>.db``), one entry per session
(``opencode.db#<session id>``), and its older ``storage/`` folder, one entry per ``session/<project>/<id>.json``
(its message and part files are read with it, never listed). Exports and gzipped copies are found by suffix.
Lists files only (and reads an OpenCode database's session list); what is not a history is for the loader to say.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from workbench.history.errors import HistoryError
from workbench.history.readers.opencode_store import SESSION_MARK, opencode_db_sessions

LOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson")
# What a sweep or tune reads from a folder: any history the loader reads (stagewise's SQLite stores too), and agents'
# logs kept gzipped (the readers unpack them). The app's file picker takes the plain ones (``ui.sources.SUFFIXES``).
HISTORY_SUFFIXES = (".jsonl", ".ndjson", ".json", ".sqlite", ".sqlite3", ".db", ".jsonl.gz", ".json.gz")
_OPENCODE_DB = re.compile(r"^opencode(-[A-Za-z0-9._-]+)?\.db$")
_OPENCODE_STORAGE_PARTS = ("message", "part")  # below an OpenCode storage folder: read with their session file


def expand_history_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files as given; folders expand to the history files directly inside them (sorted).

    Here, beside the readers rather than in the sweep, so that ``sweep`` and ``tune`` refuse a missing path before
    they import polars and the engine (most of a refusal's time).
    """
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(x for x in path.iterdir() if x.is_file() and x.name.lower().endswith(HISTORY_SUFFIXES))
            if not found:
                raise FileNotFoundError(f"{path}: no history files ({', '.join(HISTORY_SUFFIXES)}) in this folder")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such history file")
    return out


def agent_logs(folder: Path) -> tuple[list[Path], list[str]]:
    """(every log under ``folder``, sorted; a note per thing left out). A symbolic link is followed only where it
    stays inside the folder, and a file reached under two names is listed once."""
    root = folder.resolve()
    notes: list[str] = []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):  # never into a linked folder
        here = Path(dirpath)
        for name in dirnames:
            if (here / name).is_symlink() and not _inside((here / name).resolve(), root):
                notes.append(f"skipped {here / name}: a symbolic link to {(here / name).resolve()}, outside {folder} "
                             "(name it to read it)")
        if is_opencode_storage(here):  # only session files name a history; messages and parts are read with them
            dirnames[:] = ["session"]
        dirnames.sort()
        for name in filenames:
            if name.endswith(LOG_SUFFIXES) or _OPENCODE_DB.match(name):
                found.append(here / name)
    out: list[Path] = []
    seen: dict[Path, Path] = {}
    for path in sorted(found):
        real = path.resolve()
        if path.is_symlink() and not _inside(real, root):
            notes.append(f"skipped {path}: a symbolic link to {real}, outside {folder} (name it to read it)")
        elif real in seen:
            notes.append(f"skipped {path}: the same file as {seen[real]}")
        elif real.is_file():
            seen[real] = path
            if _OPENCODE_DB.match(path.name):
                out.extend(_db_sessions(path, notes))
            else:
                out.append(path)
    return out, notes


def is_opencode_storage(folder: Path) -> bool:
    """Whether ``folder`` is OpenCode's older storage folder: ``session``, ``message`` and ``part`` inside."""
    return all((folder / name).is_dir() for name in ("session", *_OPENCODE_STORAGE_PARTS))


def _db_sessions(path: Path, notes: list[str]) -> list[Path]:
    """``opencode.db#<id>`` for each session with messages; a database that is not OpenCode's is left out."""
    try:
        return [path.with_name(f"{path.name}{SESSION_MARK}{session}") for session, _ in opencode_db_sessions(path)]
    except HistoryError as exc:
        notes.append(f"skipped {exc}")
        return []


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
