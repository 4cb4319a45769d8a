"""The replay (workbench/replay/), pinned on scripted histories: where compression fires, where the boundary falls, what it costs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted import sized_history, tool_history, uniform_history

from workbench.briefing.base import BriefRecord, BriefRequest
from workbench.history.model import History, Message, text_part
from workbench.knobs import Knobs
from workbench.replay import check_indices, simulate

# 4,000-char messages estimate ceil((4000 + 400) / 4) = 1,100 tokens each. At a 32k window the trigger
# is 0.65 × 32,000 = 20,800 (strict >) and the kept budget 6,400 tokens (5 messages), floor 10.
K32 = Knobs(context_window_tokens=32_000, check_point="message")


def fired_at(run) -> list[int]:
    return [c.index_started for c in run.compressions]


def test_first_compression_fires_on_the_nineteenth_message_and_keeps_five():
    """19 × 1,100 = 20,900 > 20,800 is the first context above the trigger; the budget keeps 5 messages."""
    run = simulate(uniform_history(60), K32)
    first = run.compressions[0]
    assert (first.index_started, first.boundary, first.kept, first.outcome) == (18, 14, 5, "budget")
    assert first.tokens_before == 20_900
    # 7 user chunks of 4,013 chars and 7 assistant chunks of 4,023, joined by 13 newlines, × 0.12 → 6,752 chars.
    assert first.new_material_chars == 7 * 4_013 + 7 * 4_023 + 13
    assert first.briefing_chars == 6_752
    assert first.briefing_tokens == 1_688
    assert first.tokens_after == 1_688 + 5 * 1_100
    assert first.bucket == "none"


def test_chain_fires_at_fixed_steps_and_the_briefing_grows():
    """Each later compression carries the previous briefing, so the chain grows while there is room."""
    run = simulate(uniform_history(60), K32)
    assert fired_at(run) == [18, 31, 42, 52]
    sizes = [c.briefing_chars for c in run.compressions]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert [c.bucket for c in run.compressions] == ["none", "lt60", "lt60", "60to85"]
    assert [c.previous_chars for c in run.compressions[1:]] == sizes[:-1]
    assert run.metrics.compressions == 4
    assert run.metrics.peak_tokens == max(c.tokens_before for c in run.compressions)


def test_threshold_minus_one_never_compresses_and_overflows():
    run = simulate(uniform_history(40), K32.replace(trigger_ratio=-1))
    assert run.compressions == ()
    # 30 × 1,100 = 33,000 > 32,000: checks 29..39 overflow in one run.
    assert (run.metrics.overflows, run.metrics.overflow_events) == (11, 1)
    assert run.metrics.peak_tokens == run.metrics.baseline_peak_tokens == 44_000


def test_hard_cap_binds_on_large_windows():
    """At 1M tokens the trigger is min(0.65 M, 100,000): 91 messages of 1,100 tokens cross it."""
    run = simulate(uniform_history(120), Knobs(context_window_tokens=1_000_000, check_point="message"))
    assert run.compressions[0].index_started == 90  # 91 × 1,100 = 100,100 > 100,000
    assert run.compressions[0].outcome == "floor"  # 10 messages fit in 40,000 tokens


def test_latency_lands_later_and_context_keeps_growing():
    run = simulate(uniform_history(40), K32.replace(latency_steps=3))
    first = run.compressions[0]
    assert (first.check_started, first.check_landed) == (18, 21)
    row = run.timeline.filter(run.timeline["step"] == 21).row(0, named=True)
    assert row["total"] == 22 * 1_100 and "compression-landed" in row["events"]
    after = run.timeline.filter(run.timeline["step"] == 22).row(0, named=True)
    assert after["total"] == first.briefing_tokens + (22 - 14 + 1) * 1_100


def test_no_second_compression_while_one_is_in_flight():
    run = simulate(uniform_history(60), K32.replace(latency_steps=5))
    starts = [c.check_started for c in run.compressions]
    lands = [c.check_landed for c in run.compressions]
    assert all(s > landed for s, landed in zip(starts[1:], lands[:-1], strict=False))


class FailingBriefer:
    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: BriefRequest) -> BriefRecord:
        self.calls += 1
        return BriefRecord(text=None, chars=0, tokens=0, model="x", failed=True, error="all models failed")


def test_failed_compression_leaves_history_uncompressed_and_retries_next_step():
    briefer = FailingBriefer()
    run = simulate(uniform_history(30), K32, briefer)
    assert run.metrics.compressions == 0
    assert run.metrics.failed_compressions == briefer.calls == 30 - 18
    assert run.metrics.peak_tokens == run.metrics.baseline_peak_tokens


def test_step_checks_after_assistant_and_its_tool_results():
    h = tool_history(3)
    # u0, a0, t0, a1, t1, a2, t2: a step ends after each tool result.
    assert check_indices(h, "step").tolist() == [2, 4, 6]
    assert check_indices(h, "message").tolist() == list(range(7))


def test_system_prompt_is_always_in_context():
    run = simulate(uniform_history(5), K32.replace(hidden_prefix_tokens=3_000))
    assert run.timeline["system"].to_list() == [3_000] * 5
    assert run.timeline["total"].to_list() == [3_000 + 1_100 * (i + 1) for i in range(5)]


def test_tokens_per_task_counts_each_agent_call_and_the_briefer():
    h = uniform_history(4)  # u a u a: two agent calls
    run = simulate(h, K32)
    # call 1 reads message 0 and writes message 1; call 2 reads 0..2 and writes 3.
    assert run.metrics.agent_input_tokens == 1_100 + 3 * 1_100
    assert run.metrics.agent_output_tokens == 2 * 1_100
    assert run.metrics.tokens_per_task == 6 * 1_100
    assert run.metrics.baseline_tokens_per_task == 6 * 1_100


def test_compaction_lowers_tokens_per_task_on_a_long_history():
    run = simulate(uniform_history(200), K32)
    assert run.metrics.tokens_per_task < run.metrics.baseline_tokens_per_task / 3


def test_single_message_larger_than_budget_keeps_exactly_one():
    h = sized_history([4_000] * 30 + [200_000])
    run = simulate(h, K32.replace(check_point="message"))
    last = run.compressions[-1]
    assert last.outcome == "single-message-exceeds" and last.kept == 1


def test_deterministic():
    a = simulate(uniform_history(80), K32)
    b = simulate(uniform_history(80), K32)
    assert a.timeline.equals(b.timeline)
    assert a.metrics == b.metrics


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 30_000), min_size=1, max_size=120),
    ratio=st.floats(0.3, 0.9),
    latency=st.integers(0, 3),
)
def test_after_a_landing_context_is_below_the_window_when_messages_fit(sizes, ratio, latency):
    """With every message far below the kept budget, a landed compression never leaves context above the window."""
    knobs = K32.replace(trigger_ratio=ratio, latency_steps=latency)
    run = simulate(sized_history(sizes), knobs)
    for c in run.compressions:
        if c.status == "landed":
            assert c.tokens_after <= knobs.context_window_tokens
    total = run.timeline["total"].to_numpy()
    parts = run.timeline.select(["system", "briefing", "pinned", "verbatim"]).to_numpy().sum(axis=1)
    assert np.array_equal(total, parts)


def test_a_20mb_tool_output_replays():
    big = Message(id="big", role="tool", parts=(text_part("z" * 20_000_000),))
    msgs = uniform_history(20).messages + (big,) + uniform_history(5).messages
    run = simulate(History(id="big", messages=msgs), Knobs(context_window_tokens=200_000))
    assert run.metrics.overflows >= 1
    assert run.metrics.peak_tokens > 5_000_000


@pytest.mark.slow  # 4-6 s: a scale check
def test_a_100k_message_history_replays():
    h = uniform_history(100_000, chars=40)
    run = simulate(h, Knobs(context_window_tokens=128_000, check_point="message"))
    assert run.metrics.messages == 100_000
    assert run.metrics.compressions > 100
    assert run.metrics.overflows == 0


def test_knob_change_does_not_recount():
    from workbench.counting.tokens import CountCache

    cache = CountCache()
    h = uniform_history(50)
    simulate(h, K32, cache=cache)
    table = cache.tables[h.digest]
    chars_before = table.content_chars
    simulate(h, K32.replace(chars_per_token=3.0, overhead_chars_per_message=100), cache=cache)
    assert cache.tables[h.digest].content_chars is chars_before


def test_run_json_has_the_four_sections():
    run = simulate(uniform_history(30), K32)
    data = run.to_json_dict()
    assert set(data) >= {"knobs", "metrics", "compressions", "timeline"}
    assert data["knobs"]["context_window_tokens"] == 32_000
    assert len(data["timeline"]) == 30
    assert dataclasses.asdict(run.metrics) == data["metrics"]
