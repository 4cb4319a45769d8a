"""Where the app finds histories: the shipped samples, folders the user names, and uploaded bytes.

Folders come from ``--histories DIR`` after ``streamlit run workbench/app.py --`` and from the
``WORKBENCH_HISTORIES`` environment variable (several joined with the OS path separator). Uploaded
bytes go through ``read_upload``, which raises HistoryError (never anything else) for a bad file.
Reads files; never writes any except a temporary copy of an uploaded SQLite store.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.history.errors import HistoryError
from workbench.history.model import History
from workbench.history.readers import load_history, load_stagewise_sqlite, parse_history
from workbench.history.readers.discover import HISTORY_SUFFIXES
from workbench.history.readers.opencode_store import SESSION_MARK, looks_like_opencode_db
from workbench.history.readers.parse_bounds import check_parse_cost

ENV_VAR = "WORKBENCH_HISTORIES"
# The picker matches one suffix (``Path.suffix``): the histories the sweep reads, gzipped logs aside.
SUFFIXES = tuple(s for s in HISTORY_SUFFIXES if s.count(".") == 1)
DEFAULT_NAMES = ("long.jsonl", "short.jsonl", "tool_heavy.jsonl")
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class HistoryFile:
    """A history file the picker offers: a short label and its path."""

    label: str
    path: Path


def user_dirs(argv: Sequence[str], environ: Mapping[str, str]) -> list[Path]:
    """Folders named by ``--histories DIR`` (repeatable, or ``--histories=DIR``) and by WORKBENCH_HISTORIES."""
    out: list[Path] = []
    args = list(argv)
    for i, arg in enumerate(args):
        if arg == "--histories" and i + 1 < len(args):
            out.append(Path(args[i + 1]).expanduser())
        elif arg.startswith("--histories="):
            out.append(Path(arg.split("=", 1)[1]).expanduser())
    for piece in environ.get(ENV_VAR, "").split(os.pathsep):
        if piece.strip():
            out.append(Path(piece.strip()).expanduser())
    return out


def list_history_files(dirs: Sequence[Path]) -> list[HistoryFile]:
    """Every history-like file in ``dirs``: the files right in each folder (stagewise stores, exports), then the agent
    logs in its subfolders as the agents lay them out (``history.readers.discover``: ``--histories ~/.claude``,
    ``~/.codex/sessions``, OpenCode's data folder, ...), samples first, each file once."""
    from workbench.history.readers.discover import agent_logs

    seen: set[Path] = set()
    out: list[HistoryFile] = []
    for d in dirs:
        if not d.is_dir():
            continue
        direct = [p for p in sorted(d.iterdir()) if p.suffix.lower() in SUFFIXES and p.is_file()]
        below, _ = agent_logs(d)
        for path in [*direct, *(p for p in below if p.parent != d or SESSION_MARK in p.name)]:
            real = path.resolve() if path.exists() else path
            if real in seen:
                continue
            seen.add(real)
            out.append(HistoryFile(label=f"{d.name}/{path.relative_to(d).as_posix()}", path=path))
    return out


def default_history_file(files: Sequence[HistoryFile], samples: Sequence[Path] = ()) -> HistoryFile | None:
    """The file the app opens on: the user's first file (one not under a folder of ``samples``, the shipped sample
    folders) when there is one, else a shipped long or short sample, else the first file."""
    shipped = [d.resolve() for d in samples]
    for f in files:
        if shipped and not any(f.path.resolve().is_relative_to(d) for d in shipped):
            return f
    for name in DEFAULT_NAMES:
        for f in files:
            if f.path.name == name:
                return f
    return files[0] if files else None


def generated_history() -> History | None:
    """A small synthetic history when no file is available (package installed without the repo)."""
    try:
        from workbench.history.samples.generate import SAMPLES
    except ImportError:
        return None
    sample = next((s for s in SAMPLES if s.name == "short"), SAMPLES[0] if SAMPLES else None)
    return sample.history() if sample is not None else None


def read_upload(name: str, data: bytes) -> tuple[History, ...]:
    """Histories in an uploaded file: one for text formats, every non-empty chat of a SQLite store. Any ``name`` is
    fine (errors are named after it; no file of that name is made)."""
    name = name or "upload"
    if data.startswith(_SQLITE_MAGIC):
        with tempfile.TemporaryDirectory() as tmp:
            # Not the upload's own name: "..", "" or 300 bytes are no file name; errors still name the upload.
            path = Path(tmp) / "upload.sqlite"
            path.write_bytes(data)
            try:
                chats = tuple(h for h in load_stagewise_sqlite(path) if h.messages)
            except HistoryError as exc:  # named after the upload, never the temporary copy
                problem = exc.problem.replace(str(path), name).replace(tmp, "")
                raise HistoryError(problem, source=name, line=exc.line, column=exc.column, where=exc.where,
                                   field=exc.field) from None
            except Exception as exc:  # a damaged database surfaces as sqlite3 errors
                detail = str(exc).replace(str(path), name).replace(tmp, "")
                raise HistoryError(f"not a readable stagewise store ({detail})", source=name) from None
        if not chats:
            raise HistoryError("the store holds no chat with messages", source=name)
        return chats
    check_parse_cost(data, source=name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise HistoryError(f"not UTF-8 text (byte {exc.start})", source=name, line=line) from None
    try:
        return (parse_history(text, source=name),)
    except HistoryError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise HistoryError(f"could not read this file ({type(exc).__name__}: {exc})", source=name) from None


def read_file(path: Path) -> History:
    """A history from a file path (a SQLite store with several chats yields its first non-empty chat;
    ``opencode.db#<session>`` one session of OpenCode's database)."""
    if SESSION_MARK in path.name and not path.exists():
        return load_history(path)
    with path.open("rb") as fh:
        head = fh.read(16)
    if head == _SQLITE_MAGIC and not looks_like_opencode_db(path):
        chats = [h for h in load_stagewise_sqlite(path) if h.messages]
        if not chats:
            raise HistoryError("the store holds no chat with messages", source=str(path))
        return chats[0]
    return load_history(path)
