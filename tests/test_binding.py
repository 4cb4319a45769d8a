"""What binds: the engine reports the effective trigger and kept budget, why each boundary stopped, which
knobs currently do nothing (and those claims hold when the knob is moved), and where each knob matters."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from workbench.analysis.binding import knob_notes, live_range, live_ranges
from workbench.analysis.health import run_findings
from workbench.history.readers import load_history
from workbench.knobs import Knobs
from workbench.replay import simulate


@pytest.fixture
def long(long_history):
    return long_history


def same(a, b) -> bool:
    return a.metrics == b.metrics


def test_stagewise_defaults_report_the_hard_cap_and_the_floor(long_run):
    """On the long sample the 100k cap sets the trigger (0.65 × 200k = 130k does not) and every walk stops at
    the 10-message floor, well inside the 40k budget."""
    run = long_run
    lim = run.limits
    assert (lim.trigger.tokens, lim.trigger.binds) == (100_000, "cap")
    assert lim.trigger.term("ratio").tokens == pytest.approx(130_000)
    assert (lim.kept.tokens, lim.kept.binds, lim.floor_messages) == (40_000, "ratio", 10)
    assert "hard cap" in lim.trigger.describe() and "does not bind" in lim.trigger.describe()
    assert run.stops() == {"floor": run.metrics.compressions}
    for c in run.compressions:
        assert (c.trigger_tokens, c.trigger_binds, c.kept_budget_tokens, c.budget_binds) == (100_000, "cap", 40_000,
                                                                                            "ratio")
        assert c.stop == "floor" and c.kept == 10 and c.floor_tokens == c.kept_tokens < 40_000
        assert c.fit_messages > 10  # the budget would hold more: the floor stopped the walk
    assert "stop" in run.compressions_frame().columns
    assert run.to_json_dict(timeline=False)["limits"]["trigger"]["binds"] == "cap"


def test_the_issue_s_dead_knobs_are_named_and_really_dead(long, long_run):
    """trigger_ratio 0.65 → 0.80 and kept_budget_ratio 0.10 → 0.45 change nothing, and the notes say why;
    the values the notes point to do change the run."""
    base = long_run
    notes = knob_notes(base)
    assert "hard cap binds" in notes["trigger_ratio"].text and "0.50" in notes["trigger_ratio"].text
    assert "floor" in notes["kept_budget_ratio"].text
    assert "trigger_hard_cap_tokens" not in notes and "min_kept_messages" not in notes
    assert same(base, simulate(long, Knobs(trigger_ratio=0.8)))
    assert same(simulate(long, Knobs(kept_budget_ratio=0.1)), simulate(long, Knobs(kept_budget_ratio=0.45)))
    assert not same(base, simulate(long, Knobs(trigger_ratio=0.45)))  # below 0.50 the ratio binds
    most = max(c.floor_tokens for c in base.compressions)
    assert not same(base, simulate(long, Knobs(kept_budget_ratio=0.5 * most / 200_000)))


@pytest.mark.slow
@pytest.mark.parametrize("changes", [
    {"trigger_ratio": 0.4},                                  # ratio binds: the cap is dead
    {"kept_budget_ratio": 0.02},                             # budget stops: the floor is dead
    {"context_window_tokens": 1_000_000},                    # kept cap binds: the kept ratio is dead
    {"min_kept_messages": 3},                                # stagewise raises it to 5
    {"strategy": "summarize"},                               # rules knobs
], ids=["ratio-binds", "budget-stops", "kept-cap-binds", "below-5", "summarize"])
def test_every_inert_claim_holds_when_the_knob_moves(long, changes):
    """For each knob a note calls dead, nudging it (both ways, where legal) leaves every metric unchanged."""
    knobs = Knobs(**changes)
    run = simulate(long, knobs)
    notes = knob_notes(run)
    assert notes
    for name in notes:
        value = getattr(knobs, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        ranged = re.search(r"no effect between ([\d,]+) and ([\d,]+)", notes[name].text)  # a claim for a range
        for factor in (0.97, 1.03):
            moved = type(value)(value * factor) if value else type(value)(1)
            if ranged and not int(ranged[1].replace(",", "")) <= moved <= int(ranged[2].replace(",", "")):
                moved = type(value)((value + int(ranged[1 if factor < 1 else 2].replace(",", ""))) / 2)
            try:
                other = knobs.replace(**{name: moved})
            except ValueError:
                continue
            assert same(run, simulate(long, other)), (name, value, moved, notes[name].text)


def test_rules_policies_say_why_the_tail_starts_where_it_does(long):
    """Budget, count, min-messages and single-message stops of the rules-based tails."""
    assert set(simulate(long, Knobs(strategy="summarize")).stops()) == {"budget"}
    assert set(simulate(long, Knobs(strategy="summarize", keep_rule="messages")).stops()) == {"count"}
    assert set(simulate(long, Knobs(strategy="summarize", keep_rule="messages", keep_recent_messages=2,
                                    keep_min_messages=30)).stops()) == {"min-messages"}
    tiny = simulate(long, Knobs(strategy="summarize", kept_budget_ratio=0.0005))
    assert "single-message" in tiny.stops()
    lim = simulate(long, Knobs(strategy="summarize", trigger_reserve_tokens=150_000)).limits
    assert (lim.trigger.binds, lim.trigger.tokens) == ("reserve", 50_000)
    floor = simulate(long, Knobs(strategy="summarize", kept_budget_floor_tokens=60_000)).limits.kept
    assert (floor.binds, floor.tokens) == ("floor", 60_000)
    assert "min_kept_messages" in knob_notes(simulate(long, Knobs(strategy="summarize")))


def test_staged_soft_threshold_above_the_trigger_is_called_out(long):
    lim = simulate(long, Knobs(strategy="staged")).limits
    assert any("never fires first" in c for c in lim.clauses)
    assert lim.soft_tokens == pytest.approx(120_000)


def test_live_ranges_are_where_the_output_varies(long, long_run):
    """Five values across each default range give different runs (the old ±50% ranges were flat)."""
    import numpy as np

    run = long_run
    for name in ("trigger_ratio", "kept_budget_ratio", "min_kept_messages"):
        lo, hi = live_range(run, name)
        values = np.linspace(lo, hi, 5)
        kind = type(getattr(Knobs(), name))
        tokens = {simulate(long, Knobs(**{name: kind(v)})).metrics.tokens_per_task for v in values}
        assert len(tokens) >= 4, (name, lo, hi, tokens)
    flat = {simulate(long, Knobs(kept_budget_ratio=v)).metrics.tokens_per_task for v in (0.1, 0.2, 0.3)}
    assert len(flat) == 1
    assert live_range(run, "trigger_ratio")[1] == pytest.approx(0.5)  # where the cap takes over
    assert live_ranges([run], ["trigger_ratio"]) == {"trigger_ratio": live_range(run, "trigger_ratio")}


def test_a_history_that_never_compresses_says_so():
    short = load_history(REPO / "sample_histories" / "short.jsonl")
    notes = knob_notes(simulate(short, Knobs()))
    assert "nothing compresses" in notes["kept_budget_ratio"].text
    assert "would compress below" in notes["trigger_ratio"].text


@pytest.mark.slow
def test_thrash_ineffective_and_a_large_briefing_target_are_findings(long, long_run):
    """A 30k cap under a 100-message floor compacts at almost every check; a 16k window holds a 47% briefing."""
    bad = simulate(long, Knobs(trigger_hard_cap_tokens=30_000, min_kept_messages=100))
    kinds = {f.kind: f.text for f in run_findings(bad)}
    assert bad.metrics.thrash_events > 0.9 * bad.metrics.compressions
    assert f"{bad.metrics.compressions:,} compactions in 1,100 checks" in kinds["thrash"]
    assert "ineffective" in kinds
    small = {f.kind: f.text for f in run_findings(simulate(long, Knobs(context_window_tokens=16_000)))}
    assert "47% of the 16,000-token window" in small["briefing-target"]
    assert run_findings(long_run) == ()
