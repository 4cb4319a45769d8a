"""Auto-tune: the winner meets its constraints on a fresh replay, and the Pareto front is non-dominated."""

from __future__ import annotations

import numpy as np
import pytest
from real_histories import real_history_paths

from workbench.cli import main
from workbench.explore.tune import Constraints, check_config, pareto_mask, tune
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


@pytest.fixture(scope="module")
def real_result():
    """One tune over the real histories (2 processes), shared by the tests below."""
    return tune(real_history_paths(), base=Knobs(), constraints=REAL_CONSTRAINTS, workers=2)


def test_the_winner_meets_its_constraints_on_a_fresh_replay(real_result):
    """Replaying the winner from scratch gives the same score, and it meets every constraint."""
    assert real_result.best is not None
    fresh = check_config(real_result.best, real_history_paths(), REAL_CONSTRAINTS)
    assert fresh["overflows"] <= REAL_CONSTRAINTS.max_overflows
    assert fresh["retention"] >= REAL_CONSTRAINTS.min_retention
    assert fresh["max_compressions"] <= REAL_CONSTRAINTS.max_compressions
    assert fresh["feasible"]
    assert fresh["objective"] == pytest.approx(real_result.best_row["objective"])


def test_the_winner_is_the_cheapest_feasible_config_tried(real_result):
    feasible = real_result.trials.filter(real_result.trials["feasible"])
    assert real_result.best_row["objective"] == feasible["objective"].min()
    assert real_result.best_row["pareto"] or feasible.height > 0


def test_refinement_rounds_try_new_configs_and_the_front_is_non_dominated(real_result):
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


def test_progress_ends_at_the_number_of_runs():
    seen: list[tuple[int, int]] = []
    result = tune([long_history(60)], base=Knobs(context_window_tokens=32_000), points=2, rounds=1, workers=1,
                  space={"trigger_ratio": (0.4, 0.8), "kept_budget_ratio": (0.1, 0.3)},
                  progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (result.runs.height, result.runs.height)
    assert all(d <= t for d, t in seen)


def test_an_unknown_knob_in_the_space_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown knob trigger"):
        tune([long_history(10)], space={"trigger": (0.1, 0.2)}, workers=1)
    with pytest.raises(ValueError, match="kept_budget_ratio range"):
        tune([long_history(10)], space={"kept_budget_ratio": (0.1, 2.0)}, workers=1)


def test_cli_tune_prints_the_winner_and_writes_its_yaml(tmp_path, capsys):
    out = tmp_path / "winner.yaml"
    paths = [str(p) for p in real_history_paths()]
    code = main(["tune", *paths, "--min-retention", "0.12", "--max-compressions", "20", "--points", "3",
                 "--rounds", "1", "--workers", "2", "--out", str(out), "--trials", str(tmp_path / "t.csv")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "winner" in captured.out and "overflows 0" in captured.out
    knobs = load_knobs(out.read_text(), source=str(out))
    fresh = check_config(knobs, paths, REAL_CONSTRAINTS)
    assert fresh["feasible"]
    assert "runs" in captured.err  # the progress bar


def test_cli_tune_exits_1_when_nothing_is_feasible(tmp_path, capsys):
    from workbench.history.writers import dump_canonical_jsonl

    path = dump_canonical_jsonl(long_history(30), tmp_path / "h.jsonl")
    code = main(["tune", str(path), "--set", "context_window_tokens=32000", "--max-compressions", "0",
                 "--points", "2", "--rounds", "0", "--workers", "1", "--no-progress"])
    assert code == 1
    assert "no config met the constraints" in capsys.readouterr().out
