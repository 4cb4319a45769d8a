"""Sweeps: a grid or a random sample of knobs × a set of histories → one polars row per run.

Replays take milliseconds, so a sweep is bound by loading and counting histories, not by replaying.
Work is cut into tasks of (one history, a chunk of knob sets); a task carries the history's *path*
(or, for workers without the caller's files, its content hash: :class:`ShippedHistory`), and each worker
process keeps the histories it loaded and their token counts, so a worker reads and counts a history
once however many knob sets it replays. Tasks run on any ``concurrent.futures.Executor``: a process pool
by default (this process takes a share of the tasks while the pool starts and runs), or a dask.distributed
cluster's (``workbench.explore.cluster``) when one machine is not enough. No files are written here except
by :func:`write_sweep`, which the caller asks for.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import multiprocessing
import os
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any

import polars as pl

from workbench.briefing.base import Briefer
from workbench.counting.tokens import CountCache
from workbench.explore.pools import stop_pool
from workbench.history.model import History
from workbench.history.readers.discover import expand_history_paths as expand_history_paths  # the sweep's API too
from workbench.knobs import Knobs, knobs_from_dict


@dataclass(frozen=True)
class ShippedHistory:
    """A history file whose bytes were placed on the workers ahead of the tasks (``explore.cluster.ship``).

    Tasks name it by ``digest`` (the SHA-256 of the file's bytes): a worker loads it from the bytes the first
    time, then keeps it and its counts under that name, so the bytes travel once per worker, never with each
    task. ``data`` is what the executor hands a task as those bytes (a dask future); ``path`` is where the
    caller read them, kept for the rows and for errors, so the rows are those of a sweep of ``path``.
    """

    path: str
    digest: str
    data: Any = field(default=None, compare=False, repr=False)


ProgressFn = Callable[[int, int], None]
BadHistoryFn = Callable[[str, str], None]  # (path, one-line reason): a history that could not be loaded
HistorySource = str | os.PathLike[str] | History | ShippedHistory
TASKS_PER_WORKER = 8  # enough tasks per worker to balance long and short histories
IN_FLIGHT_PER_WORKER = 2  # tasks queued per pool worker while this process takes its own share


# ── knob sets ─────────────────────────────────────────────────────────────────────────────────


def knob_grid(axes: Mapping[str, Sequence[Any]], base: Knobs | None = None) -> list[Knobs]:
    """Every combination of the values on ``axes`` (knob name → values), applied over ``base``.

    >>> len(knob_grid({"trigger_ratio": [0.5, 0.7], "kept_budget_ratio": [0.1, 0.2, 0.3]}))
    6
    """
    base = base or Knobs()
    combos: list[dict[str, Any]] = [{}]
    for name, values in axes.items():
        values = list(values)
        if not values:
            raise ValueError(f"grid axis {name} has no values")
        combos = [{**c, name: v} for c in combos for v in values]
    return [knobs_from_dict(c, base=base, source="grid") for c in combos]


def knob_sample(
    space: Mapping[str, tuple[float, float] | Sequence[Any]],
    n: int,
    *,
    base: Knobs | None = None,
    seed: int = 0,
) -> list[Knobs]:
    """``n`` random knob sets: a (low, high) tuple draws uniformly (whole numbers for int knobs), a list picks one.

    The draw is seeded, so the same call returns the same sample on every machine.
    """
    base = base or Knobs()
    rng = random.Random(seed)
    types = {f.name: f.type for f in dataclasses.fields(Knobs)}
    out = []
    for _ in range(n):
        values: dict[str, Any] = {}
        for name, spec in space.items():
            if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, (int, float)) for x in spec):
                low, high = float(spec[0]), float(spec[1])
                x = rng.uniform(low, high)
                values[name] = round(x) if types.get(name) in ("int", int) else x
            else:
                values[name] = rng.choice(list(spec))
        out.append(knobs_from_dict(values, base=base, source="sample"))
    return out


# ── the worker side ───────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class _Task:
    source: str | History | ShippedHistory  # a path or a content hash (loaded once per worker), or a History value
    position: int  # the history's position in the caller's list (for row order)
    configs: tuple[tuple[int, Knobs], ...]
    briefer: Briefer | None
    probes: bool


_WORKER_HISTORIES: dict[str, History] = {}
_WORKER_CACHE = CountCache(max_tables=256)
_WORKER_LOADS: Counter[str] = Counter()  # how often this process loaded each history (path key or digest)


def _history_of(source: str | History | ShippedHistory, data: bytes | None = None) -> History:
    """The worker's copy of a history: loaded and cached once per process, keyed by path, size and mtime, or by
    content hash for a shipped one (read from ``data``, its bytes; from its path when none came, in the caller)."""
    if isinstance(source, History):
        return source
    from workbench.history.readers import load_history, load_history_bytes

    if isinstance(source, ShippedHistory):
        key = f"sha256:{source.digest}"
    else:
        st = os.stat(source)
        key = f"{os.path.abspath(source)}:{st.st_size}:{st.st_mtime_ns}"
    history = _WORKER_HISTORIES.get(key)
    if history is None:
        if isinstance(source, ShippedHistory):
            history = load_history(source.path) if data is None else load_history_bytes(data, source=source.path)
        else:
            history = load_history(source)
        if len(_WORKER_HISTORIES) >= _WORKER_CACHE.max_tables:  # a long-lived (cluster) worker stays bounded
            _WORKER_HISTORIES.pop(next(iter(_WORKER_HISTORIES)))
        _WORKER_HISTORIES[key] = history
        _WORKER_LOADS[key] += 1
    return history


def worker_loads() -> dict[str, int]:
    """How many times this process loaded each history (key: path, size and mtime, or ``sha256:`` digest). Run in
    every worker (dask: ``client.run(worker_loads)``) it shows each was loaded once however many tasks it had."""
    return dict(_WORKER_LOADS)


def source_path(source: str | History | ShippedHistory) -> str | None:
    """The file a source names (what rows and bad-history reports say), None for an in-memory History."""
    if isinstance(source, History):
        return None
    return source.path if isinstance(source, ShippedHistory) else str(source)


def _run_task(task: _Task, data: bytes | None = None) -> list[dict[str, Any]]:
    """Replay one history under a chunk of knob sets; one row per run (runs in a worker). ``data``: the bytes of a
    shipped history (the executor resolves them on the worker; a worker that already holds it ignores them)."""
    from workbench.replay import simulate

    history = _history_of(task.source, data)
    path = source_path(task.source)
    rows = []
    for config, knobs in task.configs:
        t0 = time.perf_counter()
        run = simulate(history, knobs, task.briefer, cache=_WORKER_CACHE)
        row: dict[str, Any] = {"config": config, "history": history.id, "history_path": path,
                               "_position": task.position, "briefer": run.briefer}
        row.update(dataclasses.asdict(knobs))
        row.update(run.metrics.to_dict())
        if task.probes:
            from workbench.analysis.fact_probes.probes import probe_summary

            row.update(probe_summary(run, history))
        row["replay_ms"] = (time.perf_counter() - t0) * 1000.0
        rows.append(row)
    return rows


# ── the caller side ───────────────────────────────────────────────────────────────────────────


def _size_of(source: str | History | ShippedHistory) -> int:
    if isinstance(source, History):
        return len(source.messages) * 1000
    try:
        return os.path.getsize(source.path if isinstance(source, ShippedHistory) else source)
    except OSError:
        return 0


def _tasks(
    sources: list[str | History | ShippedHistory],
    knobs: Sequence[Knobs],
    *,
    workers: int,
    chunk_size: int | None,
    briefer: Briefer | None,
    probes: bool,
) -> list[_Task]:
    configs = list(enumerate(knobs))
    if chunk_size is None:
        per_history = max(1, math.ceil(TASKS_PER_WORKER * workers / max(1, len(sources))))
        chunk_size = max(1, math.ceil(len(configs) / per_history))
    tasks = []
    # Largest histories first: the slowest tasks start early, so workers finish together.
    order = sorted(range(len(sources)), key=lambda i: -_size_of(sources[i]))
    for pos in order:
        for start in range(0, len(configs), chunk_size):
            chunk = tuple(configs[start : start + chunk_size])
            source = sources[pos]
            if isinstance(source, ShippedHistory):  # the bytes go beside the task, as the executor's own reference
                source = dataclasses.replace(source, data=None)
            tasks.append(_Task(source=source, position=pos, configs=chunk, briefer=briefer, probes=probes))
    return tasks


# Imported once in the fork server, so each worker starts with the engine loaded (~0.5 s saved per worker).
_PRELOAD = ["numpy", "polars", "yaml", "workbench.replay", "workbench.explore.sweep", "workbench.history.readers"]


def default_executor(workers: int | None = None) -> ProcessPoolExecutor:
    """A process pool whose workers fork from a clean server that preloaded the engine.

    Plain ``fork`` of the caller is unsafe (polars' and tiktoken's thread pools do not survive it);
    ``forkserver`` forks from a fresh single-threaded process instead, as cheap as fork, as safe as
    spawn. Where forkserver is missing (Windows, macOS defaults aside), ``spawn`` is used.
    """
    methods = multiprocessing.get_all_start_methods()
    ctx: BaseContext
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
    else:
        ctx = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=ctx)


def as_source(history: HistorySource) -> str | History | ShippedHistory:
    """A history as a task names it: a History or a shipped one as it is, a path as a string."""
    return history if isinstance(history, (History, ShippedHistory)) else os.fspath(history)


def sweep(
    histories: Sequence[HistorySource],
    knobs: Sequence[Knobs],
    *,
    executor: Executor | None = None,
    workers: int | None = None,
    chunk_size: int | None = None,
    briefer: Briefer | None = None,
    probes: bool = False,
    progress: ProgressFn | None = None,
    on_bad_history: BadHistoryFn | None = None,
) -> pl.DataFrame:
    """Replay every history under every knob set; one row per run (config, history, knobs, metrics).

    A history file that cannot be read (HistoryError, OSError) stops the sweep, unless
    ``on_bad_history(path, reason)`` is given: then it is reported once and skipped, the rest go on.

    ``executor``: any ``concurrent.futures.Executor`` (e.g. ``workbench.explore.cluster``'s); when None,
    ``workers`` processes share the work: this one and ``workers - 1`` started for this sweep (``workers=1``
    runs in this process, no pool). ``probes=True`` adds fact retention columns (see
    ``workbench.analysis.fact_probes.probes``). ``progress(done, total)`` is called after each finished chunk
    with the number of runs done. The briefer must be picklable. On any error, Ctrl-C included, the tasks
    not yet finished are cancelled before it goes on up.
    """
    sources = [as_source(h) for h in histories]
    data = {s.digest: s.data for s in sources if isinstance(s, ShippedHistory)}
    total = len(sources) * len(knobs)
    if total == 0:
        return pl.DataFrame()
    n_workers = max(1, workers or os.cpu_count() or 1)  # with a given executor: only sizes the chunks
    own = executor is None and n_workers > 1
    tasks = _tasks(sources, knobs, workers=n_workers, chunk_size=chunk_size, briefer=briefer, probes=probes)
    rows: list[dict[str, Any]] = []
    done = 0
    bad: set[str] = set()

    def skipped(task: _Task, exc: BaseException) -> bool:
        """Report a history that failed to load (once) and say whether to skip it."""
        from workbench.history.errors import HistoryError

        path = source_path(task.source)
        if on_bad_history is None or path is None or not isinstance(exc, (HistoryError, OSError)):
            return False
        if path not in bad:
            bad.add(path)
            on_bad_history(path, " ".join(str(exc).split()))
        return True

    def finished(task: _Task, result: Callable[[], list[dict[str, Any]]]) -> None:
        nonlocal done
        if source_path(task.source) not in bad:  # the other tasks of a history that failed to load are skipped
            try:
                rows.extend(result())
            except Exception as exc:
                if not skipped(task, exc):
                    raise  # a HistoryError already names the file and line
        done += len(task.configs)
        if progress:
            progress(done, total)

    def args(task: _Task) -> tuple[Any, ...]:
        return (task, data[task.source.digest]) if isinstance(task.source, ShippedHistory) else (task,)

    if progress:
        progress(0, total)
    if executor is None and not own:
        for task in tasks:
            finished(task, functools.partial(_run_task, *args(task)))
        return _frame(rows)
    # This process takes a share: it starts on the largest tasks while the pool's workers start, and the pool takes
    # the smallest, so the two load different histories. This process runs its tasks one knob set at a time and
    # keeps the pool fed between them. Should it run out of tasks before the pool has finished any (the workers
    # still starting: a short sweep), it does the pool's too and the pool is stopped. A given executor (a cluster,
    # a kept pool) gets every task.
    pool = executor or default_executor(n_workers - 1)
    queue = deque(tasks)
    limit = len(tasks) if executor is not None else IN_FLIGHT_PER_WORKER * (n_workers - 1)
    pending: dict[Future[list[dict[str, Any]]], _Task] = {}
    taken_back: list[Future[list[dict[str, Any]]]] = []
    pool_done = 0
    # The pool's first tasks are handed to it from a thread: a process's first pool waits for its fork server to
    # import the engine (seconds on a busy machine), and this process starts on its share meanwhile.
    first = [queue.pop() for _ in range(min(limit, len(queue)))] if own else []
    handed = list(first)  # the thread's own list: this process may take tasks back out of ``first`` meanwhile
    started: dict[Future[list[dict[str, Any]]], _Task] = {}
    failed: list[BaseException] = []

    def start() -> None:
        try:
            for task in handed:
                started[pool.submit(_run_task, *args(task))] = task
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            failed.append(exc)

    starter = threading.Thread(target=start, name="sweep-pool-start", daemon=True)
    if handed:
        starter.start()

    def starting() -> bool:
        """Whether the pool's first tasks are still being handed over; once they are, they join ``pending``."""
        if starter.is_alive():
            return True
        if failed:
            raise failed[0]
        for fut, task in list(started.items()):
            if any(t is task for t in first):  # not done here meanwhile
                pending[fut] = task
            else:
                taken_back.append(fut)
        started.clear()
        first.clear()
        return False

    def feed() -> None:
        nonlocal pool_done
        if starting():
            return
        while queue and len(pending) < limit:
            task = queue.pop() if own else queue.popleft()
            pending[pool.submit(_run_task, *args(task))] = task
        for fut in [f for f in pending if f.done()]:
            pool_done += 1
            finished(pending.pop(fut), fut.result)

    def here(task: _Task) -> None:
        for config in task.configs:
            one = dataclasses.replace(task, configs=(config,))
            finished(one, functools.partial(_run_task, *args(one)))
            feed()

    try:
        while queue or pending or first:
            feed()
            if own and queue:
                here(queue.popleft())
            elif own and first:  # the pool is not even started: its first tasks are done here
                here(first.pop())
            elif own and pending and pool_done == 0:
                fut = next(iter(pending))
                taken_back.append(fut)
                here(pending.pop(fut))
            elif pending:
                wait(pending, return_when=FIRST_COMPLETED)
    except BaseException:
        for fut in [*pending, *list(started)]:
            fut.cancel()
        if own:
            stop_pool(pool)
        raise
    if own:
        if handed:  # the pool's first tasks handed over (or taken back here): nothing left in flight unseen
            starter.join()
            starting()
        if all(f.done() for f in taken_back):
            pool.shutdown(wait=True)
        else:  # still starting, or on a task done here since: nothing it could add
            stop_pool(pool)
    return _frame(rows)


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame()
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return frame.sort("config", "_position").drop("_position")


def sweep_metric_columns(frame: pl.DataFrame) -> list[str]:
    """The columns of a sweep frame that are results (metrics and probes), not inputs."""
    inputs = {"config", "history", "history_path", "briefer", *(f.name for f in dataclasses.fields(Knobs))}
    return [c for c in frame.columns if c not in inputs]


def knobs_of_row(row: Mapping[str, Any]) -> Knobs:
    """The Knobs of one sweep row (e.g. the best one), validated again."""
    names = {f.name for f in dataclasses.fields(Knobs)}
    return knobs_from_dict({k: v for k, v in row.items() if k in names}, source="sweep row")


def write_sweep(frame: pl.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a sweep frame as parquet (``.parquet``) or CSV (``.csv``), chosen by the suffix."""
    import io

    from workbench.io.files import atomic_write_bytes

    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise ValueError(f"{out}: unknown sweep output format {suffix or '(none)'}; use .parquet or .csv")
    # Serialized in memory, written by our atomic writer: a crash leaves the previous file as it was, and a full
    # disk is an OSError naming the file (polars writing the file itself raised a ComputeError).
    buffer = io.BytesIO()
    if suffix == ".parquet":
        frame.write_parquet(buffer)
    else:
        frame.write_csv(buffer)
    atomic_write_bytes(out, buffer.getvalue())
    return out


def read_sweep(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a sweep written by :func:`write_sweep` (parquet or CSV)."""
    p = Path(path)
    if p.suffix.lower() == ".parquet":
        return pl.read_parquet(p)
    if p.suffix.lower() == ".csv":
        return pl.read_csv(p)
    raise ValueError(f"{p}: unknown sweep format {p.suffix or '(none)'}; use .parquet or .csv")
