"""The billed counter: every message counts what the provider billed for it, and the factual replay of a log runs on it.

Logs are built line by line (``agent_log_builders``) so each number is known: the bill of every call, the messages
between two calls, a logged compaction, a fall of the bill, Codex's reasoning.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.agent_log_builders import ClaudeLog, CodexLog, text_block, tool_use
from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.counting.billed import billed_counts, billed_tokens, system_tokens, uses_billed
from workbench.counting.counters import check_points, trigger_lag, trigger_tokens, walk_tokens
from workbench.counting.tokens import CountCache
from workbench.history.readers import parse_history
from workbench.knobs import Knobs
from workbench.replay import simulate

PRESET = Knobs(trigger_counter="o200k_base", overhead_chars_per_message=16, token_ratio=1.25)


def claude_steps(bills: list[int], *, log: ClaudeLog | None = None, words: int = 400) -> ClaudeLog:
    """A user task, then one tool call per bill (each call's billed context) and its result."""
    log = log or ClaudeLog(version="2.1.25").user("task: fix the build")
    for k, bill in enumerate(bills):
        log.assistant([text_block(f"step {k}"), tool_use(f"t{len(log.lines)}")], input_total=bill, output=5)
        log.tool_result(f"t{len(log.lines) - 1}", "word " * words)
    return log


def calls_of(h):  # noqa: ANN001, ANN202
    return [(c.index, c.usage.context_tokens) for c in h.log.calls]


def test_growth_between_two_calls_is_spread_over_the_messages_added_between_them():
    h = parse_history(claude_steps([40_000, 41_000, 43_500, 43_600]).text(), source="c.jsonl")
    counts = CountCache().counts_for(h)
    billed = billed_counts(counts, PRESET)
    tokens = billed.tokens
    calls = calls_of(h)
    # Every call's bill is the hidden prefix plus what the messages before it count, to the token.
    for index, bill in calls:
        assert billed.hidden_prefix + int(tokens[:index].sum()) == bill
    # Between two calls: the first call's answer and the result it asked for share the growth by their weight.
    (a, ca), (b, cb) = calls[1], calls[2]
    assert int(tokens[a:b].sum()) == cb - ca == 2_500
    weights = trigger_tokens(counts, PRESET.replace(log_counter="estimate", token_ratio=1.0))
    share = weights[a:b] / weights[a:b].sum() * (cb - ca)
    assert np.all(np.abs(tokens[a:b] - share) < 1)
    # The hidden prefix is what the first call read beyond the estimate of the task before it.
    assert billed.hidden_prefix == calls[0][1] - int(tokens[: calls[0][0]].sum())
    assert 39_000 < billed.hidden_prefix < 40_000
    # After the last call nothing brackets the messages: the estimate times the log's own ratio.
    last = calls[-1][0]
    assert billed.estimated == calls[0][0] + len(h.messages) - last
    assert np.array_equal(tokens[last:], np.rint(weights[last:] * billed.ratio).astype(np.int64))


def test_billed_is_the_default_counter_on_a_log_and_nowhere_else():
    log = parse_history(claude_steps([40_000, 41_000]).text(), source="c.jsonl")
    transcript = parse_history('{"id":"1","role":"user","parts":[{"type":"text","text":"hi"}]}\n', source="t.jsonl")
    assert uses_billed(log, Knobs()) and not uses_billed(transcript, Knobs())
    assert not uses_billed(log, Knobs(log_counter="estimate"))
    assert not uses_billed(log, Knobs(trigger_counter="usage"))  # the usage counter follows the log (reality)
    counts = CountCache().counts_for(log)
    assert np.array_equal(walk_tokens(counts, PRESET), trigger_tokens(counts, PRESET))  # trigger and boundary
    estimate = trigger_tokens(counts, PRESET.replace(log_counter="estimate"))
    assert not np.array_equal(estimate, trigger_tokens(counts, PRESET))
    assert system_tokens(counts, PRESET.replace(log_counter="estimate")) == PRESET.hidden_prefix_tokens
    t_counts = CountCache().counts_for(transcript)
    assert np.array_equal(trigger_tokens(t_counts, Knobs()), trigger_tokens(t_counts, Knobs(log_counter="estimate")))


def test_a_logged_compaction_counts_the_estimate_and_the_first_call_after_it_re_anchors():
    log = claude_steps([40_000, 60_000, 90_000])
    log.compact("auto", 91_000, "Summary of the work so far. " * 40)
    claude_steps([45_000, 47_000, 52_000], log=log)
    h = parse_history(log.text(), source="c.jsonl")
    billed = billed_counts(CountCache().counts_for(h), PRESET)
    tokens = billed.tokens
    (cut,) = [c.index for c in h.log.compactions]
    calls = calls_of(h)
    after = [(i, bill) for i, bill in calls if i > cut]
    assert tokens[cut] == 0  # the agent's own summary: the replay's briefing stands in for it
    assert billed.anchors == 1
    # After it, growth is measured between the calls after it: never from where its first bill sits.
    for (a, ca), (b, cb) in zip(after, after[1:], strict=False):
        assert int(tokens[a:b].sum()) == cb - ca
    # The replay's running sum does not drop to the post-compaction bill: the messages keep their own counts.
    assert billed.hidden_prefix + int(tokens[: after[0][0]].sum()) > 90_000


def test_post_compaction_bills_move_nothing_but_their_differences():
    """The factual replay continues from its own state after compacting: shifting every bill after the logged
    compaction by a constant (a longer real summary, more re-attached files) changes no count."""
    def build(shift: int) -> list[int]:
        log = claude_steps([40_000, 80_000, 120_000, 160_000, 166_000])
        log.compact("auto", 167_500, "Summary. " * 50)
        claude_steps([50_000 + shift + 30_000 * k for k in range(5)], log=log)
        h = parse_history(log.text(), source="c.jsonl")
        return billed_counts(CountCache().counts_for(h), PRESET).tokens.tolist()

    assert build(0) == build(9_000)


def test_a_fall_of_the_bill_counts_zero_until_it_passes_its_earlier_high():
    """Claude Code's microcompaction (or unlogged context editing) drops the bill with no compaction logged."""
    h = parse_history(claude_steps([40_000, 100_000, 70_000, 90_000, 110_000]).text(), source="c.jsonl")
    billed = billed_counts(CountCache().counts_for(h), PRESET)
    calls = calls_of(h)
    running = np.maximum.accumulate([bill for _, bill in calls])
    for (index, _), high in zip(calls, running, strict=True):
        assert billed.hidden_prefix + int(billed.tokens[:index].sum()) == high
    assert billed.falls == 1
    assert int(billed.tokens[calls[1][0]: calls[2][0]].sum()) == 0


def test_codex_reasoning_dropped_at_a_new_turn_is_carried_as_codex_counts_it():
    def rollout() -> CodexLog:
        log = CodexLog().turn().user("first task")
        log.reasoning().call("c1").tokens(20_000, 3_000, reasoning=2_500).output("c1", "x " * 300)
        log.say("done").tokens(21_000, 500, reasoning=1_000).end_turn()
        log.turn().user("second task")
        # The provider dropped the first turn's 3,500 reasoning tokens from the input.
        log.reasoning().call("c2").tokens(18_200, 400, reasoning=100).output("c2", "y " * 300)
        log.say("ok").tokens(19_000, 200).end_turn()
        return log

    h = parse_history(rollout().text(), source="r.jsonl")
    knobs = PRESET.replace(reasoning_carry_ratio=1.26)
    counts = CountCache().counts_for(h)
    carried = billed_counts(counts, knobs)
    plain = billed_counts(counts, knobs.replace(reasoning_carry_ratio=0.0))
    calls = calls_of(h)
    (second, bill_second), (third, bill_third) = calls[1], calls[2]
    # Without the carry the bill fell (-2,800): nothing grows until it passes its high again.
    assert plain.falls == 1
    # With it, the turn's reasoning (3,500 x 1.26 = 4,410) is counted on the turn's last assistant message.
    assert carried.falls == 0
    assert carried.hidden_prefix + int(carried.tokens[:third].sum()) == bill_third + 4_410
    # ... on the turn's last assistant message (a compaction folds it), not on the user message Codex keeps.
    assert int(carried.tokens[second]) == bill_third + 4_410 - bill_second


def test_a_log_that_starts_mid_session_puts_the_earlier_context_on_its_first_message():
    log = ClaudeLog(version="2.1.25", first_parent="u-not-in-this-file").user("continue")
    h = parse_history(claude_steps([120_000, 121_000], log=log).text(), source="c.jsonl")
    assert h.log.starts_mid_session and "mid-session" in h.log.start_note
    billed = billed_counts(CountCache().counts_for(h), PRESET.replace(hidden_prefix_tokens=30_000))
    assert billed.hidden_prefix == 30_000
    assert billed.earlier_context > 85_000 and int(billed.tokens[0]) >= billed.earlier_context
    run = simulate(h, agent_settings(h).knobs)
    assert any("mid-session" in n for n in run.notes)


def test_spread_is_integers_that_sum_exactly():
    log = claude_steps([10_000, 10_007])
    h = parse_history(log.text(), source="c.jsonl")
    weights = np.array([3, 1, 1, 1, 1, 1], dtype=np.int64)[: len(h.messages)]
    billed = billed_tokens(h.messages, weights)
    (a, ca), (b, cb) = calls_of(h)
    assert int(billed.tokens[a:b].sum()) == cb - ca == 7
    assert billed.tokens.dtype == np.int64 and not billed.tokens.flags.writeable


def test_the_count_is_computed_once_per_knob_set():
    h = parse_history(claude_steps([40_000, 41_000]).text(), source="c.jsonl")
    counts = CountCache().counts_for(h)
    first = billed_counts(counts, PRESET)
    assert billed_counts(counts, PRESET.replace(trigger_ratio=0.5)) is first  # not a counting knob
    assert billed_counts(counts, PRESET.replace(chars_per_token=3.0)) is not first


# -- the factual replay -------------------------------------------------------------------------------------------

def crossing_log(*, shift_after: int = 0) -> ClaudeLog:
    """Claude Code 2.1.25 (trigger 167,000): the bill crosses it, the agent compacts, then grows again."""
    log = claude_steps([40_000 + 9_000 * k for k in range(15)])  # ... 166,000
    log.assistant([tool_use("tx")], input_total=168_000, output=5).tool_result("tx", "word " * 400)
    log.compact("auto", 168_400, "Summary. " * 200)
    return claude_steps([60_000 + shift_after + 9_000 * k for k in range(20)], log=log)


@pytest.mark.parametrize("shift", [0, 15_000])
def test_the_factual_replay_compacts_where_the_agent_did_and_then_from_its_own_state(shift):
    h = parse_history(crossing_log(shift_after=shift).text(), source="c.jsonl")
    knobs = agent_settings(h).knobs
    assert knobs.log_counter == "billed"
    run = simulate(h, knobs)
    (real,) = h.log.compactions
    assert run.compressions[0].index_started + 1 == real.index
    assert any("provider billed" in n for n in run.notes)
    # After its compaction the replay's context is its own (hidden prefix + briefing + restore + what followed):
    # the log's later bills move its second compaction not at all.
    assert len(run.compressions) >= 2
    if shift:
        base = simulate(parse_history(crossing_log().text(), source="c.jsonl"), knobs)
        assert [c.index_started for c in run.compressions] == [c.index_started for c in base.compressions]


def test_the_factual_replay_runs_the_users_compact_at_its_place():
    log = claude_steps([40_000, 60_000, 80_000])
    log.user("<command-name>/compact</command-name>")
    log.compact("manual", 81_000, "Summary. " * 40)
    h = parse_history(claude_steps([45_000, 50_000], log=log).text(), source="c.jsonl")
    settings = agent_settings(h)
    assert settings.knobs.manual_compact_checks
    run = simulate(h, settings.knobs)
    (real,) = h.log.compactions
    assert [c.trigger for c in run.compressions] == ["manual"]
    assert run.compressions[0].index_started + 1 == real.index


def test_the_knobs_the_billed_counter_does_not_read_say_so():
    from workbench.analysis.binding import knob_notes

    h = parse_history(crossing_log().text(), source="c.jsonl")
    knobs = agent_settings(h).knobs
    notes = knob_notes(simulate(h, knobs))
    assert "log_counter billed" in notes["boundary_counter"].text
    assert "the log's own" in notes["hidden_prefix_tokens"].text
    estimate = knob_notes(simulate(h, knobs.replace(log_counter="estimate")))
    assert "boundary_counter" not in estimate and "hidden_prefix_tokens" not in estimate


def test_an_agent_that_measures_its_last_bill_alone_compares_that_bill_and_its_answer():
    """Claude Code up to 2.1.1 (count_added_since_call off): the trigger compares the last call's bill and answer
    alone; the per-message counts stay the provider's, for the trigger and the boundary walk alike."""
    h = parse_history(claude_steps([40_000, 41_000, 43_500]).text(), source="c.jsonl")
    counts = CountCache().counts_for(h)
    knobs = PRESET.replace(count_added_since_call=False)
    billed = billed_counts(counts, knobs)
    assert np.array_equal(trigger_tokens(counts, knobs), billed.tokens)
    assert np.array_equal(walk_tokens(counts, knobs), billed.tokens)
    lag = trigger_lag(counts, knobs)
    checks = check_points(counts, knobs.check_point)
    for k, i in enumerate(checks):
        last = max(c.index for c in h.log.calls if c.index <= i)
        usage = h.messages[last].usage
        held = billed.hidden_prefix + int(billed.tokens[: i + 1].sum())
        assert held - int(lag[k]) == usage.total_tokens  # 40,005, 41,005, 43,505: each bill and its answer


def test_the_trigger_compares_the_last_bill_and_the_agents_estimate_since():
    """Claude Code 2.1.2+: its measure at a check is the last call's bill and answer plus chars / 4 of what came after;
    the provider billed more for the same tool result, so the bill crosses the threshold a call before the agent
    does. The factual replay compacts where the agent did, at the agent's measure (its logged preTokens)."""
    log = claude_steps([40_000 + 9_000 * k for k in range(15)])  # ... 166,000; each result ~500 tokens by chars / 4
    log.assistant([tool_use("tx")], input_total=167_200, output=5).tool_result("tx", "word " * 400)
    log.compact("auto", 167_705, "Summary. " * 200)
    h = parse_history(claude_steps([60_000, 70_000], log=log).text(), source="c.jsonl")
    knobs = agent_settings(h).knobs
    counts = CountCache().counts_for(h)
    billed = billed_counts(counts, knobs)
    (real,) = h.log.compactions
    call = real.index - 2  # the call that billed 167,200, then its tool result
    assert billed.hidden_prefix + int(billed.tokens[:call].sum()) == 167_200  # the bill is over 167,000 there
    run = simulate(h, knobs)
    first = run.compressions[0]
    assert first.index_started + 1 == real.index  # not one call early, where the bill crossed
    assert first.tokens_before == 167_205 + round(len("word " * 400) / 4)  # the agent's measure: its preTokens
    assert first.tokens_before == real.tokens_before
    early = simulate(h, knobs.replace(log_counter="estimate", trigger_counter="usage")).compressions[0]
    assert early.index_started + 1 == real.index  # the usage counter (which follows the log) agrees


def test_the_reactive_trigger_compares_what_the_context_holds():
    """The API refuses a call over the window by what the call holds, not by the agent's estimate of it."""
    h = parse_history(crossing_log().text(), source="c.jsonl")
    knobs = agent_settings(h).knobs.replace(proactive_compaction=False, context_window_tokens=167_500,
                                             manual_compact_checks="")
    run = simulate(h, knobs)
    counts = CountCache().counts_for(h)
    billed = billed_counts(counts, knobs)
    checks = check_points(counts, knobs.check_point)
    held = [billed.hidden_prefix + int(billed.tokens[: i + 1].sum()) for i in checks]
    first = next(k for k, t in enumerate(held) if t > 167_500)
    assert run.compressions[0].check_started == first
    assert run.compressions[0].trigger == "reactive"
