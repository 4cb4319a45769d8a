"""The bill a replay of a real log models (analysis.real_logs.bill) and the context right after each logged compaction
(analysis.real_logs.after_compaction): the providers' cache rules on hand-built calls, the fits, and that neither reads the
log's usage when told not to (a log with its usage stripped gives the same numbers)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from agent_log_builders import ClaudeLog, CodexLog, text_block, tool_use
from conftest import need_shared, shared_dir

from workbench.analysis.real_logs.bill import (
    BILL_UNITS,
    Bill,
    BillModel,
    ModelCall,
    args_chars,
    bill_family,
    bill_units,
    cache_rules,
    command_turn,
    fit_bill_model,
    logged_bill,
    modelled_bill,
    provider_of,
    shipped_model,
)
from workbench.analysis.real_logs.reality import follow_log, reality_summary
from workbench.cli import main
from workbench.counting.prices import Prices, price_note
from workbench.explore.briefer_calibration import after_tokens, fit_after
from workbench.history.model import Message, text_part
from workbench.history.readers import load_history, parse_history
from workbench.knobs import load_knobs
from workbench.replay import simulate
from workbench.replay.first import compaction_at_end


def call(index: int, context: int, time: float, *, visible: int = 100, turn: bool = False, reset: bool = False,
         command: bool = False, model: str | None = None) -> ModelCall:
    return ModelCall(index=index, context=context, visible=visible, time=time, turn=turn, reset=reset, command=command,
                     model=model)


NO_MISS = BillModel(agent="claude_code", family="test", reset_cached_tokens=20_000, uncached_per_call=3,
                    output_ratio=0.5, output_per_call=10)


# -- the providers' rules ---------------------------------------------------------------------------------------

def test_claude_code_asks_for_the_one_hour_cache_from_2_1_20_and_codex_gets_openais():
    new, old, codex = cache_rules("claude_code", "2.1.20"), cache_rules("claude_code", "2.1.19"), cache_rules("codex", "0.142.0")
    assert (new.sure_seconds, new.ttl_seconds, new.one_hour_writes) == (3600, 3600, True)
    assert (old.sure_seconds, old.ttl_seconds, old.one_hour_writes) == (300, 3600, False)
    assert (codex.provider, codex.writes_billed, codex.increment, codex.min_tokens) == ("openai", False, 128, 1024)
    assert codex.describe() == "openai prompt cache, lifetime 10 minutes (at most 1 hour)"
    assert new.describe() == "anthropic prompt cache, lifetime 1 hour"


def test_anthropic_reads_what_the_previous_call_wrote_and_writes_the_rest():
    calls = [call(1, 30_000, 0.0, reset=True), call(3, 32_000, 10.0), call(5, 35_000, 20.0)]
    bill = modelled_bill(calls, cache_rules("claude_code", "2.1.39"), NO_MISS)
    # first call: the reset part (system prompt, tools) cached, the rest written, 3 tokens uncached per call
    assert bill.cache_read == 20_000 + 30_000 + 32_000
    assert bill.input == 9
    assert bill.cache_write == (30_000 - 20_000 - 3) + (32_000 - 30_000 - 3) + (35_000 - 32_000 - 3)
    assert bill.output == 3 * (50 + 10)
    # 2.1.25 logs each answer's output as its stream began: the bill takes the model's start count, not the size
    assert modelled_bill(calls, cache_rules("claude_code", "2.1.25"), NO_MISS).output == 0
    assert bill.calls == 3


def test_past_the_lifetime_nothing_is_read_and_a_compaction_keeps_only_the_system_part():
    rules = cache_rules("claude_code", "2.1.7")  # 5 minutes sure
    late = replace_share(NO_MISS, late_hit_share=0.0)
    calls = [call(1, 30_000, 0.0), call(3, 40_000, 301.0), call(5, 45_000, 302.0), call(9, 25_000, 303.0, reset=True)]
    bill = modelled_bill(calls, rules, late)
    assert bill.cache_read == 20_000 + 0 + 40_000 + 20_000
    assert bill.cache_write == 10_000 - 3 + 40_000 - 3 + 5_000 - 3 + 5_000 - 3
    after_an_hour = [call(1, 30_000, 0.0), call(3, 40_000, 3601.0)]
    assert modelled_bill(after_an_hour, cache_rules("claude_code", "2.1.25"), NO_MISS).cache_read == 20_000


def replace_share(model: BillModel, **changes: float) -> BillModel:
    import dataclasses

    return dataclasses.replace(model, **changes)


def test_openai_caches_in_128_token_steps_and_a_new_turn_reads_up_to_the_previous_turns_start():
    model = BillModel(agent="codex", family="test", reset_cached_tokens=2_432)
    calls = [call(1, 20_000, 0.0, reset=True), call(3, 25_000, 5.0), call(5, 30_000, 10.0),
             call(8, 31_000, 15.0, turn=True), call(10, 900, 20.0)]
    bill = modelled_bill(calls, cache_rules("codex", "0.142.0"), model)
    reads = [2_432 - 2_432 % 128, 20_000 - 20_000 % 128, 25_000 - 25_000 % 128,
             20_000 - 20_000 % 128,  # the turn before began at 20,000: its reasoning is not sent again
             0]  # under 1,024 tokens nothing is cached
    assert bill.cache_read == sum(reads)
    assert bill.cache_write == 0
    assert bill.input == 20_000 + 25_000 + 30_000 + 31_000 + 900 - sum(reads)


def test_expected_misses_take_their_share_of_the_prefix_by_kind_of_call():
    model = replace_share(NO_MISS, turn_miss_share=0.5, command_miss_share=1.0, call_miss_share=0.0)
    rules = cache_rules("claude_code", "2.1.25")
    turn = modelled_bill([call(1, 40_000, 0.0), call(3, 42_000, 5.0, turn=True)], rules, model)
    command = modelled_bill([call(1, 40_000, 0.0), call(3, 42_000, 5.0, turn=True, command=True)], rules, model)
    assert turn.cache_read == 20_000 + 20_000
    assert command.cache_read == 20_000 + 0


def test_without_usage_each_window_that_ends_at_an_automatic_compaction_is_anchored_on_the_agents_trigger():
    """The agent compacted where its measure crossed its trigger: the window's last call sent about that much, so
    every call of the window moves by what the estimate missed of it; a window without the anchor keeps the estimate."""
    from dataclasses import replace

    from workbench.analysis.real_logs.bill import anchored

    window = [call(1, 50_000, 0.0), call(3, 60_000, 5.0), replace(call(5, 80_000, 10.0), anchor=167_000.0)]
    moved = anchored(window, 0.99)
    shift = 0.99 * 167_000 - 80_000
    assert [c.context for c in moved] == [round(c.context + shift) for c in window]
    assert anchored(window[:2], 0.99) == window[:2]
    run = follow_log(parse_history(claude_session().text(), source="c.jsonl"), usage=False)
    before = [c for c in run.calls if c.anchor is not None]
    assert len(before) == 1 and before[0].anchor == 167_000  # Claude Code 2.1.25: its 200,000 window less 33,000
    assert before[0].context == round(shipped_model("claude_code", "2.1.25").anchor_share * 167_000)
    with_usage = follow_log(parse_history(claude_session().text(), source="c.jsonl"))
    assert with_usage.calls[1].anchor == 167_000 and with_usage.calls[1].context < 50_000  # billed counts: not moved


def test_past_the_sure_lifetime_a_fit_that_saw_no_call_there_reads_nothing():
    """A model fitted on 1-hour sessions never saw a call between 5 minutes and an hour: on a 5-minute session
    it takes the documented behaviour (the entry is gone), not a guess that it survived."""
    history = parse_history(claude_session().text(), source="c.jsonl")
    model = fit_bill_model([(history, follow_log(history).calls)], agent="claude_code", family="test")
    assert model.late_hit_share == 0.0
    bill = modelled_bill([call(1, 30_000, 0.0), call(3, 40_000, 400.0)], cache_rules("claude_code", "2.1.7"), model)
    assert bill.cache_read == min(30_000, model.reset_cached_tokens) + 0  # the second call, 400 s on, reads nothing


def test_a_log_that_starts_mid_session_reads_what_its_earlier_part_cached_if_it_came_soon_enough():
    """The file opens with the records that closed the turn before it: its first call finds the earlier part's
    prefix in the cache within the lifetime after them, and nothing past it."""
    from dataclasses import replace

    from workbench.analysis.real_logs.bill import earlier_call

    log = ClaudeLog(version="2.1.7", first_parent="u-earlier")
    log.user("go on").assistant([text_block("Going on.")], input_total=120_000, output=40)
    history = parse_history(log.text(), source="c.jsonl")
    assert history.log is not None and history.log.extra["earlier_time"] == "2026-01-01T00:00:01Z"
    rules = cache_rules("claude_code", "2.1.7")  # 5 minutes
    first = call(1, 120_000, seconds_of("2026-01-01T00:02:00Z"), turn=True)
    earlier = earlier_call(history, [first], own=500)
    assert earlier is not None and earlier.context == 119_500
    assert modelled_bill([first], rules, NO_MISS, earlier=earlier).cache_read == 119_500
    late = replace(first, time=seconds_of("2026-01-01T00:20:00Z"))
    assert modelled_bill([late], rules, NO_MISS, earlier=earlier).cache_read == 0
    assert modelled_bill([first], rules, NO_MISS).cache_read == 20_000  # without it: only the reset part


def test_given_the_logged_context_a_mid_session_log_reads_its_earlier_part_less_its_own_messages():
    """The check of the cache model alone (every call's logged context, scripts/reality_after_bill.py) finds the
    earlier part's prefix in the cache as the modelled bill does: less the file's own messages before its first call,
    which the earlier call never sent."""
    import sys

    from conftest import REPO

    sys.path.insert(0, str(REPO / "scripts"))
    from reality_after_bill import logged_context_bill

    log = ClaudeLog(version="2.1.7", first_parent="u-earlier")
    log.user("go on " * 2_000).assistant([text_block("Going on.")], input_total=120_000, output=40)
    history = parse_history(log.text(), source="c.jsonl")
    reality = follow_log(history, usage=False)
    assert reality.first_call_own > 1_000  # the long user message
    bill = logged_context_bill(history, reality, NO_MISS)
    assert bill.cache_read == 120_000 - reality.first_call_own


def test_past_the_edge_a_known_lifetime_reads_nothing_and_an_experiments_session_takes_the_likelier_arm():
    """Claude Code 2.1.7 writes 5-minute entries: past the edge nothing is read, whatever the fit says. 2.1.17's
    sessions each have one lifetime (its experiment's arm): all or nothing by the arm most fitted sessions had.
    OpenAI's cache lives 5 to 10 minutes, up to an hour, call by call: the fitted share."""
    calls = [call(1, 30_000, 0.0), call(3, 40_000, 1_200.0)]  # 20 minutes apart
    late = 20_000 + 30_000  # the reset part, then the whole prefix
    gone = 20_000 + 0
    assert modelled_bill(calls, cache_rules("claude_code", "2.1.7"), replace_share(NO_MISS, late_hit_share=0.9)
                         ).cache_read == gone
    experiment = cache_rules("claude_code", "2.1.17")
    assert experiment.lifetime_per_session and not cache_rules("claude_code", "2.1.19").late_hits
    assert modelled_bill(calls, experiment, replace_share(NO_MISS, late_hit_share=0.6)).cache_read == late
    assert modelled_bill(calls, experiment, replace_share(NO_MISS, late_hit_share=3 / 7)).cache_read == gone
    openai = modelled_bill(calls, cache_rules("codex", "0.140.0"), replace_share(NO_MISS, late_hit_share=0.5))
    assert openai.cache_read == (20_000 - 20_000 % 128) + (15_000 - 15_000 % 128)


def test_a_new_turn_after_a_turn_that_completed_the_task_list_takes_its_own_miss_share():
    """Claude Code 2.1.20-2.1.37 missed its cache at the new user turns after a turn whose TaskCreate and TaskUpdate
    calls left every task completed: the first call of that next turn is marked, and only it."""
    log = ClaudeLog(version="2.1.29")
    log.user("Plan the refactor.")
    log.assistant([tool_use("t1", "TaskCreate", subject="split the parser")], input_total=40_000, output=50)
    log.tool_result("t1", "Task #1 created")
    log.assistant([tool_use("t3", "TaskUpdate", taskId="1", status="completed")], input_total=40_200, output=20)
    log.tool_result("t3", "Updated task #1 status")
    log.assistant([text_block("Planned.")], input_total=40_400, output=20)
    log.user("go on")
    log.assistant([tool_use("t2", "Bash", command="pytest")], input_total=40_800, output=30)
    log.tool_result("t2", "ok")
    log.assistant([text_block("Done.")], input_total=41_200, output=20)
    log.user("and the docs")
    log.assistant([text_block("Docs done.")], input_total=41_600, output=20)
    history = parse_history(log.text(), source="c.jsonl")
    calls = follow_log(history).calls
    assert [(c.turn, c.task) for c in calls] == [(True, False), (False, False), (False, False), (True, True),
                                                 (False, False), (True, False)]
    model = replace_share(NO_MISS, turn_miss_share=0.0, task_miss_share=1.0)
    rules = cache_rules("claude_code", "2.1.29")
    bill = modelled_bill(calls, rules, model)
    plain = modelled_bill(calls, rules, replace_share(model, task_miss_share=0.0))
    assert plain.cache_read - bill.cache_read == calls[2].context  # the task turn reads none of what the call before wrote
    fitted = fit_bill_model([(history, calls)], agent="claude_code", family="test")
    assert fitted.task_miss_share == pytest.approx(0.0, abs=1e-9)  # the builder's calls read everything


def test_a_window_without_an_anchor_takes_the_carry_share_of_the_nearest_anchored_windows_shift():
    """What every window starts with, the hidden prefix, the estimate gets equally wrong: the window after the
    compaction moves by ``carry_share`` x the anchored window's shift; a log that starts mid-session lends none."""
    from dataclasses import replace

    def tail(log: ClaudeLog, carry: float) -> int:
        history = parse_history(log.text(), source="c.jsonl")
        model = replace(shipped_model("claude_code", "2.1.25"), carry_share=carry)
        return follow_log(history, usage=False, bill_model=model).calls[-1].context

    whole = claude_session()
    none, half, full = tail(whole, 0.0), tail(whole, 0.5), tail(whole, 1.0)
    assert half != none and abs((full - half) - (half - none)) <= 1
    mid = ClaudeLog(version="2.1.25", first_parent="u-earlier")
    mid.lines = [dict(line) for line in claude_session().lines]
    mid.lines[0]["parentUuid"] = "u-earlier"
    assert tail(mid, 1.0) == tail(mid, 0.0)


def test_the_carry_share_weighs_the_spread_of_prefixes_against_the_anchors():
    """Where logs' first calls differ by thousands of tokens and the agent compacts at its bill (Claude Code), the
    shift carries almost whole; where prefixes agree and the measure is 82-97% of the bill (Codex), hardly."""
    from workbench.analysis.real_logs.bill import _carry_share

    claude = _carry_share([27_000, 33_000, 42_000, 44_000], [0.998, 1.0, 1.002], [167_000] * 3)
    codex = _carry_share([9_000, 9_500, 10_000], [0.82, 0.92, 0.97], [244_800] * 3)
    assert claude > 0.95 and codex < 0.05
    assert _carry_share([30_000], [1.0], [167_000]) == 0.0  # nothing to weigh


def test_a_call_at_the_edge_of_the_sure_lifetime_has_its_own_share():
    """Timestamps are when answers were written, not when requests reached the cache: a call just past 5 minutes
    (within 1.2 x) takes the edge share, a later one the late share."""
    model = replace_share(NO_MISS, edge_hit_share=1.0, late_hit_share=0.0)
    rules = cache_rules("claude_code", "2.1.7")
    edge = modelled_bill([call(1, 30_000, 0.0), call(3, 40_000, 340.0)], rules, model)
    later = modelled_bill([call(1, 30_000, 0.0), call(3, 40_000, 400.0)], rules, model)
    assert (edge.cache_read, later.cache_read) == (20_000 + 30_000, 20_000 + 0)


def seconds_of(when: str) -> float:
    from workbench.analysis.real_logs.bill import seconds

    value = seconds(when)
    assert value is not None
    return value


def test_each_agent_is_billed_by_its_providers_cache_whatever_its_agent():
    # OpenCode and Pi log the endpoint: GitHub Copilot's API reports reads and bills no writes, even for Claude
    assert provider_of("opencode", "claude-sonnet-4.6", "github-copilot") == "github-copilot"
    assert provider_of("opencode", "gpt-5.3-codex", "openai") == "openai"
    assert provider_of("pi", "gpt-5.5", "openai-codex") == "openai"
    assert provider_of("copilot_cli", "claude-fable-5") == "anthropic"
    assert provider_of("gemini_cli", "gemini-3-flash-preview") == "google"
    assert provider_of("claude_code", None) == "anthropic"
    copilot = cache_rules("opencode", "1.4.3", "claude-sonnet-4.6", "github-copilot")
    assert (copilot.writes_billed, copilot.sure_seconds) == (False, 300)
    pi = cache_rules("pi", None, "gpt-5.5", "openai-codex")
    assert (pi.provider, pi.increment, pi.min_tokens, pi.turn_reads_to_turn_start) == ("openai", 128, 1024, False)
    gemini = cache_rules("gemini_cli", None, "gemini-3-flash-preview")
    assert (gemini.provider, gemini.writes_billed, gemini.min_tokens) == ("google", False, 4096)
    assert cache_rules("gemini_cli", None, "gemini-2.5-pro").min_tokens == 2048
    # the 1-hour cache is Claude Code's request, not Anthropic's default: another agent on Claude gets 5 minutes
    assert cache_rules("copilot_cli", "2.1.25", "claude-fable-5").sure_seconds == 300
    calls = [call(1, 20_000, 0.0), call(2, 30_000, 10.0)]
    no_writes = modelled_bill(calls, copilot, NO_MISS)
    assert (no_writes.cache_write, no_writes.cache_read, no_writes.input) == (0, 20_000 + 20_000, 10_000)
    assert bill_units("pi", "gpt-5.5")["output"] == 8 and bill_units("opencode", "claude-sonnet-4.6")["output"] == 5
    assert bill_units("gemini_cli", "gemini-3-flash-preview")["output"] == 6


def test_a_model_switch_reads_nothing_and_the_way_back_reads_its_own_models_cache():
    rules = cache_rules("claude_code", "2.1.25")
    calls = [call(1, 40_000, 0.0, model="opus"), call(3, 42_000, 5.0, model="haiku"),
             call(5, 44_000, 10.0, model="opus")]
    bill = modelled_bill(calls, rules, NO_MISS)
    # opus: the reset part; haiku: nothing cached for it; opus again: what opus's own call wrote (40,000)
    assert bill.cache_read == 20_000 + 0 + 40_000
    same = modelled_bill([call(1, 40_000, 0.0), call(3, 42_000, 5.0), call(5, 44_000, 10.0)], rules, NO_MISS)
    assert same.cache_read == 20_000 + 40_000 + 42_000


def test_a_synthetic_answer_is_no_call_and_the_call_after_it_or_a_resume_reads_only_the_system_part():
    import numpy as np

    from workbench.analysis.real_logs.bill import window_calls
    from workbench.history.model import History

    def msg(i: int, role: str, text: str, **meta: object) -> Message:
        return Message(id=f"m{i}", role=role, parts=(text_part(text),), metadata=dict(meta))

    model = "claude-opus-4-6"
    msgs = (msg(0, "user", "fix it"), msg(1, "assistant", "done", model=model),
            msg(2, "user", "<command-name>/exit</command-name>"),
            msg(3, "assistant", "No response requested.", model="<synthetic>"),
            msg(4, "user", "go on"), msg(5, "assistant", "ok", model=model),
            msg(6, "user", "more", resumed=True), msg(7, "assistant", "ok", model=model),
            msg(8, "user", "and"), msg(9, "assistant", "ok", model=model))
    history = History(id="h", messages=msgs)
    calls = window_calls(history, history, 0, 0, len(msgs), np.full(len(msgs), 1_000), 30_000, reset=True)
    assert [c.index for c in calls] == [1, 5, 7, 9]  # the synthetic answer made no call
    assert [c.reset for c in calls] == [True, True, True, False]  # a compaction-like read after it and a resume
    bill = modelled_bill(calls, cache_rules("claude_code", "2.1.39"), NO_MISS)
    assert bill.cache_read == 20_000 * 3 + calls[2].context


def test_bill_units_and_dollars():
    bill = Bill(calls=2, input=1_000, cache_read=100_000, cache_write=10_000, output=1_000)
    assert bill.units("claude_code") == 1_000 + 10_000 + 12_500 + 5_000
    assert bill.units("codex") == 1_000 + 10_000 + 12_500 + 8_000
    assert BILL_UNITS["codex"]["output"] == 8
    prices = Prices(model="m", input_per_token=1e-6, output_per_token=10e-6, cache_read_per_token=0.1e-6,
                    cache_write_per_token=1.25e-6, cache_write_1h_per_token=2e-6, known=True)
    assert bill.dollars(prices) == pytest.approx((1_000 + 10_000 + 12_500 + 10_000) / 1e6)
    assert bill.dollars(prices, one_hour_writes=True) == pytest.approx((1_000 + 10_000 + 20_000 + 10_000) / 1e6)
    assert "1-hour entries $2.00" in price_note(prices) and price_note(prices).startswith("m at list price: input $1.00")
    assert price_note(Prices(model="x")) == "x is not in the price registry: its dollars are 0"


def test_version_families_and_slash_commands():
    assert bill_family("claude_code", "2.1.17") == "claude_code 2.1.12-<2.1.20"
    assert bill_family("claude_code", "2.1.45") == "claude_code 2.1.38+"
    assert bill_family("claude_code", "2.1.33") == "claude_code 2.1.31-<2.1.38"
    assert bill_family("claude_code", "2.0.76") == "claude_code <2.1.2"
    assert bill_family("codex", "0.119.0-alpha.28") == "codex <0.140"
    assert shipped_model("claude_code", "2.1.45").family == "claude_code 2.1.38+"
    assert shipped_model("opencode", "1.0").family == "opencode"
    assert command_turn(Message(id="m", role="user", parts=(text_part("<command-name>/model</command-name>"),)))
    assert not command_turn(Message(id="m", role="user", parts=(text_part("please run the tests"),)))


# -- a followed log: the logged bill, the fit, and no peeking ---------------------------------------------------

def claude_session(version: str = "2.1.25") -> ClaudeLog:
    log = ClaudeLog(version=version)
    log.user("Refactor the parser.")
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=40_000, output=120)
    log.tool_result("t1", "x" * 20_000)
    log.assistant([tool_use("t2")], input_total=45_200, output=80)
    log.tool_result("t2", "y" * 10_000)
    log.compact("auto", 167_700, "This session is being continued: the parser was refactored.")
    log.user("go on")
    log.assistant([text_block("Going on.")], input_total=52_000, output=40)
    return log


def strip_usage(text: str) -> str:
    """The log with every usage field removed: Claude Code's message.usage and compactMetadata.preTokens, Codex's
    token_count events."""
    out = []
    for line in text.splitlines():
        obj = json.loads(line)
        if isinstance(obj.get("message"), dict):
            obj["message"].pop("usage", None)
        if isinstance(obj.get("compactMetadata"), dict):
            obj["compactMetadata"].pop("preTokens", None)
        payload = obj.get("payload")
        if obj.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "token_count":
            continue
        out.append(json.dumps(obj))
    return "\n".join(out) + "\n"


def test_the_logged_bill_sums_each_call_once():
    history = parse_history(claude_session().text(), source="c.jsonl")
    bill = logged_bill(history)
    assert bill is not None
    # three calls (the first one logged over two lines), each 3 uncached + 100 written + the rest read
    assert (bill.calls, bill.input, bill.cache_write) == (3, 9, 300)
    assert bill.cache_read == (40_000 - 103) + (45_200 - 103) + (52_000 - 103)
    assert bill.output == 120 + 80 + 40


def test_without_usage_the_bill_and_the_context_after_read_no_usage():
    for text in (claude_session().text(), codex_session().text()):
        original = follow_log(parse_history(text, source="log.jsonl"), usage=False)
        stripped = follow_log(parse_history(strip_usage(text), source="log.jsonl"), usage=False)
        assert original.bill == stripped.bill and original.bill is not None and original.bill.calls >= 3
        assert [c.predicted_tokens_after for c in original.compactions] == [
            c.predicted_tokens_after for c in stripped.compactions]
        assert original.logged_bill is not None and stripped.logged_bill is None


@pytest.mark.slow
def test_a_real_log_with_its_usage_stripped_gives_the_same_bill(tmp_path):
    folder = need_shared(shared_dir() / "real_sessions")
    for name in ("claude_code__ad_ff0201aecb_0.jsonl", "codex__a6_0726a7452e_0.jsonl"):
        path = folder / name
        bare = tmp_path / name
        bare.write_text(strip_usage(path.read_text(encoding="utf-8")), encoding="utf-8")
        original, stripped = follow_log(load_history(path), usage=False), follow_log(load_history(bare), usage=False)
        assert original.bill == stripped.bill
        assert [c.predicted_tokens_after for c in original.compactions] == [
            c.predicted_tokens_after for c in stripped.compactions]


def codex_session() -> CodexLog:
    log = CodexLog()
    log.turn().user("Fix the bug.").reasoning().call("c1").tokens(20_000, 300, cached=2_432, reasoning=100)
    log.output("c1", "z" * 8_000).reasoning().call("c2").tokens(22_500, 200, cached=19_968, reasoning=50)
    log.output("c2", "w" * 4_000).say("Fixed.").tokens(23_800, 50, cached=22_400).end_turn()
    log.compacted(["Fix the bug."], after_estimate=9_000)
    log.turn().user("Now the docs.").reasoning().say("Done.").tokens(12_000, 80, cached=2_432).end_turn()
    return log


def test_the_fit_measures_misses_resets_and_output_on_the_logged_calls():
    history = parse_history(claude_session().text(), source="c.jsonl")
    run = follow_log(history)
    model = fit_bill_model([(history, run.calls)], agent="claude_code", family="test")
    assert model.sessions == 1
    # the call after the compaction read 51,897 (everything but the last 103 tokens): the logged reset part
    assert model.reset_cached_tokens == 52_000 - 103
    assert model.uncached_per_call == 3
    assert model.call_miss_share == pytest.approx(0.0, abs=1e-9)
    assert model.anchor_share == pytest.approx(45_200 / 167_000)  # the last call before the compaction, billed


# -- the context right after a compaction -------------------------------------------------------------------------

def test_compaction_at_end_is_simulates_manual_compaction_at_the_last_check(long_history):
    history = long_history
    from workbench.knobs import Knobs

    knobs = Knobs()
    forced = compaction_at_end(history, knobs)
    assert forced is not None
    run = simulate(history, knobs.replace(proactive_compaction=False, reactive_compaction=False,
                                          manual_compact_checks=str(run_checks(history, knobs) - 1)))
    (comp,) = [c for c in run.compressions if c.trigger == "manual"]
    assert (forced.boundary, forced.tokens_after, forced.briefing_chars) == (comp.boundary, comp.tokens_after,
                                                                             comp.briefing_chars)


def run_checks(history, knobs) -> int:
    from workbench.counting.checks import check_indices

    return len(check_indices(history, knobs.check_point))


def test_the_context_after_is_predicted_from_before_the_compaction_never_from_the_summary_or_later_usage():
    base = follow_log(parse_history(claude_session().text(), source="c.jsonl"))
    (check,) = base.compactions
    assert check.logged_tokens_after == 52_000
    # the agent's summary is ten times longer and the call after it billed twice as much: nothing changes
    longer = claude_session().text().replace("the parser was refactored.", "the parser was refactored. " * 10)
    more = claude_session().text().replace('"cache_read_input_tokens": 51897', '"cache_read_input_tokens": 103897')
    for text in (longer, more):
        again = follow_log(parse_history(text, source="c.jsonl"))
        assert again.compactions[0].predicted_tokens_after == check.predicted_tokens_after
    assert follow_log(parse_history(more, source="c.jsonl")).compactions[0].logged_tokens_after == 104_000


def test_fit_after_finds_a_floor_for_summaries_that_do_not_grow_with_what_they_fold():
    from workbench.analysis.real_logs.after_compaction import AfterCompaction
    from workbench.knobs import Knobs

    afters = [AfterCompaction(index=i, call_index=i + 1, predicted_tokens=50_000, briefing_tokens=100,
                              rest_tokens=49_900, restore_knob=2_000, logged_tokens=50_000 + 2_500 + i,
                              features={"previous_chars": 0, "bucket": "none", "new_material_chars": 0,
                                        "compact_history_chars": 10_000 * (i + 1), "target_chars": 30_000,
                                        "regenerate": True}, actual_chars=12_000)
              for i in range(6)]
    claude = Knobs(restore_files=5)  # the restore worked out by rules: its constant is held towards them
    fit = fit_after(afters, claude)
    assert (fit.model.new_chars_ratio, fit.model.min_chars) == (0.0, 12_000)
    # logged = rest - 2,000 + restore + 3,000 (12,000 chars / 4): the restore is the median of what is left,
    # 1,600 + i for i = 0..5, i.e. 1,602.5, weighed 6 / (6 + 10) against the rules alone: 601
    assert fit.restore_tokens == 601
    assert fit_after(afters, Knobs()).restore_tokens == 1_602  # no rules (Codex): the median, rounded half to even
    assert after_tokens(afters[0], fit.model, fit.restore_tokens) == 49_900 - 2_000 + 601 + 3_000
    knobs = fit.knobs(Knobs())
    assert (knobs.sim_min_chars, knobs.sim_new_chars_ratio, knobs.compaction_restore_tokens) == (12_000, 0.0, 601)
    many = [dataclasses.replace(a, index=a.index + 6 * k) for k in range(10) for a in afters]  # 60: nearer the median
    assert fit_after(many, claude).restore_tokens == round(1_602.5 * 60 / 70)


# -- the command and the real logs --------------------------------------------------------------------------------

def test_reality_json_carries_the_bill_and_the_context_after(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(claude_session().text())
    assert main(["reality", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (session,) = out["sessions"]
    assert session["logged_bill"] == {"calls": 3, "input": 9, "cache_read": 136_891, "cache_write": 300,
                                      "output": 240}
    assert set(session["bill"]) == {"calls", "input", "cache_read", "cache_write", "output"}
    assert session["bill"]["calls"] == 3
    (c,) = session["compactions"]
    assert c["logged_tokens_after"] == 52_000 and c["predicted_tokens_after"] > 40_000
    assert out["summary"]["bills"] == 1 and out["summary"]["after_compactions"] == 1


def test_reality_prints_the_bill_beside_the_logs_and_the_context_after(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(claude_session().text())
    assert main(["reality", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tokens after (logged)" in out and "52,000" in out
    assert "bill units" in out and "logged units" in out
    assert "bill within ±10% of the log's (bill units):" in out


def test_calibrate_writes_the_size_model_into_the_yaml(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(claude_session().text())
    out = tmp_path / "k.yaml"
    assert main(["calibrate", str(path), "--no-held-out", "--out", str(out), "--json"]) == 0
    fitted = json.loads(capsys.readouterr().out)["after_compaction"]["claude_code"]
    knobs = load_knobs(out.read_text())
    assert fitted["summaries"] == 1 and fitted["compactions"] == 1
    assert (knobs.sim_min_chars, knobs.compaction_restore_tokens) == (fitted["sim_min_chars"],
                                                                      fitted["compaction_restore_tokens"])
    assert round(knobs.sim_new_chars_ratio, 4) == fitted["sim_new_chars_ratio"]
    assert "# briefing size fitted to 1 logged summary:" in out.read_text()


@pytest.mark.slow
def test_on_the_real_sessions_the_shipped_settings_predict_the_context_after_and_the_bill():
    folder = need_shared(shared_dir() / "real_sessions")
    histories = [load_history(p) for p in sorted(folder.glob("*.jsonl"))]
    with_usage = reality_summary([follow_log(h) for h in histories])
    assert with_usage["after_compactions"] == 16
    assert with_usage["after_within_10pct"] >= 12  # 13 of 16 when measured (docs/reality.md)
    assert with_usage["bills"] == 11 and with_usage["bill_within_10pct"] >= 9  # 9 of 11
    ignored = reality_summary([follow_log(h, usage=False) for h in histories])
    assert ignored["bills"] == 11 and ignored["bill_within_10pct"] >= 9  # 9 of 11 (the estimate, anchored at the compactions)


def test_on_a_real_log_only_the_turn_after_the_task_list_was_completed_is_marked_and_it_missed():
    """claude_code__fc_99c919b212_0 (2.1.29) changed its task list in two turns: the turn after the second, which
    completed every task, read only the system prompt and tools (16,496 of the 147,915 tokens the call before it
    wrote); the turn after the first, which left tasks open, read all of it (114,930) and is not marked."""
    folder = need_shared(shared_dir() / "real_sessions")
    history = load_history(folder / "claude_code__fc_99c919b212_0.jsonl")
    calls = follow_log(history).calls
    marked = [k for k, c in enumerate(calls) if c.task]
    assert [calls[k].index for k in marked] == [191]
    reads = [history.messages[calls[k].index].usage.cache_read_tokens for k in marked]  # type: ignore[union-attr]
    assert [(r, calls[k - 1].context) for r, k in zip(reads, marked, strict=True)] == [(16_496, 147_915)]
    opened = next(c for c in calls if c.index == 83)
    assert history.messages[83].usage.cache_read_tokens == 114_930 and not opened.task  # type: ignore[union-attr]


@pytest.mark.slow
def test_held_out_folds_leave_the_session_and_its_repository_out_of_every_fit():
    from workbench.explore.reality_folds import prepare

    folder = need_shared(shared_dir() / "real_sessions")
    repo = {f["file"]: f["source"]["repo"] for f in json.loads((folder / "facts.json").read_text())["sessions"]}
    paths = sorted(folder.glob("*.jsonl"))[-5:]  # three Codex logs (one repository) and two Claude Code ones
    folds = prepare([(load_history(p), repo[p.name], "large") for p in paths])
    by_session = folds.held_out(usage=True, fold="session")
    by_repo = folds.held_out(usage=True, fold="repository")
    codex = [h for h in by_session if h.agent == "codex"]
    assert len(codex) == 3 and all(h.trained_on == 2 and h.reality is not None for h in codex)
    # every Codex log comes from one repository: leaving it out leaves nothing to fit on
    assert all(h.reality is None and h.trained_on == 0 for h in by_repo if h.agent == "codex")
    assert all(h.bill_error is not None for h in codex)
    assert sum(len(h.after_errors) for h in codex) == 6


@pytest.mark.parametrize("args", [
    {}, [], {"a": []}, {"a": {}}, [1, [2, [3, {}]]], [[], [[]], {}], {"a": {"b": {"c": [1, "x", None]}}},
    {"a": None, "b": True, "c": False}, {"a": 2**63 - 1}, {"a": -(2**63)}, {"a": 2**63}, {"a": 2**64},
    {"a": 1.5}, {"a": 1e16}, {"a": float("nan")}, {"a": "\ud800"}, {1: "x"}, {"a": (1, 2)}, {"k\n": "v"},
    {"a": "é\U0001F600\n\t\x00\x1f\x7f\"\\ \u2028"}, [{"file_path": "a.py", "content": "x = 1\n" * 500}] * 3,
], ids=repr)
def test_a_tool_calls_arguments_count_as_json_writes_them(args):
    """A tool call's visible size counts its arguments as ``json.dumps`` writes them, whichever path counts them."""
    assert args_chars(args) == len(json.dumps(args, ensure_ascii=False, default=str))


def test_a_command_or_skill_switches_claude_codes_thinking_and_each_setting_reads_its_own_cache():
    """Before 2.1.38 a prompt command's or skill's expansion (an isMeta user message) switched thinking off until
    the next plain prompt; a call after a switch reads what the latest call with its own setting wrote if that call
    is within the cache's 20-block look-back, else only the system part. From 2.1.38 nothing switches."""
    import numpy as np

    from workbench.analysis.real_logs.bill import LOOKBACK_BLOCKS, window_calls
    from workbench.history.model import History

    def msg(i: int, role: str, text: str, **meta: object) -> Message:
        return Message(id=f"m{i}", role=role, parts=(text_part(text),), metadata=dict(meta))

    model = "claude-opus-4-5-20251101"
    msgs = (msg(0, "user", "fix it"), msg(1, "assistant", "done", model=model),
            msg(2, "user", "<command-message>review</command-message>\n<command-name>/review</command-name>"),
            msg(3, "user", "You are an expert code reviewer.", isMeta=True),
            msg(4, "assistant", "reviewed", model=model),
            msg(5, "user", "<local-command-caveat>Caveat: local commands</local-command-caveat>", isMeta=True),
            msg(6, "user", "thanks"), msg(7, "assistant", "ok", model=model),
            msg(8, "user", "quiet now", thinkingOff=True), msg(9, "assistant", "ok", model=model))
    history = History(id="h", messages=msgs)
    calls = window_calls(history, history, 0, 0, len(msgs), np.full(len(msgs), 1_000), 30_000, reset=True)
    assert [c.thinking for c in calls] == [True, False, True, False]  # the caveat switches nothing
    assert [c.blocks for c in calls] == [1, 4, 7, 9]
    old, new = cache_rules("claude_code", "2.1.37"), cache_rules("claude_code", "2.1.38")
    assert old.thinking_switch and not new.thinking_switch
    bill_old, bill_new = modelled_bill(calls, old, NO_MISS), modelled_bill(calls, new, NO_MISS)
    contexts = [c.context for c in calls]
    # 2.1.38: each call reads what the one before it wrote; 2.1.37: the review reads the system part, the plain turn
    # after it what the first (thinking on) call wrote, 6 blocks back; the quiet prompt what the review wrote
    assert bill_new.cache_read == 20_000 + sum(contexts[:3])
    assert bill_old.cache_read == 20_000 + 20_000 + contexts[0] + contexts[1]
    far = [dataclasses.replace(c, blocks=c.blocks + (LOOKBACK_BLOCKS + 1) * k) for k, c in enumerate(calls)]
    assert modelled_bill(far, old, NO_MISS).cache_read == 20_000 * 4  # out of the look-back: the system part


def test_a_turn_after_one_that_completed_the_task_list_is_a_task_turn_and_an_open_list_is_not():
    import numpy as np

    from workbench.analysis.real_logs.bill import window_calls
    from workbench.history.model import History, tool_call_part

    def msg(i: int, role: str, *parts: object, **meta: object) -> Message:
        return Message(id=f"m{i}", role=role, parts=tuple(parts), metadata=dict(meta))  # type: ignore[arg-type]

    model = "claude-opus-4-6"
    create = [tool_call_part("TaskCreate", f"c{k}", {"subject": f"step {k}"}) for k in (1, 2)]
    msgs = (msg(0, "user", text_part("plan it")), msg(1, "assistant", *create, model=model),
            msg(2, "user", text_part("go")),
            msg(3, "assistant", tool_call_part("TaskUpdate", "u1", {"taskId": "1", "status": "completed"}), model=model),
            msg(4, "user", text_part("next")),
            msg(5, "assistant", tool_call_part("TaskUpdate", "u2", {"taskId": "2", "status": "completed"}), model=model),
            msg(6, "user", text_part("thanks")), msg(7, "assistant", text_part("ok"), model=model),
            msg(8, "user", text_part("and")), msg(9, "assistant", text_part("ok"), model=model))
    history = History(id="h", messages=msgs)
    calls = window_calls(history, history, 0, 0, len(msgs), np.full(len(msgs), 1_000), 30_000, reset=True)
    # task 1 of 2 done: the list is open; both done: the next turn is a task turn; the one after it is not
    assert [c.task for c in calls] == [False, False, False, True, False]


def test_the_window_after_a_compaction_keeps_the_thinking_setting_and_reads_nothing_written_before_it():
    """Claude Code sets the thinking budget once per user input and compacts inside that query: a window that starts
    at a compaction is sent with the setting of the prompt before it, and a call after a switch there cannot read
    what a call before the compaction wrote (its messages are gone)."""
    import numpy as np

    from workbench.analysis.real_logs.bill import carried_thinking, window_calls
    from workbench.history.model import History

    def msg(i: int, role: str, text: str, **meta: object) -> Message:
        return Message(id=f"m{i}", role=role, parts=(text_part(text),), metadata=dict(meta))

    model = "claude-opus-4-5-20251101"
    msgs = (msg(0, "user", "fix it"), msg(1, "assistant", "a", model=model),
            msg(2, "user", "<command-message>review</command-message>\n<command-name>/review</command-name>"),
            msg(3, "user", "You are an expert code reviewer.", isMeta=True), msg(4, "assistant", "b", model=model),
            msg(5, "user", "summary of the conversation", isCompactSummary=True),  # the window after the compaction
            msg(6, "assistant", "c", model=model), msg(7, "user", "thanks"), msg(8, "assistant", "d", model=model))
    history = History(id="h", messages=msgs)
    assert carried_thinking(history, 5) is False and carried_thinking(history, 2) is True
    assert carried_thinking(history, 0) is None
    tokens = np.full(len(msgs), 1_000)
    first = window_calls(history, history, 0, 0, 5, tokens, 30_000, reset=True)
    after = window_calls(history, History(id="h", messages=msgs[5:]), 5, 5, len(msgs), tokens[5:], 30_000, reset=True)
    assert [c.thinking for c in first] == [True, False]
    assert [c.thinking for c in after] == [False, True]  # not None: the review's setting carries over
    rules = cache_rules("claude_code", "2.1.37")
    bill = modelled_bill(first + after, rules, NO_MISS)
    # the plain prompt after the compaction switches thinking back on: the only call with that setting is from before
    # the compaction (2 blocks back as the new window counts), so it reads the system part, not that call's prefix;
    # the first call, the review's and the first after the compaction read the system part too
    assert bill.cache_read == 20_000 * 4


def test_a_calls_time_is_when_its_request_was_sent_the_message_before_it():
    """The cache's lifetime runs between requests: a call is timed by the prompt or tool result before it, and an
    answer written long after its request still finds the cache its previous request refreshed."""
    import numpy as np

    from workbench.analysis.real_logs.bill import request_time, window_calls
    from workbench.history.model import History

    def msg(i: int, role: str, at: str | None, **meta: object) -> Message:
        md = dict(meta) | ({"createdAt": at} if at else {})
        return Message(id=f"m{i}", role=role, parts=(text_part("x"),), metadata=md)

    model = "claude-opus-4-5-20251101"
    msgs = (msg(0, "user", "2026-01-01T10:00:00Z"), msg(1, "assistant", "2026-01-01T10:00:40Z", model=model),
            msg(2, "user", "2026-01-01T10:05:10Z"), msg(3, "assistant", "2026-01-01T10:06:00Z", model=model),
            msg(4, "user", None), msg(5, "assistant", "2026-01-01T10:07:00Z", model=model))
    history = History(id="h", messages=msgs)
    assert request_time(msgs, 3) == request_time(msgs, 1) + 310  # the prompts' times
    assert request_time(msgs, 0) == request_time(msgs, 1)  # nothing before the first message: its own time
    assert request_time(msgs, 5) == request_time(msgs, 3) + 110  # the message before has no time: the answer's
    calls = window_calls(history, history, 0, 0, len(msgs), np.full(len(msgs), 1_000), 30_000, reset=True)
    t0 = calls[0].time
    assert t0 is not None
    assert [round(c.time - t0) for c in calls if c.time is not None] == [0, 310, 420]  # the last: no time before it
    # a long first answer: 290 s between the first two requests, within the 5-minute lifetime, but 340 s between
    # their answers, past it (at its edge, where this model reads nothing)
    early = dataclasses.replace(calls[1], time=t0 + 290)
    rules = cache_rules("claude_code", "2.1.7")
    by_request = modelled_bill([calls[0], early], rules, NO_MISS)
    assert by_request.cache_read == 20_000 + calls[0].context  # the second call reads what the first wrote
    by_answer = modelled_bill([dataclasses.replace(calls[0], time=t0 + 40), dataclasses.replace(early, time=t0 + 380)],
                              rules, NO_MISS)
    assert by_answer.cache_read == 20_000  # timed by the answers it would read nothing


def test_where_the_log_counts_output_as_the_stream_began_the_bill_takes_that_count_by_the_answers_first_part():
    """Claude Code 2.1.12-2.1.30 log each answer's output as its stream began: a token or two for an answer that
    opens with text or reasoning, ~25 for one that opens with a tool call, whatever its size. The bill models that
    count there (medians fitted on such calls, and on 2.1.31 and later, whose median call is logged the same way) and
    the answer's size elsewhere; the size fit leaves the start counts out."""
    assert [cache_rules("claude_code", v).start_output for v in ("2.1.7", "2.1.12", "2.1.29", "2.1.30", "2.1.31")] \
        == [False, True, True, True, False]
    assert not cache_rules("codex", "0.142.0").start_output

    def session(version: str, outs: tuple[int, int]) -> ClaudeLog:
        log = ClaudeLog(version=version)
        log.user("Fix the parser.")
        for k in range(4):
            log.assistant([tool_use(f"t{k}", "Bash", command="pytest " + "x" * 400)], input_total=40_000 + 1_000 * k,
                          output=outs[1])
            log.tool_result(f"t{k}", "ok")
            log.assistant([text_block("Checked. " + "y" * 2_000)], input_total=40_500 + 1_000 * k, output=outs[0])
            log.user("go on")
        return log

    old = parse_history(session("2.1.29", (1, 25)).text(), source="old.jsonl")
    new = parse_history(session("2.1.39", (2, 24)).text(), source="new.jsonl")
    old_calls, new_calls = follow_log(old).calls, follow_log(new).calls
    assert [c.opens_with_tool for c in old_calls[:2]] == [True, False]
    # fitted on the later version alone: its median calls give the start counts, its sizes the ratio
    fitted = fit_bill_model([(new, new_calls)], agent="claude_code", family="test")
    assert (fitted.start_output, fitted.start_output_tool) == (2.0, 24.0)
    bill = modelled_bill(old_calls, cache_rules("claude_code", "2.1.29"), fitted)
    assert bill.output == 4 * 2 + 4 * 24  # not the answers' sizes: 2,000-character texts
    sized = modelled_bill(old_calls, cache_rules("claude_code", "2.1.31"), fitted)
    assert sized.output == round(sum(max(0.0, fitted.output_ratio * c.visible + fitted.output_per_call)
                                     for c in old_calls))
    # fitted on the earlier version: its calls measure the start counts and nothing of the answers' sizes
    early = fit_bill_model([(old, old_calls)], agent="claude_code", family="test")
    assert (early.start_output, early.start_output_tool) == (1.0, 25.0)
    assert (early.output_ratio, early.output_per_call) == (1.0, 0.0)  # no size measured: the defaults


def test_the_fits_table_shows_the_start_counts_only_where_a_log_counts_output_so():
    from workbench.analysis.real_logs.bill import SHIPPED, bill_model_table

    headers, rows = bill_model_table({k: SHIPPED[k] for k in ("claude_code 2.1.20-<2.1.31", "codex")})
    column = headers.index("output at start (tool first)")
    assert [row[column] for row in rows] == ["1 (25)", "–"]


def test_the_carried_thinking_setting_counts_every_log_message_before_the_window_whatever_the_segment_carries_in():
    """A window's segment starts with what the agent carried in (its offset lies that many messages before the
    window): the setting carried into it is the last prompt's before the window's first log message, not before the
    offset."""
    import numpy as np

    from workbench.analysis.real_logs.bill import window_calls
    from workbench.history.model import History

    def msg(i: int, role: str, text: str, **meta: object) -> Message:
        return Message(id=f"m{i}", role=role, parts=(text_part(text),), metadata=dict(meta))

    model = "claude-opus-4-5-20251101"
    msgs = (msg(0, "user", "<command-message>review</command-message>\n<command-name>/review</command-name>"),
            msg(1, "user", "You are an expert code reviewer.", isMeta=True), msg(2, "assistant", "a", model=model),
            msg(3, "assistant", "b", model=model), msg(4, "user", "go on"),  # thinking back on
            msg(5, "user", "summary of the conversation", isCompactSummary=True), msg(6, "assistant", "c", model=model))
    history = History(id="h", messages=msgs)
    carried = msg(99, "user", "what the agent re-attached", isMeta=True)
    segment = History(id="h", messages=(carried, *msgs[5:]))
    calls = window_calls(history, segment, 4, 5, len(msgs), np.full(len(segment.messages), 1_000), 30_000, reset=True)
    assert [c.index for c in calls] == [6]
    assert calls[0].thinking is True  # "go on" (message 4) set it, after the review's expansion turned it off
