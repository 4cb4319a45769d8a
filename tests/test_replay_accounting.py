"""The replay's accounting (workbench/replay/accounting.py), derived after the loop from its record of states.

Six messages of 100 tokens (user, assistant, ...), so the agent calls at messages 1, 3 and 5, with a
50-token system prompt: the numbers below are worked out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from scripted import tool_history

from workbench.briefing.simulated import SimulatedBriefer
from workbench.counting.prices import Prices
from workbench.counting.tokens import CountCache
from workbench.knobs import Knobs
from workbench.policies import get_policy
from workbench.replay.accounting import CallLog, agent_calls
from workbench.replay.context import ContextSums, InContext, PrefixAsOf
from workbench.replay.loop import _Replay

TOKENS = np.full(6, 100, dtype=np.int64)
ASSISTANT = np.array([1, 3, 5], dtype=np.int64)
PRICES = Prices(
    model="m", input_per_token=1e-6, output_per_token=2e-6, cache_read_per_token=1e-7, cache_write_per_token=3e-6
)


def _sums() -> ContextSums:
    return ContextSums(TOKENS, np.arange(6, dtype=np.int64))


def test_calls_between_events_read_what_the_previous_call_sent():
    """Call 1 reads only the system prompt; call 3 reads call 1's input and output (250) and writes 100."""
    sums, log = _sums(), CallLog()
    log.sent(3, InContext(system_tokens=50), sums.elisions)
    calls = agent_calls(log, sums, ASSISTANT, 50, PRICES)
    assert (calls.calls, calls.input_tokens, calls.output_tokens) == (2, 150 + 350, 200)
    assert (calls.cache_read_tokens, calls.cache_write_tokens) == (50 + 250, 100 + 100)
    assert calls.dollars == pytest.approx(500 * 1e-6 + 200 * 2e-6)
    assert calls.dollars_cached == pytest.approx(300 * 1e-7 + 200 * 3e-6 + 200 * 2e-6)


def test_an_elision_keeps_the_cache_before_its_first_stub_and_the_next_call_sees_the_stub():
    """Stubbing message 2 (60 tokens freed) leaves 50 + 200 cached; call 5 then sends 490 and writes 240."""
    sums, log, state = _sums(), CallLog(), InContext(system_tokens=50)
    log.sent(3, state, sums.elisions)
    log.cache_kept(state.base_tokens + sums.between(0, 2))
    freeable = np.zeros(6, dtype=np.int64)
    freeable[2] = 60
    assert sums.stub([2], freeable) == 60
    log.sent(5, state, sums.elisions)
    calls = agent_calls(log, sums, ASSISTANT, 50, PRICES)
    assert calls.input_tokens == 150 + 350 + 490  # the first two calls were sent before the stub
    assert (calls.cache_read_tokens, calls.cache_write_tokens) == (50 + 250 + 250, 100 + 100 + 240)


def test_a_landing_resets_the_cache_to_the_system_prompt():
    """After a briefing lands, the next call reads only the system prompt, whatever an elision kept before."""
    sums, log = _sums(), CallLog()
    log.sent(3, InContext(system_tokens=50), sums.elisions)
    log.cache_kept(250)
    log.cache_reset()
    log.sent(5, InContext(system_tokens=50, boundary=4, briefing_tokens=30), sums.elisions)
    calls = agent_calls(log, sums, ASSISTANT, 50, PRICES)
    assert calls.input_tokens == 150 + 350 + (80 + 100)  # call 5: system + briefing + message 4
    assert calls.cache_read_tokens == 50 + 250 + 50


class _Snapshots(ContextSums):
    """ContextSums that keeps a copy of its prefix sums after every elision (for the test only)."""

    def __init__(self, tokens: np.ndarray, checks: np.ndarray, lag: np.ndarray | None = None) -> None:
        super().__init__(tokens, checks, lag)
        self.snapshots = [self.in_context_prefix.copy()]

    def stub(self, indices: list[int], freeable: np.ndarray) -> int:
        saved = super().stub(indices, freeable)
        self.snapshots.append(self.in_context_prefix.copy())
        return saved


def test_prefix_as_of_gives_back_the_sums_as_they_stood_after_each_elision():
    """Accounting rebuilds past sums from the record of stubs; they equal the sums the loop had then."""
    knobs = Knobs(
        context_window_tokens=30_000,
        trigger_hard_cap_tokens=20_000,
        prune_tool_outputs=True,
        prune_protect_tokens=3_000,
        prune_minimum_tokens=1_000,
        prune_protect_user_turns=0,
    )
    history = tool_history(60)
    counts = CountCache().counts_for(history)

    class Replay(_Replay):
        sums_type = _Snapshots

    replay = Replay(history, knobs, SimulatedBriefer(), get_policy(knobs), counts, None, None, None)
    run = replay.run()
    sums = replay.sums
    assert isinstance(sums, _Snapshots)
    assert run.metrics.elisions >= 3 and len(sums.snapshots) == run.metrics.elisions + 1
    as_of = PrefixAsOf(sums)
    for e, snapshot in enumerate(sums.snapshots):
        assert np.array_equal(as_of(e), snapshot), e
    assert run.metrics.cache_read_tokens + run.metrics.cache_write_tokens == run.metrics.agent_input_tokens
    assert run.metrics.agent_calls == 60
