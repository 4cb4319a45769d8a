"""What a tune returns and how each config is scored over the histories.

``Constraints`` say what a config must meet; ``aggregate`` turns per-run sweep rows into one row per config
(mean objective, summed overflows, the most compactions of any history, pooled fact retention, feasible);
``pareto_mask`` marks the configs nothing beats on cost, retention and overflows at once; ``TuneResult`` holds
the winner, every config tried and the front, with the ranges the winner sits on the end of (``edges``) and
its numbers on each history (``per_history``). The search itself is ``workbench.explore.tune``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from workbench.history.words import counted
from workbench.knobs import KNOB_SPECS, Knobs, dump_knobs

OBJECTIVES = {"tokens": "tokens_per_task", "dollars": "dollars_per_task"}
RETENTION_SLACK = 0.05  # the default floor: the base config's fact retention minus this
# The default limit: at most this many times the base config's compactions on any one history. Fewer tokens per
# task always favour compacting more often (on the long sample a 0.096 trigger compacts 122 times where the
# sidebar's config does 18), though each compaction costs a briefer call, a cold prompt cache and facts.
COMPACTION_FACTOR = 2


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
    # knob -> the scores (``aggregate`` rows, with the knob's ``value``), nearest first, of the winner moved past the
    # end of its range it sits on, which ``tune`` replays: whether a wider range could hold a better winner
    beyond: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)

    def edges(self) -> list[Edge]:
        """Ranges worth widening: the winner sits on an end the knob's own range lets go past, and one step past
        it a config meets the constraints for less (``beyond``). Where the constraints stop it, see ``held_edges``."""
        return [e for e in self._edges() if not e.held_by]

    def held_edges(self) -> list[Edge]:
        """The winner sits on an end of its range, but one step past it a config misses a constraint or costs more:
        widening would not find a better winner, and ``describe`` says what holds it."""
        return [e for e in self._edges() if e.held_by]

    def _edges(self) -> list[Edge]:
        out = []
        for edge in edge_candidates(self.space, self.best):
            probes = self.beyond.get(edge.knob) or []
            if probes and self.best_row is not None:
                best = float(self.best_row["objective"])
                held = [_held_by(p, self.constraints, best) for p in probes]
                better = next((p for p, why in zip(probes, held, strict=True) if not why), None)
                edge = dataclasses.replace(edge, beyond=float((better or probes[0])["value"]),
                                           held_by="" if better is not None else held[0])
            out.append(edge)
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
    """A winner on the end of its searched range: the true optimum may lie beyond it, unless a constraint holds it."""

    knob: str
    value: float
    side: str  # low | high
    low: float
    high: float
    widened: tuple[float, float]  # the range to try next: the low end halved or the high end half a span on
    beyond: float | None = None  # the value one step past the end that was replayed
    held_by: str = ""  # why that config is no better ("" when it is: widen)

    def describe(self) -> str:
        where = f"{self.knob} = {self.value:g} sits on the {self.side} end of its range {self.low:g}–{self.high:g}"
        if self.held_by:
            return f"{where}, but {self.held_by}: a wider range would find no better winner"
        past = f"; at {self.beyond:g} a config meets the constraints for less" if self.beyond is not None else ""
        return f"{where}{past}: the optimum may lie beyond it; try {self.widened[0]:g}–{self.widened[1]:g}"


def edge_candidates(space: dict[str, Any], best: Knobs | None) -> list[Edge]:
    """The searched ranges whose winner sits on an end that the knob's own range would let go further."""
    if best is None:
        return []
    out = []
    for name, spec in space.items():
        if not _is_range(spec):
            continue
        lo, hi = float(spec[0]), float(spec[1])
        value = float(getattr(best, name))
        low, high = knob_bounds(name)
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


def knob_bounds(name: str) -> tuple[float, float]:
    """A knob's own range from its spec (unbounded where the spec names no end)."""
    ks = KNOB_SPECS.get(name)
    low = float(ks.low) if ks is not None and ks.low is not None else -np.inf
    high = float(ks.high) if ks is not None and ks.high is not None else np.inf
    return low, high


def _held_by(probe: dict[str, Any], constraints: Constraints, best_objective: float) -> str:
    """Why the config one step past the edge is no better winner, in words; "" when it is one."""
    at = f"at {probe['value']:g}"
    if constraints.max_compressions is not None and probe["max_compressions"] > constraints.max_compressions:
        return (f"{at} a history compacts {counted(probe['max_compressions'], 'time')}, over the limit of "
                f"{constraints.max_compressions:,}")
    if probe["retention"] < constraints.min_retention:
        return f"{at} fact retention is {probe['retention']:.1%}, under the floor of {constraints.min_retention:.1%}"
    if probe["overflows"] > constraints.max_overflows:
        return f"{at} it overflows {probe['overflows']:,} times, over the {constraints.max_overflows:,} allowed"
    if probe["objective"] >= best_objective:
        return f"{at} it costs no less"
    return ""


HISTORY_COLUMNS = ("history", "compressions", "tokens_per_task", "dollars_per_task", "overflows", "peak_ratio",
                   "thrash_events", "retention", "facts_checked")


def history_rows(runs: pl.DataFrame) -> pl.DataFrame:
    """Per-history rows of a sweep or tune frame for one config, with ``compresses`` saying whether it did."""
    cols = [c for c in HISTORY_COLUMNS if c in runs.columns]
    return runs.select(cols).with_columns((pl.col("compressions") > 0).alias("compresses"))


def _round_like(name: str, value: float) -> float:
    return float(round(value)) if _is_int(name) else float(f"{value:.3g}")


def compaction_limit(base_compressions: int) -> int | None:
    """The default most compactions of any one history: ``COMPACTION_FACTOR`` times the base config's (None, no
    limit, when the base never compacts: then any compaction may be what the histories need)."""
    return COMPACTION_FACTOR * int(base_compressions) if base_compressions > 0 else None


def retention_floor(base_retention: float) -> float:
    """The default minimum retention: what the base config keeps, less ``RETENTION_SLACK`` (never below 0)."""
    return max(0.0, float(np.floor((base_retention - RETENTION_SLACK) * 100) / 100))



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



def _is_range(spec: Any) -> bool:
    return isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, (int, float)) for x in spec)


def _is_int(name: str) -> bool:
    f = {x.name: x for x in dataclasses.fields(Knobs)}[name]
    return f.type in ("int", int)

