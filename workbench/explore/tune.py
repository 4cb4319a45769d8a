"""Auto-tune: search the knobs for the cheapest config that meets the constraints on a set of histories.

The search is grid refinement: a coarse grid over the search space, then, for a few rounds, a finer
grid around the best configs so far (feasible ones first). A replay costs milliseconds, so a few
thousand runs give a dependable answer in seconds, and unlike a black-box optimizer every evaluated
config stays in the result: the Pareto front of cost vs fact retention vs overflows comes for free.
Each config is scored over all histories together: the objective is its mean tokens (or dollars) per
task, overflows are summed, compactions are the most any one history needed, and fact retention is
pooled over every (compression, fact) pair (see ``workbench.analysis.probes``; with the simulated briefer it
counts what the kept messages carry, so the faces tune with the extractive briefer and say which one it was).
The default search space is where the knobs change these histories (``default_space``), the faces' default
retention floor is the base config's retention less 5 points (``retention_floor``), a winner on the end of
its range is reported (``TuneResult.edges``) and each history's numbers stay visible (``per_history``).
Runs go through :func:`workbench.explore.sweep.sweep`, so any executor works.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from workbench.briefing.base import Briefer
from workbench.explore.sweep import BadHistoryFn, HistorySource, ProgressFn, default_executor, sweep
from workbench.history.model import History
from workbench.knobs import KNOB_SPECS, Knobs, dump_knobs, knobs_from_dict

OBJECTIVES = {"tokens": "tokens_per_task", "dollars": "dollars_per_task"}
# The knobs searched by default; their ranges come from the histories (``default_space``).
DEFAULT_KNOBS = ("trigger_ratio", "kept_budget_ratio", "target_briefing_chars")
RETENTION_SLACK = 0.05  # the default floor: the base config's fact retention minus this


@dataclass(frozen=True, kw_only=True)
class Constraints:
    """What a config must meet on the histories, all together."""

    max_overflows: int = 0  # checks above the window, summed over histories
    min_retention: float = 0.0  # pooled fact retention (0..1)
    max_compressions: int | None = None  # landed compressions of any one history

    def violation(self, overflows: float, retention: float, compressions: float) -> float:
        """0 when met; otherwise a positive size of the miss (ranks infeasible configs)."""
        v = max(0.0, overflows - self.max_overflows) / (1 + self.max_overflows)
        v += max(0.0, self.min_retention - retention) * 10
        if self.max_compressions is not None:
            v += max(0.0, compressions - self.max_compressions) / max(1, self.max_compressions)
        return v


@dataclass(frozen=True, kw_only=True)
class TuneResult:
    """The winner (None when no config met the constraints), every config tried, and the Pareto front."""

    best: Knobs | None
    best_row: dict[str, Any] | None
    trials: pl.DataFrame  # one row per config: searched knobs, objective, retention, overflows, feasible, pareto
    runs: pl.DataFrame  # one row per (config, history): the sweep
    objective: str
    constraints: Constraints
    seconds: float
    space: dict[str, Any] = dataclasses.field(default_factory=dict)  # what was searched
    briefer: str = "simulated"  # who wrote the briefings, so who the retention numbers are about

    def edges(self) -> list[Edge]:
        """Searched ranges whose winner sits on an end that the knob's own range would let go further."""
        if self.best is None:
            return []
        out = []
        for name, spec in self.space.items():
            if not _is_range(spec):
                continue
            lo, hi = float(spec[0]), float(spec[1])
            value = float(getattr(self.best, name))
            ks = KNOB_SPECS.get(name)
            low = float(ks.low) if ks is not None and ks.low is not None else -np.inf
            high = float(ks.high) if ks is not None and ks.high is not None else np.inf
            tol = max(abs(hi - lo) * 1e-6, 1e-12)
            span = hi - lo
            if value <= lo + tol and lo > low:  # halve a positive low end; ratios near 0 are degenerate
                new_lo = lo / 2 if lo > 0 else lo - span
                out.append(Edge(knob=name, value=value, side="low", low=lo, high=hi,
                                widened=(_round_like(name, max(low, new_lo)), hi)))
            elif value >= hi - tol and hi < high:
                out.append(Edge(knob=name, value=value, side="high", low=lo, high=hi,
                                widened=(lo, _round_like(name, min(high, hi + span / 2)))))
        return out

    def per_history(self, config: int | None = None) -> pl.DataFrame:
        """One row per history for a config (the winner by default): a mean over histories hides the ones
        that never compress, so this shows each history's compressions, cost, retention and overflows."""
        if config is None:
            if self.best_row is None:
                return pl.DataFrame()
            config = int(self.best_row["config"])
        return history_rows(self.runs.filter(pl.col("config") == config))

    @property
    def front(self) -> pl.DataFrame:
        """Configs no other config beats on cost, retention and overflows at once."""
        return self.trials.filter(pl.col("pareto")).sort("objective")

    def best_yaml(self) -> str:
        """The winner as knobs YAML (raises when nothing met the constraints)."""
        if self.best is None:
            raise ValueError("no config met the constraints; loosen them or widen the search space")
        return dump_knobs(self.best)


@dataclass(frozen=True, kw_only=True)
class Edge:
    """A winner on the end of its searched range: the true optimum may lie beyond it."""

    knob: str
    value: float
    side: str  # low | high
    low: float
    high: float
    widened: tuple[float, float]  # the range to try next: the low end halved or the high end half a span on

    def describe(self) -> str:
        return (f"{self.knob} = {self.value:g} sits on the {self.side} end of its range {self.low:g}–{self.high:g}: "
                f"the optimum may lie beyond it; try {self.widened[0]:g}–{self.widened[1]:g}")


HISTORY_COLUMNS = ("history", "compressions", "tokens_per_task", "dollars_per_task", "overflows", "peak_ratio",
                   "thrash_events", "retention", "facts_checked")


def history_rows(runs: pl.DataFrame) -> pl.DataFrame:
    """Per-history rows of a sweep or tune frame for one config, with ``compresses`` saying whether it did."""
    cols = [c for c in HISTORY_COLUMNS if c in runs.columns]
    return runs.select(cols).with_columns((pl.col("compressions") > 0).alias("compresses"))


def _round_like(name: str, value: float) -> float:
    return float(round(value)) if _is_int(name) else float(f"{value:.3g}")


def retention_floor(base_retention: float) -> float:
    """The default minimum retention: what the base config keeps, less ``RETENTION_SLACK`` (never below 0)."""
    return max(0.0, float(np.floor((base_retention - RETENTION_SLACK) * 100) / 100))


def default_space(
    histories: Sequence[HistorySource], base: Knobs, names: Sequence[str] = DEFAULT_KNOBS,
) -> dict[str, tuple[float, float] | list[Any]]:
    """Where each knob changes the result on these histories: its live range under ``base`` (replayed here).

    The trigger between what a compaction leaves and the history's peak, the kept budget below what the
    floor messages hold (``workbench.analysis.binding.live_range``), unioned over the histories that compress.
    """
    from workbench.analysis.binding import live_ranges
    from workbench.explore.sweep import _history_of
    from workbench.replay import simulate

    runs = [simulate(_history_of(h if isinstance(h, History) else os.fspath(h)), base) for h in histories]
    return dict(live_ranges(runs, list(names)))


def aggregate(runs: pl.DataFrame, objective: str, constraints: Constraints) -> pl.DataFrame:
    """One row per config from per-run sweep rows: objective, overflows, compressions, retention, feasible."""
    metric = OBJECTIVES.get(objective, objective)
    has_probes = "facts_checked" in runs.columns
    aggs = [
        pl.col(metric).mean().alias("objective"),
        pl.col("tokens_per_task").mean().alias("tokens_per_task"),
        pl.col("dollars_per_task").mean().alias("dollars_per_task"),
        pl.col("overflows").sum().alias("overflows"),
        pl.col("compressions").max().alias("max_compressions"),
        pl.col("peak_ratio").max().alias("max_peak_ratio"),
        pl.len().alias("histories"),
    ]
    if has_probes:
        aggs += [pl.col("facts_checked").sum().alias("facts_checked"),
                 pl.col("facts_retained").sum().alias("facts_retained"),
                 pl.col("facts_at_risk").sum().alias("facts_at_risk")]
    out = runs.group_by("config", maintain_order=True).agg(aggs)
    if has_probes:
        out = out.with_columns(
            pl.when(pl.col("facts_checked") > 0)
            .then(pl.col("facts_retained") / pl.col("facts_checked"))
            .otherwise(1.0)
            .alias("retention")
        )
    else:
        out = out.with_columns(pl.lit(1.0).alias("retention"))
    viol = [
        constraints.violation(o, r, c)
        for o, r, c in zip(out["overflows"], out["retention"], out["max_compressions"], strict=True)
    ]
    return out.with_columns(pl.Series("violation", viol, dtype=pl.Float64)).with_columns(
        (pl.col("violation") == 0).alias("feasible")
    )


def pareto_mask(cost: np.ndarray, retention: np.ndarray, overflows: np.ndarray) -> np.ndarray:
    """True where no other point is at least as good on all three (lower cost, higher retention, fewer
    overflows) and strictly better on one."""
    n = len(cost)
    mask = np.ones(n, dtype=bool)
    for i in range(n):
        better_eq = (cost <= cost[i]) & (retention >= retention[i]) & (overflows <= overflows[i])
        strictly = (cost < cost[i]) | (retention > retention[i]) | (overflows < overflows[i])
        if np.any(better_eq & strictly):
            mask[i] = False
    return mask


def _axis_values(name: str, spec: tuple[float, float] | Sequence[Any], points: int) -> list[Any]:
    if _is_range(spec):
        low, high = float(spec[0]), float(spec[1])
        vals = np.linspace(low, high, max(2, points)).tolist()
        return _cast(name, vals)
    return list(spec)


def _is_range(spec: Any) -> bool:
    return isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, (int, float)) for x in spec)


def _is_int(name: str) -> bool:
    f = {x.name: x for x in dataclasses.fields(Knobs)}[name]
    return f.type in ("int", int)


def _cast(name: str, vals: list[float]) -> list[Any]:
    if _is_int(name):
        return list(dict.fromkeys(int(round(v)) for v in vals))
    return list(dict.fromkeys(round(float(v), 6) for v in vals))


def _check_space(space: Mapping[str, Any]) -> None:
    names = {f.name for f in dataclasses.fields(Knobs)}
    for name, spec in space.items():
        if name not in names:
            raise ValueError(f"search space: unknown knob {name}; known: {', '.join(sorted(names))}")
        ks = KNOB_SPECS.get(name)
        if _is_range(spec) and ks is not None and ks.low is not None and ks.high is not None:
            lo, hi = spec
            if lo > hi or lo < ks.low or hi > ks.high:
                raise ValueError(f"search space: {name} range ({lo:g}, {hi:g}) must lie in [{ks.low:g}, {ks.high:g}]")


def tune(
    histories: Sequence[HistorySource],
    *,
    base: Knobs | None = None,
    objective: str = "tokens",
    constraints: Constraints | None = None,
    space: Mapping[str, tuple[float, float] | Sequence[Any]] | None = None,
    points: int = 4,
    rounds: int = 2,
    keep: int = 3,
    briefer: Briefer | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    on_bad_history: BadHistoryFn | None = None,
) -> TuneResult:
    """Find the knobs with the lowest mean ``objective`` per task that meet ``constraints`` on ``histories``.

    ``space`` maps knob → (low, high) to search a range or → [values] to try each. The first round is a
    ``points``-per-axis grid; each of ``rounds`` further rounds tries the 3-point neighbourhood (half
    the previous step) around the ``keep`` best configs. ``progress(done, total)`` counts runs; total
    is an upper bound until the last call. ``workers=1`` runs in this process; otherwise one process
    pool serves every round (or pass ``executor``). ``on_bad_history(path, reason)``: a history that
    cannot be read is reported and left out of every round instead of stopping the search.
    """
    t0 = time.perf_counter()
    base = base or Knobs()
    constraints = constraints or Constraints()
    from workbench.replay import Metrics

    metrics = {f.name for f in dataclasses.fields(Metrics)}
    if objective not in OBJECTIVES and objective not in metrics:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)} or a metric name, got {objective!r}")
    bad: dict[str, str] = {}

    def bad_history(path: str, reason: str) -> None:
        bad[path] = reason
        if on_bad_history is not None:
            on_bad_history(path, reason)

    def readable() -> list[HistorySource]:
        return [x for x in histories if isinstance(x, History) or os.fspath(x) not in bad]

    if space is None and on_bad_history is not None:  # the default ranges replay every history first
        from workbench.explore.sweep import _history_of
        from workbench.history.errors import HistoryError

        for x in histories:
            if not isinstance(x, History):
                try:
                    _history_of(os.fspath(x))
                except (HistoryError, OSError) as exc:
                    bad_history(os.fspath(x), " ".join(str(exc).split()))
        if not readable():
            raise ValueError(f"no history could be read: {'; '.join(bad.values())}")
    space = dict(space or default_space(readable(), base))
    _check_space(space)
    names = list(space)
    axes = {n: _axis_values(n, space[n], points) for n in names}
    steps = {n: (float(space[n][1]) - float(space[n][0])) / max(1, points - 1)
             for n in names if _is_range(space[n])}
    h = len(histories)
    first = list(itertools.product(*axes.values()))
    per_round = keep * 3 ** len(steps)
    total = (len(first) + rounds * per_round) * h
    seen: dict[tuple[Any, ...], int] = {}
    frames: list[pl.DataFrame] = []
    done_before = 0
    own = executor is None and (workers or os.cpu_count() or 1) > 1
    pool = default_executor(workers) if own else executor

    def evaluate(points_: list[tuple[Any, ...]], round_no: int) -> None:
        nonlocal done_before
        fresh = [p for p in dict.fromkeys(points_) if p not in seen]
        if not fresh:
            return
        knobs = []
        for p in fresh:
            seen[p] = len(seen)
            knobs.append(knobs_from_dict(dict(zip(names, p, strict=True)), base=base, source="tune"))
        offset = len(seen) - len(fresh)

        def report(done: int, _total: int) -> None:
            if progress:
                progress(done_before + done, max(total, done_before + done))

        runs = sweep(readable(), knobs, executor=pool, workers=1 if pool is None else workers,
                     briefer=briefer, probes=True, progress=report,
                     on_bad_history=bad_history if on_bad_history is not None else None)
        if runs.is_empty():
            reasons = "; ".join(bad.values()) or "no runs"
            raise ValueError(f"no history could be read: {reasons}")
        runs = runs.with_columns((pl.col("config") + offset).alias("config"), pl.lit(round_no).alias("round"))
        frames.append(runs)
        done_before += len(fresh) * len(readable())

    try:
        evaluate(first, 0)
        for r in range(1, rounds + 1):
            trials = _trials(frames, objective, constraints)
            centers = _centers(trials, names, keep)
            scale = 0.5**r
            neighbours: list[tuple[Any, ...]] = []
            for c in centers:
                options = []
                for n in names:
                    if n in steps:
                        lo, hi = float(space[n][0]), float(space[n][1])
                        d = steps[n] * scale
                        vals = [min(hi, max(lo, c[n] + k * d)) for k in (-1, 0, 1)]
                        options.append(_cast(n, vals))
                    else:
                        options.append([c[n]])
                neighbours.extend(itertools.product(*options))
            evaluate(neighbours, r)
    finally:
        if own and pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    runs = pl.concat(frames, how="diagonal_relaxed")
    trials = _trials(frames, objective, constraints)
    if progress:
        progress(done_before, done_before)
    feasible = trials.filter(pl.col("feasible")).sort("objective")
    best_row = feasible.row(0, named=True) if feasible.height else None
    best = knobs_from_dict({n: best_row[n] for n in names}, base=base, source="tune") if best_row else None
    return TuneResult(best=best, best_row=best_row, trials=trials, runs=runs, objective=objective,
                      constraints=constraints, seconds=time.perf_counter() - t0, space=space,
                      briefer=getattr(briefer, "name", "simulated") if briefer is not None else "simulated")


def _trials(frames: list[pl.DataFrame], objective: str, constraints: Constraints) -> pl.DataFrame:
    runs = pl.concat(frames, how="diagonal_relaxed")
    agg = aggregate(runs, objective, constraints)
    knob_cols = [f.name for f in dataclasses.fields(Knobs)]
    first = runs.group_by("config", maintain_order=True).agg(pl.col(c).first() for c in [*knob_cols, "round"])
    trials = first.join(agg, on="config").sort("config")
    mask = pareto_mask(trials["objective"].to_numpy(), trials["retention"].to_numpy(),
                       trials["overflows"].to_numpy())
    return trials.with_columns(pl.Series("pareto", mask))


def _centers(trials: pl.DataFrame, names: list[str], keep: int) -> list[dict[str, Any]]:
    ranked = trials.sort(["violation", "objective"])
    return [{n: row[n] for n in names} for row in ranked.head(keep).iter_rows(named=True)]


def check_config(
    knobs: Knobs,
    histories: Sequence[HistorySource],
    constraints: Constraints,
    *,
    objective: str = "tokens",
    briefer: Briefer | None = None,
    on_bad_history: BadHistoryFn | None = None,
) -> dict[str, Any]:
    """Replay ``knobs`` afresh on ``histories`` (in this process) and score it as tune does."""
    runs = sweep(histories, [knobs], workers=1, briefer=briefer, probes=True, on_bad_history=on_bad_history)
    if runs.is_empty():
        raise ValueError("no history could be read")
    row = aggregate(runs, objective, constraints).row(0, named=True)
    return dict(row)
