"""Writing files so that nothing the user had is lost: atomic replace, append-only logs, a text policy.

Every export goes through here. ``atomic_write_*`` and ``atomic_path`` write a temporary file in the
target's folder, fsync it, and rename it over the target: a crash (even ``kill -9``) leaves either the
old file or the new one, never a torn or 0-byte one (at most a hidden ``.NAME.<pid>.<hex>.tmp`` beside it,
which the next write of that target removes: ``clean_leftovers``). ``atomic_folder`` does the same for a
folder of files (playground bundles): the new folder is built beside the old one and exchanged with it.
Logs are appended, never rewritten, by ``io/append.py``.

Text policy for lone surrogates (JS strings may hold them; UTF-8 cannot): JSON outputs keep them
losslessly as ``\\udXXX`` escapes (:func:`json_text`); text formats (Markdown, XML) get U+FFFD in their
place (:func:`encodable`), and the writer says how many were replaced.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def encodable(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many there were (for Markdown, XML)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.subn(REPLACEMENT, text)
    return text, 0


def escape_surrogates(json_source: str) -> str:
    """JSON text with raw lone surrogates written as ``\\udXXX`` escapes (only strings can hold them)."""
    try:
        json_source.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_source)
    return json_source


def json_text(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` that always encodes as UTF-8, losing nothing."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, **kwargs))


def _temp_name(target: Path, suffix: str = ".tmp") -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}")


LEFTOVER_KINDS = (".tmp", ".tmpdir", ".old")  # a temp file, a temp folder, an old folder moved aside


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # another user's process, or a platform that cannot tell: leave it
        return True
    return True


def clean_leftovers(target: str | os.PathLike[str]) -> list[Path]:
    """Remove what killed writers of ``target`` left beside it (``.NAME.<pid>.<hex>.tmp``, ``.tmpdir``, ``.old``
    whose process is gone); returns what went. An old folder that a killed swap had moved aside while the target
    is missing is put back instead, so the target is the old folder again until a writer finishes a new one.
    Only names made by ``_temp_name`` for this target are touched; a live writer's are left alone (its pid runs:
    on a folder shared between machines a pid is only checked on this one)."""
    final = Path(target)
    pattern = re.compile(rf"\.{re.escape(final.name)}\.(\d+)\.[0-9a-f]{{8}}(\.tmp|\.tmpdir|\.old)")
    try:
        names = os.listdir(final.parent)
    except OSError:
        return []
    found = []
    for name in names:
        match = pattern.fullmatch(name)
        if match and not _pid_alive(int(match.group(1))):
            found.append((match.group(2), final.parent / name))
    olds = sorted((p for kind, p in found if kind == ".old"), key=lambda p: p.stat().st_mtime_ns)
    if olds and not os.path.lexists(final):
        os.replace(olds.pop(), final)  # the newest: what was in place when the swap was killed
    removed = []
    for _, path in found:
        if not os.path.lexists(path):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        removed.append(path)
    return removed


_RENAME_EXCHANGE = 2  # linux/fs.h; renameat2(2) swaps two paths atomically (Linux 3.15+, glibc 2.28+)
_AT_FDCWD = -100


@functools.cache
def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (renameat2 RENAME_EXCHANGE); False where the system cannot."""
    call = _renameat2()
    if call is None:
        return False
    import ctypes

    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):  # the filesystem cannot
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(new: Path, final: Path) -> None:
    """Put the folder ``new`` where the folder ``final`` is, and remove the old one: one atomic exchange where the
    system has it; else the old folder is moved aside first (a kill between the two renames leaves it hidden
    beside, and ``clean_leftovers`` puts it back)."""
    if _exchange(new, final):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old folder
        return
    old = _temp_name(final, ".old")
    os.replace(final, old)
    try:
        os.replace(new, final)
    except BaseException:
        os.replace(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform or filesystem lets a folder be fsynced
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is written; a short write is followed up, an error raised."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # no progress and no error: never loop on it
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def write_stream(stream: TextIO, text: str, *, name: str = "stdout") -> None:
    """Write ``text`` to a text stream whole, or raise an OSError naming the stream.

    On a full disk (``workbench simulate --json > file``), Python's unbuffered stdout (``PYTHONUNBUFFERED``) keeps
    a short write's count and drops the rest without an error (CPython 3.11.7, seen here: 4,096 of 20,001 bytes
    written, exit 0). So the text goes to the stream's descriptor in a loop of ``os.write`` that raises; a stream
    without a descriptor (a test's capture) is written as usual.
    """
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both an OSError and a ValueError
        stream.write(text)
        stream.flush()
        return
    stream.flush()  # what was printed before goes first
    data = text.encode(getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict")
    try:
        write_all(fd, data)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write the output to {name}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """A temporary path beside ``target`` to write into (for writers that want a path, e.g. polars);
    renamed over ``target`` when the block ends without error, removed when it fails."""
    final = Path(target)
    if final.is_dir():
        raise IsADirectoryError(f"{final}: is a folder, not a file")
    clean_leftovers(final)
    tmp = _temp_name(final)
    try:
        yield tmp
        if not tmp.exists():
            raise FileNotFoundError(f"{final}: the writer produced no file")
        if fsync:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if fsync:
        _fsync_dir(final.parent)


def atomic_write_bytes(target: str | os.PathLike[str], data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``target`` atomically (temp file in the same folder, fsync, rename)."""
    final = Path(target)
    with atomic_path(final, fsync=False) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(fd, data)
            if fsync:
                os.fsync(fd)
        except OSError as exc:  # a full disk: say which file (the previous one stays as it was)
            raise OSError(exc.errno, f"cannot write {final}: {exc.strerror or exc}; it was left as it was") from None
        finally:
            os.close(fd)
    if fsync:
        _fsync_dir(final.parent)
    return final


def atomic_write_text(target: str | os.PathLike[str], text: str, *, fsync: bool = True) -> int:
    """Write UTF-8 text atomically; lone surrogates become U+FFFD. Returns how many were replaced."""
    clean, replaced = encodable(text)
    atomic_write_bytes(target, clean.encode("utf-8"), fsync=fsync)
    return replaced


@contextlib.contextmanager
def atomic_folder(target: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[Path]:
    """A temporary folder beside ``target`` to fill; put in place whole when the block ends without error.

    A new or empty ``target`` is replaced by one rename. An existing one (``--force``) is exchanged with the new
    folder and then removed (``_swap_in``): nothing of the old folder stays, and a kill at any moment leaves the
    old folder or the new one at ``target``, never a mix (on a system without the atomic exchange, the old one
    may wait hidden beside until the next run puts it back). Leftovers of killed writers go first.
    """
    final = Path(target)
    if final.exists() and not final.is_dir():
        raise NotADirectoryError(f"{final}: exists and is not a folder")
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(final)
    tmp = _temp_name(final, ".tmpdir")
    tmp.mkdir()
    try:
        yield tmp
        if fsync:
            for p in sorted(tmp.rglob("*")):
                if p.is_file():
                    fd = os.open(p, os.O_RDONLY)
                    try:
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                elif p.is_dir():
                    _fsync_dir(p)
            _fsync_dir(tmp)
        if final.is_dir() and not any(final.iterdir()):
            final.rmdir()
        if final.exists():
            _swap_in(tmp, final)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if fsync:
        _fsync_dir(final.parent)
