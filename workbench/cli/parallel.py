"""Per-item work of a command on this process and forked workers, results in input order.

A command that has already imported the engine (numpy, polars, rich: ~560 modules) forks its workers
instead of spawning them: a spawned worker would import all of it again (0.4 s, ``benchmarks/README.md``),
more than the work it takes over.
Fork copies the parent's threads' state but not the threads, so it is used only where that is known to be
safe: Linux, no other Python thread (one could hold a lock the child then waits on forever), and no native
thread but those of the allocator (jemalloc's background threads), polars' idle spill cleaner, or unnamed
ones (OpenBLAS's, which it stops itself before a fork). Polars' compute pool (threads ``polars-N``) and its
async runtime (``tokio-rt-worker``), started by the first polars query, are what matters: after one, a
forked child's first query waits forever on threads it does not have. Where fork is not safe the caller
does the work itself.

Workers ignore Ctrl-C (the parent alone handles it and kills them), exit through ``os._exit`` (no
interpreter teardown of the copied heap, none of the parent's atexit handlers), and are reaped before
``map_in_processes`` returns, so their CPU time is in the parent's ``RUSAGE_CHILDREN``. Plain pipes, no
``multiprocessing`` machinery: no thread in the parent, nothing to cancel, a dead worker is an EOF.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Native threads a forked child can do without: jemalloc (polars' allocator) re-creates its background
# threads after a fork; polars starts its spill cleaner at import and the work here never spills.
FORK_SAFE_THREADS = frozenset({"jemalloc_bg_thd", "polars-ooc-clea"})

# Test and benchmark hook: the process that computed each result of the last ``map_in_processes``, in input
# order (this process's pid for its own share, and for an item no worker finished). Never read by a command.
last_workers: list[int] = []


@dataclass(frozen=True)
class WorkerFailed:
    """An item no worker finished (it raised, its result did not pickle, the worker died): redo it here."""

    reason: str


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under taskset or a container), else all."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def fork_unsafe_reason() -> str | None:
    """Why forking this process now could hang a worker, or None when it is safe (see the module docstring)."""
    if not sys.platform.startswith("linux"):
        return f"worker processes are forked on Linux only (this is {sys.platform})"
    if threading.active_count() > 1:
        return f"{threading.active_count() - 1} other Python thread(s) running"
    try:
        main = _thread_name(str(os.getpid())) or ""
        others = [_thread_name(t) for t in os.listdir("/proc/self/task") if t != str(os.getpid())]
    except OSError:
        return "cannot list this process's threads (/proc)"
    unsafe = sorted({n for n in others if n is not None and n != main and n not in FORK_SAFE_THREADS})
    return f"native threads running: {', '.join(unsafe)}" if unsafe else None


def _thread_name(tid: str) -> str | None:
    """A thread's name, None when it has ended since the folder was listed."""
    try:
        with open(f"/proc/self/task/{tid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except FileNotFoundError:
        return None


def worker_count(requested: int | None, items: int) -> int:
    """How many workers to use for ``items`` items: ``requested`` (None: one per usable CPU), at most one per item;
    1 (do it in this process) when there is nothing to share or forking is not safe here."""
    jobs = min(usable_cpus() if requested is None else requested, items)
    if jobs < 2 or fork_unsafe_reason() is not None:
        return 1
    return jobs


def map_in_processes(fn: Callable[[T], R], items: Sequence[T], jobs: int, *,
                     weights: Sequence[float] | None = None) -> list[R | WorkerFailed]:
    """``[fn(x) for x in items]`` on ``jobs`` processes: this one and ``jobs - 1`` forked workers (``fn``'s results
    picklable; fork only where ``fork_unsafe_reason()`` is None). An item that failed in any way (``fn`` raised, its result did not pickle, its worker died) is a
    ``WorkerFailed``; the caller redoes it in its own process to get its own error.

    Items are handed out heaviest first (``weights``), each to the first process free, so all finish about
    together; worker k starts with the k-th heaviest. This process takes its share like a worker: what its
    first item warms (presets, compiled patterns) stays for the next call, whose workers inherit it.
    """
    if jobs < 2 or len(items) < 2:  # nothing to share
        last_workers[:] = [os.getpid()] * len(items)
        return [_here(fn, x) for x in items]
    order = sorted(range(len(items)), key=lambda i: -weights[i]) if weights is not None else list(range(len(items)))
    workers = max(1, min(jobs, len(items)) - 1)
    first, rest = order[:workers], order[workers:]
    size = -(-len(rest) // _MAX_TASKS) or 1  # items per task: one, unless there are more than the pipe holds
    tasks = [rest[t : t + size] for t in range(0, len(rest), size)]
    out: list[R | WorkerFailed] = [WorkerFailed("no process finished it")] * len(items)
    pids = [os.getpid()] * len(items)
    pipe, left = _task_pipe(len(tasks))
    children: dict[int, int] = {}  # result pipe (read end) -> worker pid
    mine: list[int] = []  # the first items of workers that could not be started
    try:
        sys.stdout.flush()
        sys.stderr.flush()  # or a worker would inherit, and one day write, what is still buffered
        with warnings.catch_warnings():  # Python 3.12+ warns on any fork of a threaded process; checked before
            warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
            for k in range(workers):
                try:
                    read, write = os.pipe()
                except OSError:  # out of file descriptors: this process does the rest
                    mine = first[k:]
                    break
                try:
                    pid = os.fork()
                except OSError:  # no more processes or memory here: this process does the rest
                    os.close(read)
                    os.close(write)
                    mine = first[k:]
                    break
                if pid == 0:  # the worker: never returns
                    _worker(fn, items, [first[k]], tasks, pipe, write, [read, *children])
                os.close(write)
                children[read] = pid
        frames = _Frames(children)
        while mine or (t := _next(pipe)) is not None or left:
            todo = [mine.pop(0)] if mine else tasks[left.pop(0) if t is None else t]
            for i in todo:
                out[i] = _here(fn, items[i])
                frames.collect(out, pids, block=False)  # so no worker waits long on a full result pipe
        frames.collect(out, pids, block=True)
    except BaseException:  # Ctrl-C or the like: stop the workers now, not after their items
        for pid in children.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(pipe)
        for fd, pid in children.items():
            os.close(fd)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)  # reaped: its CPU time is in RUSAGE_CHILDREN
        last_workers[:] = pids
    return out


def _here(fn: Callable[[T], R], item: T) -> R | WorkerFailed:
    try:
        return fn(item)
    except Exception as exc:  # noqa: BLE001 - as in a worker: the caller redoes it and gets the error
        return WorkerFailed(f"{type(exc).__name__}: {exc}")


_RECORD = struct.Struct("<i")
_FRAME = struct.Struct("<Qi")  # payload size, item number
_MAX_TASKS = 1024  # records in the task pipe: 4 KiB, what the smallest pipe buffer holds


def _task_pipe(count: int) -> tuple[int, list[int]]:
    """The read end of a pipe holding task numbers ``0..count-1`` as 4-byte records, its write end closed (so
    readers see EOF once it is empty); a 4-byte read is atomic, so each task goes to exactly one reader. Also the
    numbers that did not fit (none on Linux), for this process alone."""
    read, write = os.pipe()
    data = memoryview(b"".join(_RECORD.pack(t) for t in range(count)))
    os.set_blocking(write, False)
    try:
        while data:
            data = data[os.write(write, data):]
    except BlockingIOError:
        pass
    finally:
        os.close(write)
    return read, list(range(count - len(data) // _RECORD.size, count))


def _next(pipe: int) -> int | None:
    record = os.read(pipe, _RECORD.size)
    return _RECORD.unpack(record)[0] if record else None


def _worker(fn: Callable[[T], R], items: Sequence[T], start: list[int], tasks: list[list[int]], pipe: int,
            write: int, close: list[int]) -> None:
    """A forked worker: the items ``start``, then tasks from the pipe until it is empty; each result a frame on
    ``write``. Ends the process."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent handles it
        for fd in close:
            os.close(fd)
        todo: list[int] | None = start
        while todo is not None:
            for i in todo:
                try:
                    result: Any = fn(items[i])
                except Exception as exc:  # noqa: BLE001 - reported, not raised: the parent redoes the item
                    result = WorkerFailed(f"{type(exc).__name__}: {exc}")
                try:
                    payload = pickle.dumps((os.getpid(), result), protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # noqa: BLE001 - e.g. a lock in the result
                    payload = pickle.dumps((os.getpid(), WorkerFailed(f"result not picklable: {exc}")))
                frame = memoryview(_FRAME.pack(len(payload), i) + payload)
                while frame:
                    frame = frame[os.write(write, frame):]
            t = _next(pipe)
            todo = None if t is None else tasks[t]
    except BaseException:  # noqa: BLE001 - whatever happens, the worker ends here: the parent sees EOF
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)  # no interpreter teardown of the copied heap, no atexit handlers of the parent's


class _Frames:
    """The workers' result pipes, read as their frames arrive, until each one ends (worker done, or dead)."""

    def __init__(self, children: dict[int, int]) -> None:
        self.buffers = {fd: bytearray() for fd in children}
        self.open = set(children)

    def collect(self, out: list[Any], pids: list[int], *, block: bool) -> None:
        while self.open:
            # In slices when blocking, so Ctrl-C is seen even if the signal went to another thread.
            ready, _, _ = select.select(list(self.open), [], [], 0.2 if block else 0)
            if not ready and not block:
                return
            for fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self.open.discard(fd)
                    continue
                buffer = self.buffers[fd]
                buffer += chunk
                while len(buffer) >= _FRAME.size and len(buffer) >= _FRAME.size + _FRAME.unpack_from(buffer)[0]:
                    size, i = _FRAME.unpack_from(buffer)
                    try:
                        pid, result = pickle.loads(buffer[_FRAME.size : _FRAME.size + size])
                    except Exception as exc:  # noqa: BLE001 - a value that pickles but does not load back
                        pid, result = os.getpid(), WorkerFailed(f"result does not unpickle: {exc}")
                    del buffer[: _FRAME.size + size]
                    out[i] = result
                    if not isinstance(result, WorkerFailed):
                        pids[i] = pid
