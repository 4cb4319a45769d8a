"""Per-item work of a command in forked worker processes, results in input order.

A command that has already imported the engine (numpy, polars, rich: ~560 modules) forks its workers
instead of spawning them: a spawned worker re-imports all of it (~0.4 s), more than the work it takes over.
Fork copies the parent's threads' state but not the threads, so it is used only where that is known to be
safe: Linux, no other Python thread (one could hold a lock the child then waits on forever), and no native
thread but those of the allocator (jemalloc's background threads, polars' idle spill cleaner) or unnamed
ones (OpenBLAS's, which it stops itself before a fork). Polars' compute pool (``polars-N``, a tokio
runtime) is the one that matters: after any polars query in this process a forked child's first query
waits forever on workers it does not have. Where fork is not safe the caller does the work itself.

Workers ignore Ctrl-C (the parent alone handles it and stops them), exit through ``os._exit`` as
multiprocessing's fork workers do (no interpreter teardown of the copied heap), and are joined before
``map_in_processes`` returns, so their CPU time is in the parent's ``RUSAGE_CHILDREN``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Native threads a forked child can do without: jemalloc (polars' allocator) re-creates its background
# threads after a fork; polars starts its spill cleaner at import and the work here never spills.
FORK_SAFE_THREADS = frozenset({"jemalloc_bg_thd", "polars-ooc-clea"})

# Test and benchmark hook: the process that computed each result of the last ``map_in_processes``, in input
# order (the parent's pid where it fell back). Read it; never rely on it for a command's output.
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
        main = _thread_name(os.getpid())
        others = [_thread_name(int(t)) for t in os.listdir("/proc/self/task") if int(t) != os.getpid()]
    except (OSError, ValueError):
        return "cannot list this process's threads (/proc)"
    unsafe = sorted({name for name in others if name != main and name not in FORK_SAFE_THREADS})
    return f"native threads running: {', '.join(unsafe)}" if unsafe else None


def _thread_name(tid: int) -> str:
    with open(f"/proc/self/task/{tid}/comm", encoding="utf-8", errors="replace") as fh:
        return fh.read().strip()


def worker_count(requested: int | None, items: int) -> int:
    """How many workers to use for ``items`` items: ``requested`` (None: one per usable CPU), at most one per item;
    1 (do it in this process) when there is nothing to share or forking is not safe here."""
    jobs = min(usable_cpus() if requested is None else requested, items)
    if jobs < 2 or fork_unsafe_reason() is not None:
        return 1
    return jobs


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent handles it


def map_in_processes(fn: Callable[[T], R], items: Sequence[T], jobs: int, *,
                     weights: Sequence[float] | None = None) -> list[R | WorkerFailed]:
    """``[fn(x) for x in items]`` on ``jobs`` forked workers (``fn`` a module-level function, items and results
    picklable). Heaviest items (``weights``) are submitted first so the workers finish together. An item that
    failed in any way is a ``WorkerFailed``; the caller redoes it in its own process to get its own error.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, wait

    order = sorted(range(len(items)), key=lambda i: -weights[i]) if weights is not None else list(range(len(items)))
    out: list[R | WorkerFailed] = [WorkerFailed("not run")] * len(items)
    pids = [os.getpid()] * len(items)
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_ignore_interrupts)
    try:
        with warnings.catch_warnings():  # Python 3.12+ warns on any fork of a threaded process; checked above
            warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
            futures = {i: executor.submit(_call, fn, items[i]) for i in order}
        for i in range(len(items)):
            # Waited for in short slices: Ctrl-C may be taken by one of the pool's threads, which would leave
            # a wait without timeout blocked; between slices the main thread raises KeyboardInterrupt.
            while not wait([futures[i]], timeout=0.1).done:
                pass
            try:
                pids[i], out[i] = futures[i].result()
            except Exception as exc:  # noqa: BLE001 - any failure: the caller redoes the item itself
                out[i] = WorkerFailed(f"{type(exc).__name__}: {exc}")
    except BaseException:  # Ctrl-C or the like while waiting: stop the workers now, not after their items
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)  # joins (reaps) every worker
        last_workers[:] = pids
    return out


def _call(fn: Callable[[T], R], item: T) -> tuple[int, R]:
    return os.getpid(), fn(item)
