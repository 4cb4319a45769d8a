"""Auto-tune: search the knobs for the cheapest config that meets the constraints on a set of histories.

The search is grid refinement: a coarse grid over the search space, then, for a few rounds, a finer
grid around the best configs so far (feasible ones first). A replay costs milliseconds, so a few
thousand runs give a dependable answer in seconds, and unlike a black-box optimizer every evaluated
config stays in the result: the Pareto front of cost vs fact retention vs overflows comes for free.
Each config is scored over all histories together: the objective is its mean tokens (or dollars) per
task, overflows are summed, compactions are the most any one history needed, and fact retention is
pooled over every (compression, fact) pair (see ``workbench.analysis.fact_probes.probes``; with the simulated briefer it
counts what the kept messages carry, so the faces tune with the extractive briefer and say which one it was).
The default search space is where the knobs change these histories (``default_space``), the faces' default
retention floor is the base config's retention less 5 points (``retention_floor``), a winner on the end of
its range is reported (``TuneResult.edges``) and each history's numbers stay visible (``per_history``).
Runs go through :func:`workbench.explore.sweep.sweep`, so any executor works. The scoring and the result
(``Constraints``, ``aggregate``, ``pareto_mask``, ``TuneResult``) are in ``workbench.explore.tune_result``;
this module is the search, and every name imports from here as before.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np
import polars as pl

from workbench.briefing.base import Briefer
from workbench.explore.sweep import (
    BadHistoryFn,
    HistorySource,
    ProgressFn,
    as_source,
    default_executor,
    source_path,
    sweep,
)
from workbench.explore.tune_result import (
    COMPACTION_FACTOR,
    HISTORY_COLUMNS,
    OBJECTIVES,
    RETENTION_SLACK,
    Constraints,
    Edge,
    TuneResult,
    _is_int,
    _is_range,
    aggregate,
    compaction_limit,
    edge_candidates,
    history_rows,
    knob_bounds,
    pareto_mask,
    retention_floor,
)
from workbench.knobs import KNOB_SPECS, Knobs, did_you_mean, knobs_from_dict

__all__ = [
    "COMPACTION_FACTOR",
    "DEFAULT_KNOBS",
    "HISTORY_COLUMNS",
    "OBJECTIVES",
    "RETENTION_SLACK",
    "Constraints",
    "Edge",
    "TuneResult",
    "aggregate",
    "check_config",
    "compaction_limit",
    "default_space",
    "history_rows",
    "pareto_mask",
    "retention_floor",
    "score_config",
    "tune",
]

# The knobs searched by default; their ranges come from the histories (``default_space``).
DEFAULT_KNOBS = ("trigger_ratio", "kept_budget_ratio", "target_briefing_chars")


def default_space(
    histories: Sequence[HistorySource], base: Knobs, names: Sequence[str] = DEFAULT_KNOBS,
) -> dict[str, tuple[float, float] | list[Any]]:
    """Where each knob changes the result on these histories: its live range under ``base`` (replayed here).

    The trigger between what a compaction leaves and the history's peak, the kept budget below what the
    floor messages hold (``workbench.analysis.binding.live_range``), unioned over the histories that compress.
    """
    from workbench.analysis.binding import live_ranges
    from workbench.explore.sweep import _history_of, as_source
    from workbench.replay import simulate

    runs = [simulate(_history_of(as_source(h)), base) for h in histories]
    return dict(live_ranges(runs, list(names)))


def _axis_values(name: str, spec: tuple[float, float] | Sequence[Any], points: int) -> list[Any]:
    if _is_range(spec):
        low, high = float(spec[0]), float(spec[1])
        vals = np.linspace(low, high, max(2, points)).tolist()
        return _cast(name, vals)
    return list(spec)



def _cast(name: str, vals: list[float]) -> list[Any]:
    if _is_int(name):
        return list(dict.fromkeys(int(round(v)) for v in vals))
    return list(dict.fromkeys(round(float(v), 6) for v in vals))


def _check_space(space: Mapping[str, Any]) -> None:
    names = {f.name for f in dataclasses.fields(Knobs)}
    for name, spec in space.items():
        if name not in names:
            raise ValueError(f"search space: unknown knob {name}{did_you_mean(name)}")
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
    the previous step) around the ``keep`` best configs. ``progress(done, total)`` counts the runs the
    search plans, against one total from the start: a config met before is not replayed and counts as done. ``workers=1`` runs in this process; otherwise one process
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
        return [x for x in histories if source_path(as_source(x)) not in bad]

    if space is None and on_bad_history is not None:  # the default ranges replay every history first
        from workbench.explore.sweep import _history_of
        from workbench.history.errors import HistoryError

        for x in map(as_source, histories):
            path = source_path(x)
            if path is not None:
                try:
                    _history_of(x)
                except (HistoryError, OSError) as exc:
                    bad_history(path, " ".join(str(exc).split()))
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
    total = (len(first) + rounds * per_round + 2 * len(steps)) * h  # the last: two steps past each range's end
    seen: dict[tuple[Any, ...], int] = {}
    frames: list[pl.DataFrame] = []
    done_before = 0
    own = executor is None and (workers or os.cpu_count() or 1) > 1
    pool = default_executor(workers) if own else executor

    def evaluate(points_: list[tuple[Any, ...]], round_no: int, planned: int) -> None:
        """Run the points not seen before; progress counts ``planned`` configs × histories for this round, so the
        total never changes: a repeat (or a history that cannot be read) counts as done without a replay."""
        nonlocal done_before
        fresh = [p for p in dict.fromkeys(points_) if p not in seen]
        if not fresh:
            done_before += planned * h
            if progress:
                progress(done_before, total)
            return
        knobs = []
        for p in fresh:
            seen[p] = len(seen)
            knobs.append(knobs_from_dict(dict(zip(names, p, strict=True)), base=base, source="tune"))
        offset = len(seen) - len(fresh)

        def report(done: int, _total: int) -> None:
            if progress:
                progress(min(done_before + done, total), total)

        runs = sweep(readable(), knobs, executor=pool, workers=1 if pool is None else workers,
                     briefer=briefer, probes=True, progress=report,
                     on_bad_history=bad_history if on_bad_history is not None else None)
        if runs.is_empty():
            reasons = "; ".join(bad.values()) or "no runs"
            raise ValueError(f"no history could be read: {reasons}")
        runs = runs.with_columns((pl.col("config") + offset).alias("config"), pl.lit(round_no).alias("round"))
        frames.append(runs)
        done_before += planned * h
        if progress:
            progress(done_before, total)

    try:
        evaluate(first, 0, len(first))
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
            evaluate(neighbours, r, per_round)
        runs = pl.concat(frames, how="diagonal_relaxed")
        trials = _trials(frames, objective, constraints)
        feasible = trials.filter(pl.col("feasible")).sort("objective")
        best_row = feasible.row(0, named=True) if feasible.height else None
        best = knobs_from_dict({n: best_row[n] for n in names}, base=base, source="tune") if best_row else None
        beyond = _beyond(best, space, {n: d * 0.5**rounds for n, d in steps.items()}, readable(), objective,
                         constraints, briefer=briefer, pool=pool, workers=workers)
    finally:
        if own and pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if progress:
        progress(total, total)
    return TuneResult(best=best, best_row=best_row, trials=trials, runs=runs, objective=objective,
                      constraints=constraints, seconds=time.perf_counter() - t0, space=space, beyond=beyond,
                      briefer=getattr(briefer, "name", "simulated") if briefer is not None else "simulated")


def _beyond(best: Knobs | None, space: Mapping[str, Any], step: Mapping[str, float],
            histories: Sequence[HistorySource], objective: str, constraints: Constraints, *,
            briefer: Briefer | None, pool: Executor | None, workers: int | None) -> dict[str, list[dict[str, Any]]]:
    """Score the winner moved half a (finest) step and a whole one past each end of a range it sits on (the cost is
    not monotone: a thrashing trigger costs more, a step further may not); ``TuneResult.edges`` suggests widening
    only where one of them meets the constraints for less. Not trials: the winner stays in its space."""
    probes: list[tuple[str, Any]] = []
    for edge in edge_candidates(dict(space), best):
        low, high = knob_bounds(edge.knob)
        delta = step.get(edge.knob) or abs(edge.high - edge.low) / 4
        sign = -1 if edge.side == "low" else 1
        for part in (0.5, 1.0):
            value: Any = round(edge.value + sign * delta * part, 6)
            if _is_int(edge.knob):  # a whole-number knob moves by one at least
                value = int(round(value)) if round(value) != edge.value else int(edge.value) + sign
            value = min(high, max(low, value))
            if value != edge.value and (edge.knob, value) not in probes:
                probes.append((edge.knob, value))
    if best is None or not probes:
        return {}
    knobs = [best.replace(**{name: value}) for name, value in probes]
    runs = sweep(histories, knobs, executor=pool, workers=1 if pool is None else workers, briefer=briefer,
                 probes=True)
    if runs.is_empty():
        return {}
    rows = aggregate(runs, objective, constraints).sort("config").iter_rows(named=True)
    out: dict[str, list[dict[str, Any]]] = {}
    for (name, value), row in zip(probes, rows, strict=True):
        out.setdefault(name, []).append({**row, "knob": name, "value": value})
    return out


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
    return score_config(runs, constraints, objective=objective)


def score_config(runs: pl.DataFrame, constraints: Constraints, *, objective: str = "tokens") -> dict[str, Any]:
    """Score one config's rows of ``sweep(histories, [knobs], probes=True)`` as tune does: a face that needs the
    score under two constraints, or each history's row too, replays the config once."""
    if runs.is_empty():
        raise ValueError("no history could be read")
    return dict(aggregate(runs, objective, constraints).row(0, named=True))
