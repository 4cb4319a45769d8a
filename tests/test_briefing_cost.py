"""Cost per task: the agent's calls and the briefer's, with and without a prompt cache (docs/cost.md).

The pinned claim: a compaction rewrites the start of the prompt, so the first agent call after it reads
only the system prompt from cache and *writes* everything else again. Users measured this invalidation
as most of what compaction costs (opencode #25120, claude-code #94197).
"""

from __future__ import annotations

import pytest
from scripted import sized_history

from workbench.briefing.base import BriefRecord
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.counting.prices import get_prices
from workbench.knobs import Knobs
from workbench.replay import simulate

SYS = 1_000
KNOBS = Knobs(context_window_tokens=16_000, min_kept_messages=5, check_point="message", hidden_prefix_tokens=SYS,
              model="claude-sonnet-4-5", briefer_model="anthropic/claude-haiku-4-5")
HISTORY = sized_history([2_000] * 24)  # alternating user/assistant, 600 tokens each by the estimate


def test_a_compaction_turns_the_next_call_into_a_cache_write():
    """Same history with and without compaction: the only extra write is the whole prefix after the compaction."""
    plain = simulate(HISTORY, KNOBS.replace(trigger_ratio=-1))
    compacted = simulate(HISTORY, KNOBS)
    assert plain.metrics.compressions == 0 and compacted.metrics.compressions == 1
    comp = compacted.compressions[0]
    landed_at = comp.index_landed
    first_call = next(i for i in range(landed_at + 1, len(HISTORY)) if HISTORY.messages[i].role == "assistant")
    timeline = compacted.timeline  # a landing check's row still shows the context before the landing
    prompt_after = comp.tokens_after if first_call - 1 == landed_at else int(
        timeline.filter(timeline["index"] == first_call - 1)["total"][0])  # what that call sends
    new_message = 600  # tokens added since the previous call: the one user message before it
    extra_write = compacted.metrics.cache_write_tokens - plain.metrics.cache_write_tokens
    assert extra_write == (prompt_after - SYS) - new_message
    # Every agent input token is either read from cache or written to it.
    for run in (plain, compacted):
        m = run.metrics
        assert m.cache_read_tokens + m.cache_write_tokens == m.agent_input_tokens


def test_without_compaction_caching_makes_the_task_cheaper():
    run = simulate(HISTORY, KNOBS.replace(trigger_ratio=-1))
    m = run.metrics
    assert m.prices_known and m.dollars_per_task > m.dollars_per_task_cached > 0
    p = get_prices("claude-sonnet-4-5")
    expected = m.agent_input_tokens * p.input_per_token + m.agent_output_tokens * p.output_per_token
    assert m.dollars_per_task == pytest.approx(expected)
    cached = (m.cache_read_tokens * p.cache_read_per_token + m.cache_write_tokens * p.cache_write_per_token
              + m.agent_output_tokens * p.output_per_token)
    assert m.dollars_per_task_cached == pytest.approx(cached)


def test_briefer_tokens_and_dollars_are_part_of_the_task():
    """The simulated briefer is priced at the briefer model's registry prices; both cost views include it."""
    run = simulate(HISTORY, KNOBS)
    m = run.metrics
    rec = run.compressions[0].record
    p = get_prices("anthropic/claude-haiku-4-5")
    assert m.briefer_input_tokens == rec.input_tokens > 0 and m.briefer_output_tokens == rec.output_tokens > 0
    assert m.briefer_dollars == pytest.approx(rec.input_tokens * p.input_per_token + rec.output_tokens * p.output_per_token)
    assert m.dollars_per_task == pytest.approx(m.agent_dollars + m.briefer_dollars)
    assert m.dollars_per_task_cached > m.briefer_dollars
    assert m.tokens_per_task == (m.agent_input_tokens + m.agent_output_tokens + m.briefer_input_tokens
                                 + m.briefer_output_tokens)


def test_a_live_records_own_cost_is_used_as_reported():
    """A briefer that reports its cost (the live one) is charged that, not a recomputation."""

    class Priced:
        name = "priced"

        def __call__(self, request):
            return BriefRecord(text="## A\n\n" + "b" * 800, chars=806, tokens=202, model="x", cost_usd=0.0123,
                               input_tokens=10, output_tokens=202)

    run = simulate(HISTORY, KNOBS, Priced())
    assert run.metrics.briefer_dollars == pytest.approx(0.0123 * run.metrics.compressions)


def test_the_extractive_briefer_is_priced_like_the_llm_it_stands_in_for():
    """Its text costs nothing to make, but it reports the tokens an LLM briefer would read and write."""
    run = simulate(HISTORY, KNOBS, ExtractiveBriefer())
    m, rec = run.metrics, run.compressions[0].record
    assert m.compressions == 1 and rec.cost_usd == 0
    assert rec.output_tokens == rec.tokens and rec.input_tokens > run.compressions[0].compact_history_chars // 4
    assert m.briefer_dollars > 0

