"""Observation masking (SWE-agent) and the masking + summarization hybrid (The Complexity Trap), scripted.

The agent of ``policy_scripts.agent``: a 250-token task, then steps of a 125-token tool call and a
2,000-token tool result whose stub keeps 30 tokens (1,970 freed). Checks fall after each step (the
tool result at message 2 + 2s, or 3 + 2s with a system message first), so check s is step s.
"""

from __future__ import annotations

import pytest
from conftest import REPO
from policy_scripts import agent, plain

from workbench.history.readers import load_history
from workbench.presets import get_preset
from workbench.replay import simulate

SAMPLES = sorted((REPO / "sample_histories").glob("*.jsonl"))
MASK2 = plain(strategy="observation_masking", mask_last_n_observations=2, trigger_ratio=-1, check_point="step")


def stubbed(run) -> list[tuple[int, str]]:
    return [(e.check, e.detail.split(" (")[0]) for e in run.events if e.kind == "elide"]


def test_every_tool_output_but_the_newest_two_becomes_a_placeholder_step_by_step():
    """Step 2 is the first with three outputs: the oldest is masked, then one more at every step."""
    run = simulate(agent(12), MASK2)
    assert stubbed(run) == [(s, "1 tool outputs stubbed, 1,970 tokens freed") for s in range(2, 12)]
    for s in (0, 1, 2, 5, 11):  # task + calls + the two newest outputs + a stub per older output
        expected = 250 + 125 * (s + 1) + 2_000 * min(s + 1, 2) + 30 * max(s - 1, 0)
        assert run.timeline.row(s, named=True)["total"] == expected, s
    assert run.compressions == () and run.metrics.elisions == 10


def test_the_task_is_never_masked_and_nothing_is_folded():
    """Only tool outputs are observations: the user's task stays whole, no briefing is written."""
    run = simulate(agent(30), MASK2)
    assert run.metrics.compressions == 0 and run.metrics.briefer_calls == 0
    last = run.timeline.row(-1, named=True)
    assert last["briefing"] == 0 and last["boundary"] == 0
    assert last["verbatim"] + last["elided_saved"] == 250 + 2_125 * 30  # everything still there, 28 as stubs
    assert last["elided_saved"] == 1_970 * 28


def test_pinned_tool_outputs_are_not_masked():
    run = simulate(agent(10), MASK2.replace(pin_first_messages=3))  # task, first call and its output
    assert run.timeline.row(-1, named=True)["elided_saved"] == 1_970 * 7  # outputs 1..7 (output 0 pinned)


HYBRID = plain(
    strategy="observation_masking", mask_last_n_observations=10, trigger_ratio=-1, trigger_max_turns=53,
    trigger_at_equal=True, keep_rule="turns", keep_recent_turns=10, pin_first_messages=2,
    briefing_mode="anchored", check_point="step",
)


def test_hybrid_summarizes_the_oldest_43_turns_once_53_are_unsummarized():
    """SWE-agent's summarize_every_n_turns(n=43, keep_last_m_turns=10): at 53 turns the first 43 fold.

    With a system message first, step s ends at message 3 + 2s and step s's call sits at 2 + 2s.
    """
    run = simulate(agent(100, system=True), HYBRID)
    first, second = run.compressions
    assert (first.check_started, first.index_started, first.boundary) == (52, 107, 2 + 2 * 43)
    assert first.kept == 20 and first.pinned == (0, 1)  # 10 turns; system prompt and task stay
    assert (second.check_started, second.boundary) == (95, 2 + 2 * 86)  # 43 more turns: 10 kept + 43 new
    assert first.style == "anchored" and first.summarize
    # Masking goes on between summaries: never more than ten whole outputs in context after step 10.
    assert max(run.timeline["elided_saved"].to_list()[10:]) > 0
    row = run.timeline.row(60, named=True)
    whole = (row["verbatim"] - 125 * 18 - 30 * 8) // 2_000  # 18 calls and 18 outputs since the boundary
    assert whole == 10


@pytest.mark.slow
@pytest.mark.parametrize("name", ["swe_agent", "complexity_trap_hybrid"])
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_both_presets_replay_every_sample_history_and_mask(name, path):
    """On the generated samples (all with tool outputs) masking frees tokens and never raises the peak."""
    history = load_history(path)
    knobs = get_preset(name)
    run = simulate(history, knobs)
    m = run.metrics
    assert m.elisions > 0 and m.peak_tokens < m.baseline_peak_tokens
    assert run.timeline["elided_saved"].max() > 0
    if name == "swe_agent":
        assert m.compressions == 0 and m.briefer_calls == 0


def test_the_turn_clause_fires_for_any_policy():
    """trigger_max_turns is a trigger clause like the others: summarize folds once the span holds more than 5."""
    knobs = plain(strategy="summarize", trigger_ratio=-1, trigger_max_turns=5, keep_rule="turns",
                  keep_recent_turns=2, check_point="step")
    first = simulate(agent(12), knobs).compressions[0]
    assert (first.check_started, first.trigger, first.kept) == (5, "turns", 4)  # 6 turns at step 5; 2 kept


def test_masking_alone_is_not_reported_as_disabled_compression():
    """The SWE-agent preset has no trigger on purpose: no "compression is disabled" warning for it."""
    assert get_preset("swe_agent").warnings() == ()
    assert "compression is disabled" in " ".join(get_preset("swe_agent").replace(strategy="summarize").warnings())
