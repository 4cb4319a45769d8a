"""Appending to a log so that it only ever holds whole appends (msagent's offload log), never rewriting it.

``append_section`` writes a run's sections (each ending with a blank line) in one ``write`` on an ``O_APPEND``
descriptor, under an exclusive lock where the system has one (``flock``: appenders take turns, and the
kernel lets go of a killed holder's lock). Before writing it leaves a journal beside the log
(``.NAME.append``: the log's size before and after); the journal goes once the bytes are synced. A kill or a
full disk can stop the write at any byte; the journal then says exactly which bytes are an unfinished
append, and the next append rolls them back (the file is cut back to its size before that append) and says
so. Nothing else is ever removed or changed. A log whose tail was cut without a journal (written elsewhere,
or before journals) is reported with the line of its last section, and the new text starts on a fresh line
after a blank one, so it never glues onto the torn line.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from workbench.io.files import encodable, write_all

SECTION_END = b"\n\n"


@dataclass(frozen=True, kw_only=True)
class AppendReport:
    """What ``append_section`` did: bytes written, an unfinished append it rolled back, a torn tail it found
    (line and text), surrogates replaced."""

    path: str
    written: int
    torn_line: int | None = None  # the line where the torn (unfinished) last section of the file starts
    rolled_back: tuple[int, int, int] | None = None  # (line, bytes written, bytes meant) of a cut append removed
    replaced_surrogates: int = 0

    def warnings(self) -> list[str]:
        out = []
        if self.rolled_back is not None:
            line, got, meant = self.rolled_back
            out.append(f"{self.path}:{line}: an append cut off by a crash ({got:,} of {meant:,} bytes) was rolled "
                       "back; the sections before it are as they were")
        if self.torn_line is not None:
            out.append(f"{self.path}:{self.torn_line}: the last section was cut off by an earlier crash (it does "
                       "not end with a blank line); it is left as it is and the new sections start after it")
        if self.replaced_surrogates:
            out.append(f"{self.path}: {self.replaced_surrogates:,} lone surrogate(s) written as U+FFFD")
        return out


def journal_path(log: str | os.PathLike[str]) -> Path:
    """The journal of an append in progress: hidden, beside the log."""
    path = Path(log)
    return path.with_name(f".{path.name}.append")


def append_section(target: str | os.PathLike[str], text: str, *, heading: str = "## ") -> AppendReport:
    """Append ``text`` (whole sections, each ending with a blank line) to an append-only log, all or nothing."""
    final = Path(target)
    final.parent.mkdir(parents=True, exist_ok=True)
    clean, replaced = encodable(text)
    data = clean.encode("utf-8")
    existed = final.exists()
    journal = journal_path(final)
    fd = os.open(final, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        rolled = _roll_back(final, fd, journal, heading.encode("utf-8"))
        size = os.fstat(fd).st_size
        torn_line = None
        if size:
            with final.open("rb") as fh:
                fh.seek(max(0, size - len(SECTION_END)))
                tail = fh.read()
            if not tail.endswith(SECTION_END):
                torn_line = _last_heading_line(final, heading.encode("utf-8"))
                data = (b"\n" if tail.endswith(b"\n") else b"\n\n") + data
        if data:
            _write_journal(journal, size, size + len(data))
            try:
                write_all(fd, data)
                os.fsync(fd)
            except OSError:
                _undo(final, fd, size, existed)  # a full disk: the log as it was, then the error
                with contextlib.suppress(OSError):
                    journal.unlink()
                raise
            journal.unlink()
    finally:
        os.close(fd)
    return AppendReport(path=str(final), written=len(data), torn_line=torn_line, rolled_back=rolled,
                        replaced_surrogates=replaced)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): appends are not serialized across processes
        return
    fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes, or its process dies


def _write_journal(journal: Path, before: int, after: int) -> None:
    """The journal, written whole and synced before the append (one small ``os.write``, then a rename)."""
    tmp = journal.with_name(journal.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, json.dumps({"from": before, "to": after}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, journal)


def _roll_back(final: Path, fd: int, journal: Path, heading: bytes) -> tuple[int, int, int] | None:
    """Cut back an append its writer did not finish, by its journal; (line, bytes written, bytes meant) or None.

    Under the lock no other append is in progress, so a journal found here is a dead writer's. Its bytes are
    removed only when the file ends inside that append's range; a journal that does not fit the file is dropped.
    """
    try:
        found = json.loads(journal.read_text(encoding="utf-8"))
        before, after = int(found["from"]), int(found["to"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        before = after = -1
    size = os.fstat(fd).st_size
    rolled = None
    if 0 <= before < size < after:
        line = 1 + _count_lines(final, before)
        os.ftruncate(fd, before)
        os.fsync(fd)
        rolled = (line, size - before, after - before)
    with contextlib.suppress(OSError):
        journal.unlink()
    return rolled


def _undo(final: Path, fd: int, size: int, existed: bool) -> None:
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)
        if not existed and size == 0:  # never leave a 0-byte log behind
            final.unlink()


def _count_lines(path: Path, end: int) -> int:
    """Newlines in the first ``end`` bytes of ``path``."""
    count = 0
    with path.open("rb") as fh:
        while end > 0:
            chunk = fh.read(min(end, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            end -= len(chunk)
    return count


def _last_heading_line(path: Path, heading: bytes) -> int:
    """The 1-based line of the last line starting with ``heading`` (1 when there is none)."""
    line = found = 1
    at_start = True
    with path.open("rb") as fh:
        for raw in fh:
            if at_start and raw.startswith(heading):
                found = line
            at_start = raw.endswith(b"\n")
            line += 1
    return found
