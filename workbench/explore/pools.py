"""Ending a process pool at once, shared by the sweeps' pool and ``workbench reality``'s (no heavy imports: the
reality command imports this and not the sweeps)."""

from __future__ import annotations

from concurrent.futures import Executor


def stop_pool(pool: Executor) -> None:
    """End a pool now, leaving no worker and no pool thread behind: queued tasks cancelled, running workers killed
    (an error or Ctrl-C should not wait for the work under way), then the pool's manager thread joined. Left
    running, that thread closes its wake-up pipe while the interpreter's exit writes to it (Python 3.11's
    ``concurrent.futures.process._python_exit``), which printed "Exception ignored ... Bad file descriptor" on
    stderr in 2 runs of 100 of ``workbench reality --workers 2`` under load. With its workers killed it ends at
    once; the timeouts only bound waits that should never come. Any other executor is only shut down."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # ProcessPoolExecutor's, by pid
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.kill()
    for proc in processes:
        proc.join(timeout=5)
    if manager is not None:
        manager.join(timeout=30)
