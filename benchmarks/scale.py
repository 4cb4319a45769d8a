"""Sweeps at scale on ../shared/real_sessions_large (gzipped agent logs): the ``scale`` rows of ``run.py``.

    python benchmarks/run.py --only scale            # ~17 of the 67 logs x 100 knob sets, a pool and a cluster
    python benchmarks/run.py --only scale --quick    # 4 logs x 10 knob sets: proves it works

Rows, each a ratio taken in one run:

- rate: a replay of every chosen log under one knob set (the mean over 100 knob sets, counts cached, in this
  process: one core) against reading and ``json.loads`` of every line of the same logs (gunzipped); the notes
  give replays per second per core, warm and with each log's first load and count included.
- pool: ``sweep(workers=2)`` (this process and one started worker) against ``sweep(workers=1)``, both cold (new
  processes, nothing loaded or counted), the same logs under 25 knob sets.
- cluster: the same sweep on a dask cluster of 2 worker processes against one of 1 (``LocalCluster``, started
  before the clock, so only the work is timed: shipping the logs' bytes, each worker's loads and counts, replays).
- ship: ``Cluster.ship`` of the logs to 2 workers against reading the same files here.
- growth: the in-process cost of a sweep of 1,000, 10,000 and 100,000 runs over the chosen logs. Two sizes are
  measured (the logs under 10 and under 100 knob sets, cold); the others are extrapolated from them by
  ``fixed + runs x per-run`` (the fit is printed), which holds because loading and counting happen once per log and
  every further run is one replay.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path
from typing import Any

from harness import Result, Series, timed, timed_paused

from workbench.explore.sweep import knob_sample, sweep

KNOB_SETS = 100
POOL_KNOB_SETS = 25


def _knobs(n: int) -> list[Any]:
    return knob_sample({"trigger_ratio": (0.3, 0.9), "kept_budget_ratio": (0.05, 0.35)}, n, seed=0)


def _logs(folder: Path, quick: bool) -> list[Path]:
    """Every fourth log by name (17 of 67), a spread of agents and sizes; 4 with --quick."""
    logs = sorted(folder.glob("*.jsonl.gz"))
    return logs[::16] if quick else logs[::4]


def _reference(paths: list[Path]) -> None:
    loads = json.loads
    for path in paths:
        for line in gzip.decompress(path.read_bytes()).splitlines():
            if line.strip():
                loads(line)


def _cold() -> None:
    from measures import _cold_inline_sweep

    _cold_inline_sweep()


def _cluster_time(paths: list[Path], knobs: list[Any], workers: int) -> tuple[float, float]:
    """(seconds to ship and sweep on a fresh cluster of ``workers`` processes, seconds of the shipping alone)."""
    from distributed import LocalCluster

    from workbench.explore.cluster import connect

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            connect(lc.scheduler_address) as cluster:
        cluster.client.wait_for_workers(workers)
        cluster.client.run(lambda: __import__("workbench.explore.sweep"))  # imported before the clock, as a preload
        t0 = time.perf_counter()
        sources, shipment = cluster.ship(paths)
        sweep(sources, knobs, executor=cluster.executor, workers=cluster.threads)
        return time.perf_counter() - t0, shipment.seconds


def scale(cfg: Any, folder: Path) -> list[Result]:
    quick = cfg.sizes == (1000,)
    paths = _logs(folder, quick)
    knob_sets = 10 if quick else KNOB_SETS
    pool_sets = 5 if quick else POOL_KNOB_SETS
    runs = 1 if quick else 2
    knobs = _knobs(knob_sets)
    size = sum(p.stat().st_size for p in paths)
    notes = [f"{len(paths)} of the {len(list(folder.glob('*.jsonl.gz')))} logs of {folder.name} (every "
             f"{16 if quick else 4}th by name), {size / 1e6:.1f} MB gzipped"]

    # rate: cold (first loads and counts) then warm replays, in this process, beside the reference
    rate, per_replay, cold_s, small_s = Series(), Series(), Series(), Series()
    cpu_warm, cpu_cold = Series(), Series()  # CPU seconds of this process: the per-core figure other load disturbs less
    for _ in range(runs):
        _cold()
        small_s.add(timed(lambda: sweep(paths, knobs[: knob_sets // 10], workers=1)))  # measured: logs x 10
        _cold()
        c0 = time.process_time()
        cold_s.add(timed(lambda: sweep(paths, knobs, workers=1)))  # measured: logs x 100, cold
        c1 = time.process_time()
        warm = timed(lambda: sweep(paths, knobs, workers=1))
        cpu_cold.add(c1 - c0)
        cpu_warm.add(time.process_time() - c1)
        ref = timed_paused(lambda: _reference(paths))
        per_replay.add(warm / (knob_sets * len(paths)))
        rate.add((warm / knob_sets) / ref)
    warm_rate = 1 / per_replay.median
    cold_rate = knob_sets * len(paths) / cold_s.median
    notes.append(f"replays per second per core: {warm_rate:,.0f} warm (counts cached), {cold_rate:,.0f} with each "
                 f"log's first load and count ({knob_sets} knob sets x {len(paths)} logs = "
                 f"{knob_sets * len(paths):,} runs in {cold_s.median:.1f} s cold); by CPU time "
                 f"{knob_sets * len(paths) / cpu_warm.median:,.0f} warm and {knob_sets * len(paths) / cpu_cold.median:,.0f} "
                 f"cold per CPU-second")

    # pool: 2 processes (this one and a started worker) vs 1, both cold; the fork server (which starts the pool's
    # workers with the engine imported, once per process) started by an untimed first sweep
    pool_knobs = knobs[:pool_sets]
    sweep(paths[:1], pool_knobs[:1], workers=2)
    pool, one_s, two_s = Series(), Series(), Series()
    for r in range(runs):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        t: dict[int, float] = {}
        for w in order:
            _cold()
            t[w] = timed(lambda w=w: sweep(paths, pool_knobs, workers=w))
        pool.add(t[1] / t[2])
        one_s.add(t[1])
        two_s.add(t[2])
    _cold()
    notes.append(f"pool: {pool_sets} knob sets x {len(paths)} logs, 1 process {one_s.median:.1f} s, 2 processes "
                 f"{two_s.median:.1f} s (a new pool each time, from the warm fork server; every log loaded and "
                 "counted by the process that takes it)")

    # cluster: 2 workers vs 1, and what shipping costs
    results: list[Result] = []
    try:
        import distributed  # noqa: F401
    except ImportError:
        cluster_row = Result.skip("cluster", "same sweep on a dask cluster of 2 worker processes",
                                  "the same on a cluster of 1", ">= 1.7x faster", "dask.distributed not installed")
        ship_row = Result.skip("ship", "shipping the logs to 2 cluster workers", "reading the same files here",
                               "<= 1x", "dask.distributed not installed")
    else:
        cluster, ship, c1_s, c2_s = Series(), Series(), Series(), Series()
        for r in range(runs):
            order = (1, 2) if r % 2 == 0 else (2, 1)
            ct: dict[int, tuple[float, float]] = {}
            for w in order:
                ct[w] = _cluster_time(paths, pool_knobs, w)
            cluster.add(ct[1][0] / ct[2][0])
            c1_s.add(ct[1][0])
            c2_s.add(ct[2][0])
            read = timed(lambda: [p.read_bytes() for p in paths])
            ship.add(ct[2][1] / read)
        notes.append(f"cluster: 1 worker {c1_s.median:.1f} s, 2 workers {c2_s.median:.1f} s (shipping included); "
                     f"shipping {size / 1e6:.1f} MB to 2 workers took {ship.median:.0f}x reading them here, "
                     f"a share of {ship.median * read / c2_s.median:.0%} of the 2-worker sweep")
        cluster_row = Result("cluster", "the pool's sweep on a dask cluster of 2 worker processes (127.0.0.1), "
                             "histories shipped", "the same on a cluster of 1 worker", ">= 1.7x faster", cluster,
                             "x faster", cluster.median >= 1.7, c2_s)
        ship_row = Result("ship", f"shipping the logs' bytes to 2 cluster workers ({size / 1e6:.1f} MB, once per "
                          "worker)", "reading the same files here", "reported", ship, "x", True, Series([ct[2][1]]))

    # growth: measured at logs x 10 and logs x 100 (cold), the rest extrapolated
    n_small, n_big = len(paths) * (knob_sets // 10), len(paths) * knob_sets
    per_run = (cold_s.median - small_s.median) / (n_big - n_small)
    fixed = cold_s.median - per_run * n_big
    growth = {n_small: small_s.median, n_big: cold_s.median}
    for n in (1_000, 10_000, 100_000):
        growth.setdefault(n, fixed + per_run * n)
    notes.append(f"growth: measured {n_small:,} runs {small_s.median:.1f} s and {n_big:,} runs {cold_s.median:.1f} s "
                 f"(cold, one core); fit {fixed:.1f} s + {per_run * 1000:.2f} ms a run; extrapolated "
                 + ", ".join(f"{n:,} runs {fixed + per_run * n:,.0f} s" for n in (1_000, 10_000, 100_000)
                             if n not in (n_small, n_big))
                 + f"; 1,000,000 runs {fixed + per_run * 1e6:,.0f} s on one core, "
                   f"{(fixed + per_run * 1e6) / 3600 / 100:.2f} h on 100 cores at this rate")

    results.append(Result("scale_rate", f"a replay of each of {len(paths)} real logs (mean over {knob_sets} knob "
                          "sets, counts cached, one core)", "read + gunzip + `json.loads` of every line of the same "
                          "logs", "<= 0.5x", rate, "x", rate.median <= 0.5, Series([per_replay.median]),
                          notes=notes))
    results.append(Result("scale_pool", f"sweep of {pool_sets} knob sets x {len(paths)} real logs on 2 processes, "
                          "cold (this process takes a share)", "the same sweep on 1 process, cold", ">= 1.7x faster",
                          pool, "x faster", pool.median >= 1.7, two_s))
    results.append(cluster_row)
    results.append(ship_row)
    results.append(Result("scale_growth", "sweep time by runs (one core, cold; sizes in runs, not messages)",
                          "the fit's own measured sizes", "reported", Series([1.0]), "x", True,
                          Series([cold_s.median]), growth={n: growth[n] for n in sorted(growth)}))
    return results
