"""Auto-tune: the winner meets its constraints on a fresh replay, and the Pareto front is non-dominated."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO
from real_histories import real_history_paths

from workbench.briefing.extractive import ExtractiveBriefer
from workbench.cli import main
from workbench.explore.tune import Constraints, check_config, default_space, pareto_mask, retention_floor, tune
from workbench.history.model import History, Message, text_part
from workbench.knobs import Knobs, load_knobs

REAL_CONSTRAINTS = Constraints(max_overflows=0, min_retention=0.12, max_compressions=20)


def long_history(turns: int = 120, chars: int = 6_000) -> History:
    msgs = tuple(
        Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", parts=(text_part(f"{i} " + "y" * chars),))
        for i in range(turns)
    )
    return History(id="long", messages=msgs)


def test_pareto_front_keeps_only_points_nothing_beats():
    cost = np.array([1.0, 2.0, 3.0, 2.0, 1.0])
    retention = np.array([0.1, 0.5, 0.9, 0.4, 0.1])
    overflows = np.array([0, 0, 0, 0, 3])
    # 3 (cost 2, ret 0.4) is beaten by 1; 4 (overflows) is beaten by 0.
    assert pareto_mask(cost, retention, overflows).tolist() == [True, True, True, False, False]


@pytest.mark.slow
def test_a_tune_over_the_real_histories_finds_the_cheapest_feasible_winner_on_a_non_dominated_front():
    """One tune over the real histories (2 processes): replaying the winner from scratch gives the same score and meets
    every constraint; it is the cheapest feasible config tried; the refinement rounds ran and the Pareto front is
    non-dominated. One test, not three sharing a fixture: xdist handed them to different workers, and each worker
    ran the tune again (pytest-dev/pytest-xdist#1386: loadgroup does not group under pytest 9.2)."""
    real_result = tune(real_history_paths(), base=Knobs(), constraints=REAL_CONSTRAINTS, workers=2)
    assert real_result.best is not None
    fresh = check_config(real_result.best, real_history_paths(), REAL_CONSTRAINTS)
    assert fresh["overflows"] <= REAL_CONSTRAINTS.max_overflows
    assert fresh["retention"] >= REAL_CONSTRAINTS.min_retention
    assert fresh["max_compressions"] <= REAL_CONSTRAINTS.max_compressions
    assert fresh["feasible"]
    assert fresh["objective"] == pytest.approx(real_result.best_row["objective"])

    feasible = real_result.trials.filter(real_result.trials["feasible"])
    assert real_result.best_row["objective"] == feasible["objective"].min()
    assert real_result.best_row["pareto"] or feasible.height > 0

    trials = real_result.trials
    assert set(trials["round"].unique()) == {0, 1, 2}
    front = real_result.front
    assert front.height >= 1
    for row in front.iter_rows(named=True):
        better = trials.filter(
            (trials["objective"] <= row["objective"]) & (trials["retention"] >= row["retention"])
            & (trials["overflows"] <= row["overflows"])
            & ((trials["objective"] < row["objective"]) | (trials["retention"] > row["retention"])
               | (trials["overflows"] < row["overflows"]))
        )
        assert better.height == 0


def test_impossible_constraints_return_no_winner():
    result = tune([long_history()], base=Knobs(context_window_tokens=32_000),
                  constraints=Constraints(min_retention=1.01), points=2, rounds=1, workers=1)
    assert result.best is None
    with pytest.raises(ValueError, match="no config met the constraints"):
        result.best_yaml()


def test_a_compression_limit_steers_the_trigger_up():
    """With at most K compactions allowed, the cheapest low trigger is out and a higher one wins."""
    history = long_history()
    base = Knobs(context_window_tokens=64_000)
    free = tune([history], base=base, space={"trigger_ratio": (0.2, 0.8)}, points=7, rounds=1, workers=1)
    limit = int(free.best_row["max_compressions"]) - 1
    capped = tune([history], base=base, constraints=Constraints(max_compressions=limit),
                  space={"trigger_ratio": (0.2, 0.8)}, points=7, rounds=1, workers=1)
    assert capped.best is not None
    assert capped.best_row["max_compressions"] <= limit
    assert capped.best.trigger_ratio > free.best.trigger_ratio


def test_progress_ends_full_at_the_planned_number_of_runs():
    """One total from the first call (the first grid plus each round's neighbourhoods), reached at the end; a config
    met before counts as done without a replay, so fewer runs than that total are made."""
    seen: list[tuple[int, int]] = []
    result = tune([long_history(60)], base=Knobs(context_window_tokens=32_000), points=2, rounds=1, workers=1,
                  space={"trigger_ratio": (0.4, 0.8), "kept_budget_ratio": (0.1, 0.3)},
                  progress=lambda d, t: seen.append((d, t)))
    planned = 2 * 2 + 3 * 3 ** 2 + 2 * 2  # the 2x2 grid, 3 configs' 3x3 neighbourhoods, 2 steps past each end
    assert seen[-1] == (planned, planned) and {t for _, t in seen} == {planned}
    assert result.runs.height < planned
    assert all(d <= t for d, t in seen)


def test_an_unknown_knob_in_the_space_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown knob trigger"):
        tune([long_history(10)], space={"trigger": (0.1, 0.2)}, workers=1)
    with pytest.raises(ValueError, match="kept_budget_ratio range"):
        tune([long_history(10)], space={"kept_budget_ratio": (0.1, 2.0)}, workers=1)


@pytest.mark.slow
def test_cli_tune_prints_the_winner_and_writes_its_yaml(tmp_path, capsys):
    out = tmp_path / "winner.yaml"
    paths = [str(p) for p in real_history_paths()]
    code = main(["tune", *paths, "--min-retention", "0.12", "--max-compressions", "20", "--points", "3",
                 "--rounds", "1", "--workers", "2", "--out", str(out), "--trials", str(tmp_path / "t.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "winner" in captured.out and "overflows 0" in captured.out
    knobs = load_knobs(out.read_text(), source=str(out))
    fresh = check_config(knobs, paths, REAL_CONSTRAINTS, briefer=ExtractiveBriefer())  # the CLI's default briefer
    assert fresh["feasible"]
    assert "runs" in captured.err  # the progress bar
    assert "(extractive briefer)" in captured.out and "the winner on each history" in captured.out


def test_cli_tune_defaults_to_a_retention_floor_from_the_base_config(tmp_path, capsys):
    """Without --min-retention the floor is the base config's retention less 5 points, and the winner meets it."""
    from workbench.history.writers import dump_canonical_jsonl

    path = dump_canonical_jsonl(long_history(60), tmp_path / "h.jsonl")
    code = main(["tune", str(path), "--set", "context_window_tokens=64000", "--points", "3", "--rounds", "1",
                 "--workers", "1", "--no-progress", "--out", str(tmp_path / "w.yaml")])
    out = capsys.readouterr().out
    assert code == 0, out
    base = check_config(Knobs(context_window_tokens=64_000), [path], Constraints(), briefer=ExtractiveBriefer())
    floor = retention_floor(base["retention"])
    assert f"min fact retention {floor:.2f}" in out
    winner = load_knobs((tmp_path / "w.yaml").read_text())
    assert check_config(winner, [path], Constraints(), briefer=ExtractiveBriefer())["retention"] >= floor


def test_the_default_space_is_where_the_knobs_change_the_histories(long_history):
    """On the long sample the stagewise trigger only binds below 0.5 (the 100k cap of a 200k window) and the
    kept budget only below what the 10 floor messages hold, so those are the searched ranges."""
    space = default_space([long_history], Knobs())
    assert space["trigger_ratio"][1] == pytest.approx(0.5)
    assert space["kept_budget_ratio"][1] < 0.1
    assert set(space) == {"trigger_ratio", "kept_budget_ratio", "target_briefing_chars"}


def test_a_winner_on_the_edge_of_its_range_is_reported_with_a_wider_range():
    """Cheapest is the lowest trigger here, so the winner sits on the low end: edges() says so and offers more."""
    history = long_history()
    result = tune([history], base=Knobs(context_window_tokens=64_000), space={"trigger_ratio": (0.4, 0.8)},
                  points=3, rounds=1, workers=1)
    assert result.best.trigger_ratio == 0.4
    (edge,) = result.edges()
    assert (edge.knob, edge.side, edge.widened) == ("trigger_ratio", "low", (0.2, 0.8))
    assert "low end" in edge.describe()
    rows = result.per_history()
    assert rows["history"].to_list() == ["long"] and rows["compresses"].to_list() == [True]
    inside = tune([history], base=Knobs(context_window_tokens=64_000), space={"trigger_ratio": (0.0, 0.8)},
                  constraints=Constraints(max_compressions=int(result.best_row["max_compressions"]) - 1),
                  points=5, rounds=0, workers=1)
    assert all(e.side != "low" for e in inside.edges())  # 0 is the knob's own end: nothing to widen


def test_retention_floor_is_five_points_under_the_base():
    assert retention_floor(0.949) == pytest.approx(0.89)
    assert retention_floor(0.03) == 0.0


def test_one_replay_scored_under_two_constraints_is_two_fresh_checks():
    """``score_config`` over one sweep of a config gives what ``check_config`` gives replaying it afresh, under any
    constraints: the app's tune panel replays the sidebar's config once and scores it twice."""
    from workbench.explore.sweep import sweep
    from workbench.explore.tune import score_config

    knobs = Knobs(context_window_tokens=32_000)
    histories = [long_history(40), History(id="longer", messages=long_history(60).messages)]
    runs = sweep(histories, [knobs], workers=1, probes=True)
    for constraints in (Constraints(), Constraints(min_retention=0.5, max_compressions=1)):
        assert score_config(runs, constraints) == check_config(knobs, histories, constraints)
    with pytest.raises(ValueError, match="no history could be read"):
        score_config(runs.clear(), Constraints())


def test_cli_tune_exits_1_when_nothing_is_feasible(tmp_path, capsys):
    from workbench.history.writers import dump_canonical_jsonl

    path = dump_canonical_jsonl(long_history(30), tmp_path / "h.jsonl")
    code = main(["tune", str(path), "--set", "context_window_tokens=32000", "--max-compressions", "0",
                 "--points", "2", "--rounds", "0", "--workers", "1", "--no-progress"])
    assert code == 1
    assert "no config met the constraints" in capsys.readouterr().out


def test_cli_sweep_over_several_histories_shows_the_cheapest_config_on_each(capsys):
    """A mean over a history that never compresses hides it: the sweep prints the cheapest config per history."""
    samples = REPO / "sample_histories"
    code = main(["sweep", str(samples / "short.jsonl"), str(samples / "tool_heavy.jsonl"), "--grid",
                 "trigger_ratio=0.6,0.7", "--workers", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "on each history" in out and "never compresses" in out
    assert "1 of 2 histories never compress" in out


# -- issue 21, item 6: no degenerate winner -------------------------------------------------------------------


def test_the_default_compaction_limit_is_twice_the_base_configs():
    from workbench.explore.tune import compaction_limit

    assert compaction_limit(18) == 36 and compaction_limit(1) == 2
    assert compaction_limit(0) is None  # a base that never compacts sets no limit


def test_cli_tune_limits_compactions_to_twice_the_base_configs_by_default(tmp_path, capsys):
    """The cheapest trigger here is the lowest, compacting many times more than the base config; by default the
    winner compacts at most twice as often as the base, the line says so, and --max-compressions none lifts it."""
    from workbench.history.writers import dump_canonical_jsonl
    from workbench.replay import simulate

    history = long_history(160)
    path = dump_canonical_jsonl(history, tmp_path / "h.jsonl")
    base = Knobs(context_window_tokens=64_000)
    base_compactions = simulate(history, base, ExtractiveBriefer()).metrics.compressions
    args = ["tune", str(path), "--set", "context_window_tokens=64000", "--space", "trigger_ratio=0.05:0.65",
            "--min-retention", "0", "--points", "5", "--rounds", "1", "--workers", "1", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "w.yaml")]) == 0
    out = capsys.readouterr().out
    limit = 2 * base_compactions
    assert f"max compactions {limit}: twice the base config's {base_compactions}" in out
    winner = load_knobs((tmp_path / "w.yaml").read_text())
    assert simulate(history, winner, ExtractiveBriefer()).metrics.compressions <= limit

    assert main([*args, "--max-compressions", "none", "--out", str(tmp_path / "free.yaml")]) == 0
    capsys.readouterr()
    free = load_knobs((tmp_path / "free.yaml").read_text())
    assert simulate(history, free, ExtractiveBriefer()).metrics.compressions > limit  # the default mattered


def test_a_wider_range_is_suggested_only_where_the_constraints_allow_a_better_winner():
    """On the low end of the trigger range: with no limit a lower trigger is cheaper, so widening is suggested; with
    the winner's own compaction count as the limit, one step lower compacts more, so it is not, and it says why."""
    history = long_history()
    base = Knobs(context_window_tokens=64_000)
    free = tune([history], base=base, space={"trigger_ratio": (0.4, 0.8)}, points=3, rounds=1, workers=1)
    assert free.best.trigger_ratio == 0.4 and [e.knob for e in free.edges()] == ["trigger_ratio"]
    limit = int(free.best_row["max_compressions"])
    held = tune([history], base=base, space={"trigger_ratio": (0.4, 0.8)}, points=3, rounds=1, workers=1,
                constraints=Constraints(max_compressions=limit))
    assert held.best.trigger_ratio == 0.4
    assert held.edges() == []
    (edge,) = held.held_edges()
    assert edge.knob == "trigger_ratio" and f"limit of {limit}" in edge.describe()
    assert "try" not in edge.describe()
