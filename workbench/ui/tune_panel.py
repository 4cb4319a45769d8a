"""The Sweep tab's auto-tune panel (``workbench.explore.tune``) over the histories chosen above: objective and
constraints, the search space (where each knob changes these histories, unless the user widened it), then the
winner against the sidebar's knobs, each history, its YAML and the Pareto front.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from workbench import plots
from workbench.display import labels
from workbench.display.untrusted import literal
from workbench.history.model import History
from workbench.history.words import counted
from workbench.knobs import Knobs
from workbench.replay import METRIC_SPECS, Run
from workbench.ui import runs
from workbench.ui import state as ui_state
from workbench.ui.charts import show
from workbench.ui.sweep_shared import _history_table, numeric_knobs

if TYPE_CHECKING:
    from workbench.explore.tune import Constraints

TUNE = "tune_result"  # {"result": TuneResult, "current": the sidebar's score, "base": Knobs, "labels": [str]}
RANGES = "tune_ranges"  # knob -> (low, high) the user widened; the rest come from the histories
# A small grid: a tune of the long sample with the extractive briefer takes about ten seconds in-process.
TUNE_POINTS, TUNE_ROUNDS = 3, 1
TUNE_BRIEFERS = {"extractive": "extractive (writes text: retention counts what the briefing keeps)",
                 "simulated": "simulated (size only: retention counts kept messages only)"}


def _tune_space(names: list[str], runs_: list[Any]) -> dict[str, tuple[float, float]]:
    """Where each knob changes the chosen histories (the engine's live ranges), unless the user widened it."""
    from workbench.analysis.binding import live_ranges

    found = live_ranges(runs_, names)
    widened = st.session_state.get(RANGES, {})
    return {n: tuple(widened.get(n, found[n])) for n in names}


def _queue_winner(text: str) -> None:
    # The YAML tab's door: consume_pending sets every widget from this text before the sidebar is drawn.
    st.session_state[ui_state.PENDING_YAML] = ("the tuned winner", text)


def _widen(knob: str, low: float, high: float) -> None:
    st.session_state.setdefault(RANGES, {})[knob] = (low, high)
    st.session_state["tune_again"] = True


def _reset_ranges() -> None:
    st.session_state.pop(RANGES, None)


@dataclasses.dataclass(frozen=True)
class TuneForm:
    """What the auto-tune widgets say; ``min_retention`` None means "the sidebar config's retention less 5 points",
    ``max_compressions`` None with ``limit_from_base`` "twice the sidebar config's compactions"."""

    objective: str
    max_overflows: int
    min_retention: float | None
    max_compressions: int | None
    space: dict[str, tuple[float, float]]
    points: int
    rounds: int
    briefer: str
    limit_from_base: bool = False

    def constraints(self, base: dict[str, Any]) -> Constraints:
        """The constraints, the defaults taken from ``base`` (the sidebar config's ``score_config`` row)."""
        from workbench.explore.tune import Constraints, compaction_limit, retention_floor

        floor = retention_floor(base["retention"]) if self.min_retention is None else self.min_retention
        limit = compaction_limit(int(base["max_compressions"])) if self.limit_from_base else self.max_compressions
        return Constraints(max_overflows=self.max_overflows, min_retention=floor, max_compressions=limit)


def _tune_controls(runs_: list[Any]) -> TuneForm:
    """Objective, constraints, briefer and search widgets."""
    from workbench.explore.tune import DEFAULT_KNOBS, OBJECTIVES

    st.session_state.setdefault("tune_objective", "tokens")
    st.session_state.setdefault("tune_max_overflows", 0)
    st.session_state.setdefault("tune_min_retention", 0.0)
    st.session_state.setdefault("tune_floor_from_base", True)
    st.session_state.setdefault("tune_briefer", "extractive")
    # Two widgets a row: at 1280 px with the sidebar open four columns cut their labels ("retention floor from th…").
    c1, c2 = st.columns(2)
    objective = c1.selectbox("minimise", list(OBJECTIVES), key="tune_objective",
                             format_func=lambda o: f"{o} per task (mean over histories)")
    max_overflows = c2.number_input("max overflows", 0, 10_000, step=1, key="tune_max_overflows",
                                    help="Checks above the window, summed over the histories.")
    c3, c4 = st.columns(2)
    from_base = c3.checkbox("retention floor from the sidebar's config", key="tune_floor_from_base",
                            help="The winner keeps at least the sidebar config's fact retention less 5 points, so "
                                 "a cheaper config cannot trade the facts away. Untick to set your own floor.")
    min_retention = c3.slider("min fact retention", 0.0, 1.0, step=0.01, key="tune_min_retention",
                              disabled=from_base, help="Pooled over every (compression, fact) pair of every history.")
    st.session_state.setdefault("tune_limit_from_base", True)
    limit_from_base = c4.checkbox("compaction limit from the sidebar's config", key="tune_limit_from_base",
                                  help="The winner compacts at most twice as often as the sidebar's config on any "
                                       "history: fewer tokens per task always favour compacting more often. Untick "
                                       "to set your own limit.")
    max_compressions = c4.number_input("max compactions", min_value=0, value=None, step=1, placeholder="no limit",
                                       key="tune_max_compressions", disabled=limit_from_base,
                                       help="Landed compressions of any one history.")
    briefer = st.radio("briefer", list(TUNE_BRIEFERS), key="tune_briefer", format_func=TUNE_BRIEFERS.get,
                       horizontal=True, help="Fact retention checks the briefing's text; the size model writes none.")
    with st.expander("Search space"):
        st.session_state.setdefault("tune_space", list(DEFAULT_KNOBS))
        st.session_state.setdefault("tune_points", TUNE_POINTS)
        st.session_state.setdefault("tune_rounds", TUNE_ROUNDS)
        names = st.multiselect("knobs to search", numeric_knobs(), key="tune_space", format_func=labels.knob_title)
        space = _tune_space(names, runs_)
        widened = st.session_state.get(RANGES, {})
        st.caption(" · ".join(f"{n} {lo:g}–{hi:g}{' (widened)' if n in widened else ''}"
                              for n, (lo, hi) in space.items())
                   + " — where each knob changes these histories under the sidebar's knobs")
        if widened:
            st.button("Back to the ranges from the histories", key="tune_reset_ranges", on_click=_reset_ranges)
        s1, s2 = st.columns(2)
        points = s1.number_input("grid points per knob", 2, 9, key="tune_points",
                                 help="The first round's grid; its size is points ^ knobs.")
        rounds = s2.number_input("refinement rounds", 0, 5, key="tune_rounds",
                                 help="Each round tries the neighbours of the 3 best configs at half the step.")
    return TuneForm(objective=str(objective), max_overflows=int(max_overflows),
                    min_retention=None if from_base else float(min_retention),
                    max_compressions=None if max_compressions is None or limit_from_base else int(max_compressions),
                    space=space, points=int(points), rounds=int(rounds), briefer=str(briefer),
                    limit_from_base=bool(limit_from_base))


def render(current: str, history: History, knobs: Knobs, labels_: list[str],
          histories: dict[str, Callable[[], History]], *, simulated: Run | None = None) -> None:
    """Auto-tune over ``labels_``: the button, then the winner, its changed knobs, each history, YAML and front.
    ``simulated``: the Sweep tab's replay of ``history`` (the simulated briefer's), reused for its ranges."""
    from workbench.explore.sweep import sweep
    from workbench.explore.tune import Constraints, history_rows, score_config, tune

    st.subheader("Auto-tune")
    st.markdown(f"Search the knobs for the cheapest config that meets the constraints on "
                f"{counted(len(labels_), 'history', 'histories')} (those chosen above, else the current one); "
                "the other knobs stay as in the sidebar. Offline.")
    loaded = [history if label == current else histories[label]() for label in labels_]
    form = _tune_controls([simulated if h is history and simulated is not None
                           else runs.replay(h.digest, knobs, "simulated", h) for h in loaded])
    again = st.session_state.pop("tune_again", False)
    if (st.button("Run auto-tune", type="primary", key="tune_go", disabled=not form.space) or again) and form.space:
        briefer = runs.briefer_of(form.briefer)
        bar = st.progress(0.0, text="scoring the sidebar's config…")
        # One replay of the sidebar's config on each history, read three times: its score under the defaults (the
        # constraints' floor and limit), its score under the constraints, and its row per history. A replay for
        # each reading cost a tune of the long sample 1.1-1.7 of its 14-17 CPU-s (2026-12-03, load 2-6).
        base_runs = sweep(loaded, [knobs], workers=1, briefer=briefer, probes=True)
        before = score_config(base_runs, Constraints(), objective=form.objective)
        constraints = form.constraints(before)

        def progress(done: int, all_runs: int) -> None:
            bar.progress(done / max(1, all_runs), text=f"{done:,} of {all_runs:,} replays (at most)")

        try:
            result = tune(loaded, base=knobs, objective=form.objective, constraints=constraints, space=form.space,
                          points=form.points, rounds=form.rounds, workers=1, progress=progress, briefer=briefer)
        except ValueError as exc:
            bar.empty()
            st.error(literal(exc))
            return
        bar.progress(1.0, text=f"{counted(result.runs.height, 'replay')} in {result.seconds:.1f} s")
        current_score = score_config(base_runs, constraints, objective=form.objective)
        st.session_state[TUNE] = {"result": result, "current": current_score, "base": knobs, "labels": labels_,
                                  "base_rows": history_rows(base_runs)}
    found = st.session_state.get(TUNE)
    if found is not None:
        _tune_result(found, knobs, labels_)


# The winner's cards: (label, column, lower is better); the labels are METRIC_SPECS' short ones where a metric has one.
WINNER_CARDS = (
    (METRIC_SPECS["tokens_per_task"].short, "tokens_per_task", True),
    (METRIC_SPECS["dollars_per_task"].short, "dollars_per_task", True),
    ("fact retention", "retention", False),
    (METRIC_SPECS["overflows"].short, "overflows", True),
    (f"max {METRIC_SPECS['compressions'].short}", "max_compressions", True),
    (METRIC_SPECS["peak_ratio"].short, "max_peak_ratio", True),
)


def _tune_result(found: dict[str, Any], knobs: Knobs, labels_: list[str]) -> None:
    from workbench.knobs.command import changed_knobs

    result, current = found["result"], found["current"]
    trials = result.trials
    tuned_on = len(found["labels"])
    who = f"{result.briefer} briefer" + (": no briefing text, kept messages only" if result.briefer == "simulated"
                                         else "")
    limit = result.constraints.max_compressions
    compactions = "" if limit is None else f"; at most {counted(limit, 'compaction')} on any history"
    st.caption(f"Tried {counted(trials.height, 'config')} × {counted(tuned_on, 'history', 'histories')} in "
               f"{result.seconds:.1f} s: {int(trials['feasible'].sum()):,} met the constraints "
               f"(fact retention ≥ {result.constraints.min_retention:.0%}, {who}; at most "
               f"{result.constraints.max_overflows:,} overflows{compactions}), {result.front.height:,} on the Pareto "
               "front.")
    if found["labels"] != labels_ or (found["base"] != knobs and result.best != knobs):
        st.info("The sidebar or the histories changed since this tune ran: run it again to tune for them.")
    if result.best is None:
        row = trials.sort(["violation", "objective"]).row(0, named=True)
        st.warning(f"No config met the constraints. The closest: {row['overflows']:,} overflows, fact retention "
                   f"{row['retention']:.1%}, at most {counted(row['max_compressions'], 'compaction')}. Loosen the "
                   "constraints or search more knobs.")
    else:
        row = result.best_row or {}
        sidebar = st.session_state.get("briefer", "simulated")
        other = (f", not the {sidebar} one the sidebar runs" + (", which writes no text" if sidebar == "simulated"
                 else "")) if sidebar != result.briefer else ", as in the sidebar"
        st.markdown(f"**Winner** (Δ against the sidebar's knobs when the tune ran; fact retention scored by the "
                    f"{who}{other})")
        # Three cards a row: six in one row cut labels and values at 1280 px ("fact reten…", "92.…").
        cards = WINNER_CARDS
        for start in range(0, len(cards), 3):
            for col, (label, name, lower) in zip(st.columns(3), cards[start:start + 3], strict=True):
                d = row[name] - current[name]
                col.metric(label, _tune_value(name, row[name]), _tune_delta(name, d) if d else None,
                           delta_color="inverse" if lower else "normal", border=True,
                           help=f"fact retention by the {who}" if name == "retention" else None)
        for edge in result.edges():
            lo, hi = edge.widened
            st.warning(edge.describe(), icon="↔️")
            st.button(f"Widen to {lo:g}–{hi:g} and run again", key=f"tune_widen_{edge.knob}", on_click=_widen,
                      args=(edge.knob, lo, hi))
        for edge in result.held_edges():  # on the end of a range, but a wider one would find no better winner
            st.caption(edge.describe())
        changed = changed_knobs(result.best, knobs)
        if changed:
            st.dataframe({"knob": [labels.knob_title(n) for n in changed], "name": list(changed),
                          "sidebar": [str(getattr(knobs, n)) for n in changed],
                          "winner": [str(v) for v in changed.values()]}, hide_index=True, key="tune_changed")
        else:
            st.success("The sidebar holds the winner.")
        st.caption("The winner on each history, the sidebar's config below it (the mean above hides histories that "
                   "never compress)")
        _history_table(_with_base(result.per_history(), found.get("base_rows")), "tune_histories",
                       briefer=result.briefer)
        text = result.best_yaml()
        c1, c2 = st.columns(2)
        c1.download_button("Download the winner's YAML", text, file_name="tuned_knobs.yaml",
                           mime="application/x-yaml", key="tune_download", on_click="ignore", width="stretch")
        c2.button("Load the winner into the sidebar", key="tune_load", on_click=_queue_winner, args=(text,),
                  disabled=not changed, width="stretch")
    show(plots.pareto_figure(result), "tune_pareto")


def _with_base(winner: pl.DataFrame, base: pl.DataFrame | None) -> pl.DataFrame:
    """The winner's per-history rows, each followed by the sidebar config's row on that history (a ``config``
    column says which): a row each instead of "sidebar: …" columns keeps the table inside a 1280 px screen."""
    order = ["history", "config", "compresses", "compressions", "tokens_per_task", "retention", "overflows",
             "peak_ratio", "dollars_per_task"]
    place = {h: i for i, h in enumerate(winner["history"].to_list())} if winner.height else {}
    parts = [winner.with_columns(pl.lit("winner").alias("config"), pl.lit(0).alias("_side"))]
    if base is not None and base.height and winner.height:
        parts.append(base.filter(pl.col("history").is_in(list(place)))
                     .with_columns(pl.lit("sidebar").alias("config"), pl.lit(1).alias("_side")))
    out = pl.concat([p.select([c for c in [*order, "_side"] if c in p.columns]) for p in parts], how="diagonal_relaxed")
    out = out.with_columns(pl.col("history").replace_strict(place, default=len(place)).alias("_place"))
    return out.sort(["_place", "_side"], maintain_order=True).select([c for c in order if c in out.columns])


def _tune_value(name: str, value: float) -> str:
    from workbench.analysis.compare import compact_number

    if name == "retention":
        return f"{value:.1%}"
    if name == "max_peak_ratio":
        return f"{value:.0%}"
    if name == "dollars_per_task":
        return compact_number(value, dollars=True)
    return compact_number(value)


def _tune_delta(name: str, d: float) -> str:
    from workbench.analysis.compare import format_delta

    if name == "retention":
        return f"{d:+.1%}"
    return format_delta("peak_ratio" if name == "max_peak_ratio" else name, d)
