"""Each agent's own trigger, exactly, and the reality check: a replay with the agent's settings fires where the
agent fired in its own log. Small hand-built logs pin each rule; ../shared/real_sessions checks it on real ones."""

from __future__ import annotations

import json

import numpy as np
import pytest
from agent_log_builders import ClaudeLog, CodexLog, text_block, tool_use
from conftest import REPO, need_shared, shared_dir

from workbench.analysis.real_logs.agent_settings import agent_settings, claude_code_reserve, raw_codex_window
from workbench.analysis.real_logs.calibration import calibrate, fit_agent
from workbench.analysis.real_logs.estimate_fit import NO_STRUCTURE
from workbench.analysis.real_logs.reality import follow_log, reality_summary
from workbench.cli import main
from workbench.counting.checks import check_indices
from workbench.counting.counters import trigger_tokens
from workbench.counting.tokens import CountCache
from workbench.history.readers import load_history, parse_history
from workbench.knobs import load_knobs
from workbench.presets import preset_for

SESSIONS = shared_dir() / "real_sessions"


# -- Claude Code ----------------------------------------------------------------------------------------------

def claude_crossing(version: str = "2.1.25", *, first: int = 160_000, second: int = 165_200) -> ClaudeLog:
    """Two tool steps; the agent's measure crosses 167,000 only after the second step's results."""
    log = ClaudeLog(version=version)
    log.user("Refactor the parser.")
    log.assistant([text_block("Reading."), tool_use("t1")], input_total=first, output=100)
    log.tool_result("t1", "x" * 20_000)  # ~5,000 tokens by Claude Code's chars/4
    log.assistant([tool_use("t2")], input_total=second, output=100)
    log.tool_result("t2", "y" * 10_000)  # ~2,500 more
    return log


def test_claude_code_preset_follows_the_version_that_wrote_the_log():
    assert [preset_for("claude_code", v) for v in ("2.0.76", "2.1.1", "2.1.2", "2.1.20", "2.1.21", "2.1.42")] == [
        "claude_code_2_1_1", "claude_code_2_1_1", "claude_code_2_1_20", "claude_code_2_1_20", "claude_code",
        "claude_code"]
    assert claude_code_reserve("2.1.25", "claude-opus-4-5-20251101") == 33_000
    assert claude_code_reserve("2.1.7", "claude-opus-4-5-20251101") == 45_000


def test_claude_code_reserve_uses_claude_codes_own_model_table_not_the_registry():
    """cli.js's max-output table (2.0.76-2.1.39): an old model's small cap lowers the reserve, a Bedrock id matches
    by its name, and a model nobody lists gets 32,000; from 2.1.21 the 20,000 cap binds above 20,000."""
    assert claude_code_reserve("2.1.7", "claude-3-5-haiku-20241022") == 8_192 + 13_000
    assert claude_code_reserve("2.1.7", "us.anthropic.claude-3-5-sonnet-20241022-v2:0") == 8_192 + 13_000
    assert claude_code_reserve("2.1.7", "claude-3-opus-20240229") == 4_096 + 13_000
    assert claude_code_reserve("2.1.7", "claude-3-7-sonnet-20250219") == 32_000 + 13_000  # "3-7": the default
    assert claude_code_reserve("2.1.7", "claude-sonnet-4-5") == 32_000 + 13_000  # 64,000, under the 32,000 default
    assert claude_code_reserve("2.1.30", "claude-3-haiku-20240307") == 4_096 + 13_000
    assert claude_code_reserve("2.1.30", "some-future-model") == 20_000 + 13_000
    assert claude_code_reserve("2.1.7", None) == 32_000 + 13_000


def test_claude_code_checks_before_every_model_call_even_when_the_log_lost_the_results():
    """After a user message, after a step's complete tool results, and after a call whose results are missing."""
    log = ClaudeLog().user("a").assistant([tool_use("t1"), tool_use("t2")], input_total=10, output=1)
    log.tool_result("t1", "1").tool_result("t2", "2").assistant([tool_use("t3")], input_total=20, output=1)
    log.compact("auto", 30, "summary")  # t3's result never made it into the log
    h = parse_history(log.text(), source="c.jsonl")
    assert [m.role for m in h.messages] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert check_indices(h, "call").tolist() == [0, 3, 4, 5]


def test_claude_code_fires_where_the_bill_plus_what_came_since_reaches_window_minus_33000():
    log = claude_crossing().compact("auto", 167_700, "The summary.").user("go on")
    h = parse_history(log.text(), source="c.jsonl")
    (check,) = follow_log(h).compactions
    assert (check.real_index, check.predicted_index, check.error) == (5, 5, 0)
    # measure at the check that fired: the second call's billed total + round(10,000 / 4)
    assert check.predicted_tokens_before == 165_300 + 2_500


def test_claude_code_up_to_2_1_1_compares_the_last_bill_alone():
    """2.1.1: threshold 155,000 on T only, so the tool results after the bill do not count until the next call."""
    log = claude_crossing("2.1.1", first=150_000, second=154_850)
    log.assistant([text_block("ok")], input_total=157_000, output=10).user("next")
    h = parse_history(log.compact("auto", 157_010, "S.").text(), source="c.jsonl")
    assert agent_settings(h).preset == "claude_code_2_1_1"
    (check,) = follow_log(h).compactions
    assert check.predicted_index == check.real_index == 7  # not after the tool results at 4: T was 154,950 there...
    knobs = agent_settings(h).knobs.replace(trigger_counter="usage")
    counts = CountCache().counts_for(h)
    measure = np.cumsum(trigger_tokens(counts, knobs)) + knobs.hidden_prefix_tokens
    assert int(measure[4]) == 154_850 + 100  # ...the bill alone, no estimate of the 10,000 chars


def test_a_missing_tool_result_is_stood_in_for_by_the_agents_own_logged_measure():
    """The boundary's logical parent is not in the file: with usage, preTokens says what the agent counted."""
    log = claude_crossing(second=164_000)
    log.assistant([tool_use("t3")], input_total=166_000, output=5)
    h = parse_history(log.compact("auto", 167_400, "S.", parent_missing=True).text(), source="c.jsonl")
    (check,) = follow_log(h).compactions
    assert check.note and check.predicted_index == check.real_index


def claude_steps(first: int, second: int, steps: int = 44) -> ClaudeLog:
    """Tool steps of ~3,500 tokens each; the agent compacts automatically before steps ``first`` and ``second``
    (20 and 40: where the preset's estimate, usage ignored, crosses 167,000 in each window)."""
    log = ClaudeLog().user("Port the test suite.")
    for k in range(steps):
        if k in (first, second):
            log.compact("auto", 167_500, "Summary of the work so far. " * 20).user("Go on.")
        log.assistant([tool_use(f"t{k}")], input_total=20_000 + 1_000 * k, output=50)
        log.tool_result(f"t{k}", f"line {k} " * 1_800 + "z" * (k % 7) * 100)
    return log


@pytest.mark.parametrize("wrong_by", [-12_000, -5_000, 20_000])
def test_without_usage_an_earlier_automatic_compaction_pins_the_estimate_of_the_windows_after_it(wrong_by,
                                                                                                 monkeypatch):
    """The agent compacted where its measure crossed its trigger: a hidden prefix wrong by ``wrong_by`` puts the first
    compaction off, and the shift the first one pins puts the second where the agent made it (within the one step
    the pin leaves open) and the context after it closer to the right prefix's, where without it the second is off
    as much as the first."""
    from workbench.analysis.real_logs import reality

    h = parse_history(claude_steps(20, 40).text(), source="c.jsonl")
    shipped = agent_settings(h).knobs
    right = follow_log(h, usage=False).compactions
    assert [c.error for c in right] == [0, 0]
    wrong = shipped.replace(hidden_prefix_tokens=shipped.hidden_prefix_tokens + wrong_by)
    first, second = follow_log(h, usage=False, knobs=wrong).compactions
    assert first.error is not None and abs(first.error) >= 4
    assert second.error is not None and abs(second.error) <= 2
    assert first.predicted_tokens_after == right[0].predicted_tokens_after + wrong_by  # nothing pinned before it
    assert right[1].predicted_tokens_after is not None and second.predicted_tokens_after is not None
    assert abs(second.predicted_tokens_after - right[1].predicted_tokens_after) <= abs(wrong_by) / 2
    monkeypatch.setattr(reality, "pinned_shifts", lambda *args, **kwargs: None)
    assert [c.error for c in follow_log(h, usage=False, knobs=wrong).compactions] == [first.error, first.error]
    assert follow_log(h, knobs=wrong).compactions == follow_log(h).compactions  # with usage: the log's own measure


def test_which_logged_compactions_pin_the_estimate_is_one_rule(monkeypatch):
    """``follow_log`` pins the windows after the compactions ``pins_estimate`` accepts (the count docs/reality.md
    gives, scripts/reality_estimate.py, reads the same rule): where it accepts none, nothing is pinned."""
    from workbench.analysis.real_logs import reality

    h = parse_history(claude_steps(20, 40).text(), source="c.jsonl")
    assert h.log is not None and not h.log.starts_mid_session
    first, second = sorted(h.log.compactions, key=lambda c: c.index)
    assert reality.pins_estimate(h.log, first, first=True) and reality.pins_estimate(h.log, second, first=False)
    shipped = agent_settings(h).knobs
    wrong = shipped.replace(hidden_prefix_tokens=shipped.hidden_prefix_tokens - 12_000)
    pinned = [c.error for c in follow_log(h, usage=False, knobs=wrong).compactions]
    monkeypatch.setattr(reality, "pins_estimate", lambda *args, **kwargs: False)
    unpinned = [c.error for c in follow_log(h, usage=False, knobs=wrong).compactions]
    assert unpinned == [pinned[0], pinned[0]] != pinned


# -- Codex ----------------------------------------------------------------------------------------------------

def codex_crossing(reasoning: int) -> CodexLog:
    """A raw 128,000 window (logged 121,600): limit 115,200. The second turn's reasoning is re-counted."""
    log = CodexLog(model="gpt-5.3-codex-spark", window_logged=121_600)
    log.turn().user("# AGENTS.md instructions for /repo\n\nbe careful").user("Start.")
    log.reasoning().call("c1").output("c1", "ok").tokens(100_000, 1_000, reasoning=reasoning)
    log.reasoning().say("Done first part.").tokens(101_500, 500, reasoning=reasoning).end_turn()
    log.turn().user("Continue.").reasoning().call("c2").output("c2", "z" * 4_000).tokens(104_000, 300)
    return log


def test_codex_limit_is_90_percent_of_the_raw_window():
    h = parse_history(codex_crossing(0).text(), source="x.jsonl")
    s = agent_settings(h)
    assert raw_codex_window(121_600) == 128_000 and s.knobs.context_window_tokens == 128_000
    assert s.knobs.trigger_ratio == 0.9 and s.knobs.trigger_at_equal


@pytest.mark.parametrize(("reasoning", "fires"), [(0, False), (4_000, True)], ids=["no-reasoning", "reasoning"])
def test_codex_counts_earlier_turns_reasoning_once_a_new_user_turn_starts(reasoning, fires):
    """104,300 + ~1,000 of output: under 115,200 unless 1.26 x the first turn's 8,000 reasoning tokens is added."""
    log = codex_crossing(reasoning).compacted(["Start.", "Continue."], after_estimate=9_000)
    log.say("after").tokens(10_000, 10).end_turn()
    h = parse_history(log.text(), source="x.jsonl")
    (check,) = follow_log(h).compactions
    assert (check.predicted_index == check.real_index) is fires
    if not fires:
        assert check.predicted_index is None


def test_contextual_user_messages_do_not_start_a_turn():
    from workbench.counting.usage import is_user_turn

    h = parse_history(codex_crossing(0).text(), source="x.jsonl")
    users = [m for m in h.messages if m.role == "user"]
    assert [is_user_turn(m) for m in users] == [False, True, True]


# -- following the log ----------------------------------------------------------------------------------------

def test_following_a_log_never_looks_a_price_up(monkeypatch):
    """``workbench reality`` reports positions, not dollars: no price lookup (a cold run would parse litellm's
    3.5 MB registry for it), so no price warning either; the app's settings for the same log keep the warning."""
    def refuse(model: str) -> None:
        raise AssertionError(f"price looked up for {model}")

    log = codex_crossing(4_000).compacted(["Start.", "Continue."], after_estimate=9_000)
    log.say("after").tokens(10_000, 10).end_turn()
    codex = parse_history(log.text(), source="x.jsonl")
    manual = claude_crossing(first=168_000, second=168_500).compact("manual", 171_000, "S.").user("again")
    claude = parse_history(manual.text(), source="c.jsonl")  # a manual window: replayed whole, as a Run
    assert any("price registry" in w for w in agent_settings(codex).warnings)  # gpt-5.3-codex-spark: unlisted
    for module in ("workbench.analysis.real_logs.agent_settings", "workbench.replay.loop"):
        monkeypatch.setattr(f"{module}.get_prices", refuse)
    for h in (codex, claude):
        for usage in (True, False):
            s = follow_log(h, usage=usage)
            assert s.compactions and not any("price" in n for n in s.notes)


def test_manual_compactions_are_replayed_at_their_place_and_an_early_auto_one_is_extra():
    log = claude_crossing(first=168_000, second=168_500)  # over 167,000 from the first call on
    log.compact("manual", 171_000, "S.").user("again")
    h = parse_history(log.text(), source="c.jsonl")
    s = follow_log(h)
    (check,) = s.compactions
    assert (check.trigger, check.predicted_index, check.real_index) == ("manual", 5, 5)
    assert s.extra_predictions == (3,)  # the replay would have compacted before the second call


def test_reality_json_has_exactly_the_documented_shape(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text(claude_crossing().compact("auto", 167_700, "S.").user("go").text())
    assert main(["reality", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"sessions", "summary"}
    (session,) = out["sessions"]
    assert set(session) == {"file", "agent", "version", "model", "window", "preset", "compactions", "bill",
                            "logged_bill"}
    assert session["compactions"] == [{"source_line": 7, "real_index": 5, "trigger": "auto",
                                       "real_tokens_before": 167_700, "predicted_index": 5,
                                       "predicted_tokens_before": 167_800, "predicted_tokens_after": None,
                                       "logged_tokens_after": None}]  # no call after the compaction
    assert session["logged_bill"] == {"calls": 2, "input": 6, "cache_read": 160_000 - 103 + 165_200 - 103,
                                      "cache_write": 200, "output": 200}
    assert session["bill"]["calls"] == 2
    assert out["summary"]["within_2"] == 1 and out["summary"]["auto_compactions"] == 1


def test_reality_reads_folders_and_skips_what_is_not_a_history(tmp_path, capsys):
    (tmp_path / "c.jsonl").write_text(claude_crossing().compact("auto", 167_700, "S.").user("go").text())
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    assert main(["reality", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "notes.json" in captured.err
    assert "1 automatic compaction; within ±0: 1 (100%)" in captured.out


def test_reality_without_usage_says_whose_prefix_it_uses_and_how_to_fit_ones_own(tmp_path, capsys):
    """The shipped prefix is other people's (docs/reality.md: no prefix but the session's own reaches the target), so
    the table without usage says so, and names the command that fits the user's own; with usage it says nothing."""
    (tmp_path / "c.jsonl").write_text(claude_crossing().compact("auto", 167_700, "S.").user("go").text())
    assert main(["reality", str(tmp_path), "--ignore-usage"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "fitted on other people's logs (../shared/real_sessions_large" in err
    assert "`workbench calibrate` on your own logs with usage fits yours" in err
    assert main(["reality", str(tmp_path)]) == 0
    assert "calibrate" not in capsys.readouterr().err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_reality_lets_each_log_go_once_it_is_followed(tmp_path, capsys, monkeypatch, workers):
    """The command follows each log as it reads it and keeps no history after its follow, even with the cyclic GC
    paused (as the command runs): the memory of one log is in use at a time, not that of every log. With workers,
    this process follows its share so too (the workers' follows are not seen here)."""
    import gc
    import weakref

    import workbench.analysis.real_logs.reality as reality

    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.jsonl").write_text(claude_crossing().compact("auto", 167_700, "S.").user("go").text())
    followed: list[weakref.ref] = []
    alive_at_each_follow = []
    real_follow = reality.follow_log

    def follow(history, **kwargs):
        alive_at_each_follow.append(sum(r() is not None for r in followed))
        followed.append(weakref.ref(history))
        return real_follow(history, **kwargs)

    monkeypatch.setattr(reality, "follow_log", follow)
    gc.disable()
    try:
        assert main(["reality", str(tmp_path), "--json", "--workers", workers]) == 0
        assert set(alive_at_each_follow) <= {0} and all(r() is None for r in followed)
        assert len(followed) == 3 if workers == "1" else 1 <= len(followed) <= 3
    finally:
        gc.enable()
    assert len(json.loads(capsys.readouterr().out)["sessions"]) == 3


def test_following_a_log_makes_no_reference_cycle_that_keeps_its_messages():
    """What the follow builds (its windows' replays, their restores) is freed by reference counting alone: with
    the cyclic GC paused, as the command runs, a cycle would keep every window's messages to the end of the run."""
    import gc

    from workbench.history.model import Message

    history = parse_history(claude_crossing().compact("auto", 167_700, "S.").user("go").text(), source="c.jsonl")
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        cache = CountCache(by_identity=True)
        follow_log(history, cache=cache)
        cache.clear()
        del cache, history
        gc.collect()
        kept = [type(o).__name__ for o in gc.garbage if isinstance(o, Message) or type(o).__name__.endswith("Replay")
                or type(o).__name__.startswith("_Until")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert kept == []


# -- calibration ----------------------------------------------------------------------------------------------

def synthetic_log(prefix: int, ratio: float, steps: int, seed: int) -> str:
    """A log whose bill is exactly prefix + ratio x counted, to check that calibration recovers both."""
    rng = np.random.default_rng(seed)
    base = ClaudeLog(version="2.1.25").user("task")
    h0 = parse_history(base.text(), source="s.jsonl")
    knobs = agent_settings(h0).knobs.replace(**NO_STRUCTURE)  # the bill: the text alone
    log = base
    for step in range(steps):
        h = parse_history(log.text(), source="s.jsonl")
        counted = int(trigger_tokens(CountCache().counts_for(h), knobs.replace(token_ratio=1.0, log_counter="estimate")).sum())
        log.assistant([tool_use(f"t{step}")], input_total=int(round(prefix + ratio * counted)), output=1)
        log.tool_result(f"t{step}", "word " * int(rng.integers(100, 3_000)))
    return log.text()


def test_calibration_recovers_hidden_prefix_and_token_ratio_from_the_bill():
    histories = [parse_history(synthetic_log(30_000, 1.2, 25, seed), source=f"s{seed}.jsonl") for seed in (1, 2)]
    fit = fit_agent(histories)
    assert abs(fit.hidden_prefix_tokens - 30_000) < 400
    assert abs(fit.token_ratio - 1.2) < 0.01


def test_calibration_can_measure_the_hidden_prefix_at_the_first_calls():
    """The knob's own definition (first call's billed input minus the counted messages), the ratio fitted with it."""
    histories = [parse_history(synthetic_log(30_000, 1.2, 25, seed), source=f"s{seed}.jsonl") for seed in (1, 2)]
    fit = fit_agent(histories, prefix_from="first_call")
    assert abs(fit.hidden_prefix_tokens - 30_000) < 50  # the first call: 30,000 + 1.2 x the short task message
    assert abs(fit.token_ratio - 1.2) < 0.01


def test_calibrate_writes_yaml_that_loads_back(tmp_path, capsys):
    for seed in (1, 2):
        (tmp_path / f"s{seed}.jsonl").write_text(synthetic_log(30_000, 1.2, 12, seed))
    out = tmp_path / "mine.yaml"
    assert main(["calibrate", str(tmp_path), "--out", str(out), "--no-held-out"]) == 0
    knobs = load_knobs(out.read_text(), source=str(out))
    assert abs(knobs.hidden_prefix_tokens - 30_000) < 400 and knobs.strategy == "summarize"
    assert "wrote" in capsys.readouterr().out
    assert main(["reality", str(tmp_path), "--config", str(out), "--json"]) == 0


# -- the dev set ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def dev_set():
    need_shared(SESSIONS / "facts.json")
    return [load_history(p) for p in sorted(SESSIONS.glob("*.jsonl"))]


def test_with_usage_every_logged_auto_compaction_is_predicted_within_two_messages(dev_set):
    sessions = [follow_log(h) for h in dev_set]
    summary = reality_summary(sessions)
    assert summary["auto_compactions"] == 14 and summary["manual_compactions"] == 2
    assert summary["within_2"] == 14 and summary["extra_predictions"] == 0
    assert summary["within_0"] == 14  # measured: every one at its exact message


@pytest.mark.slow
def test_without_usage_leave_one_session_out(dev_set):
    """Each session predicted from a fit on the others, estimate only (docs/reality.md gives the table)."""
    result = calibrate(dev_set)
    s = result.held_out_summary
    assert s["auto_compactions"] == 14
    assert s["within_5"] >= 6  # measured 6 of 14, fitting on the other 7 Claude Code or 2 Codex logs only. The prefix
    # and ratio fitted at the long contexts (prefix_from="fit", the text alone) place 10 here, but held out on
    # ../shared/real_sessions_large 15 of 75 (20%) against 33 of 75 (44%) for this fit (docs/reality.md); the two
    # logs that start mid-session cannot be predicted
    assert s["missed"] <= 1


@pytest.mark.slow
def test_the_fit_does_not_depend_on_the_values_the_preset_ships(dev_set, monkeypatch):
    """Fitted values are written into the presets; a refit from those presets must give the same numbers."""
    import dataclasses

    import workbench.analysis.real_logs.calibration as calibration

    claude = [h for h in dev_set if h.log is not None and h.log.agent == "claude_code"]
    before = fit_agent(claude)
    real = calibration.agent_settings

    def shifted(history):
        s = real(history)
        return dataclasses.replace(s, knobs=s.knobs.replace(hidden_prefix_tokens=1_000, token_ratio=0.7,
                                                            compaction_restore_tokens=50_000))

    monkeypatch.setattr(calibration, "agent_settings", shifted)
    after = fit_agent(claude)
    assert (after.hidden_prefix_tokens, after.compaction_restore_tokens) == (
        before.hidden_prefix_tokens, before.compaction_restore_tokens)
    assert after.token_ratio == pytest.approx(before.token_ratio, abs=1e-9)


def test_simulate_replays_a_real_log_as_its_agent_does_unless_told_otherwise(tmp_path, capsys):
    """No --preset: the log's agent settings (and a note saying so); --preset stagewise: stagewise's."""
    path = tmp_path / "c.jsonl"
    path.write_text(claude_crossing().compact("auto", 167_700, "S.").user("go").text())
    assert main(["simulate", str(path), "--json", "--no-timeline"]) == 0
    captured = capsys.readouterr()
    assert "replaying as claude_code 2.1.25 does (preset claude_code" in captured.err
    assert json.loads(captured.out)["knobs"]["strategy"] == "summarize"
    assert main(["simulate", str(path), "--json", "--no-timeline", "--preset", "stagewise"]) == 0
    assert json.loads(capsys.readouterr().out)["knobs"]["strategy"] == "stagewise"


def test_what_claude_code_re_attaches_is_sized_by_what_its_reads_were_billed_on_a_real_log():
    """The context right after each compaction of a real Claude Code log, with its usage: each file the agent
    re-attaches is sized by what the provider billed for its reads (the billed counter's counts), scaled to the
    whole file for a range read, so no tokenizer is loaded; the notes are counted as text."""
    from workbench.analysis.real_logs.after_compaction import counting_knobs
    from workbench.analysis.real_logs.reality import _billed_for_restore
    from workbench.counting.restore import restore_args, restored_items

    path = need_shared(shared_dir() / "real_sessions" / "claude_code__ad_ff0201aecb_0.jsonl")
    h = load_history(path)
    s = follow_log(h)
    knobs = agent_settings(h, dollars=False).knobs
    billed = _billed_for_restore(h, knobs, CountCache(by_identity=True))
    counted = counting_knobs(knobs.replace(trigger_counter="usage"))
    first = h.log.compactions[0]
    by_bill = restored_items(h.messages[: first.index], **restore_args(counted), billed=billed)
    by_text = restored_items(h.messages[: first.index], **restore_args(counted))
    assert [r.kind for r in by_bill] == [r.kind for r in by_text] == ["file", "reference", "file", "reference", "file"]
    # the first file: one read of lines 80-109 of 337 (message 134), billed 285 tokens: scaled to the whole file
    (read,) = [i for i, m in enumerate(h.messages[: first.index]) if m.meta("readLines") == [80, 30, 337]]
    assert 337 / 30 * billed[read] * 0.8 < by_bill[0].tokens < 337 / 30 * billed[read] * 1.05
    assert [r.tokens for r in by_bill if r.kind == "reference"] == [r.tokens for r in by_text if r.kind == "reference"]
    errors = [c.after_error for c in s.compactions]
    assert all(e is not None and abs(e) <= 0.10 for e in errors)  # measured -1.0%, +7.1%


def test_the_context_after_each_compaction_held_out_by_session_on_real_claude_code_logs():
    """Each of the small set's Claude Code logs predicted by fits on the others only (size model and restore
    constant, ``explore.reality_folds``), with its usage: the context at the first call after each of its
    compactions within ±10% of what the log billed for 8 of its 10 compactions (docs/reality.md has the large set)."""
    from workbench.explore.reality_folds import prepare

    folder = need_shared(shared_dir() / "real_sessions")
    repo = {f["file"]: f["source"]["repo"] for f in json.loads((folder / "facts.json").read_text())["sessions"]}
    paths = [p for p in sorted(folder.glob("claude_code__*.jsonl"))]
    folds = prepare([(load_history(p), repo[p.name], "large") for p in paths])
    held = folds.held_out(usage=True, fold="session")
    assert all(h.trained_on == len(paths) - 1 for h in held)
    errors = [e for h in held for e in h.after_errors]
    assert len(errors) == 10
    assert sum(abs(e) <= 0.10 for e in errors) >= 8  # measured 8 (-16.0% and +12.1% out)


@pytest.mark.slow
def test_no_prefix_from_outside_the_session_reaches_the_estimate_target(capsys):
    """docs/reality.md's bound on #20 item 4: with the growth assumed perfect, the best hidden prefix per agent chosen
    on the large set's own logs, plus every compaction of a log that starts mid-session, stays under 70% within ±5
    messages; the folds' prefixes do no better than that best one (``scripts/reality_estimate.py --ceiling``)."""
    import json
    import runpy

    large = need_shared(shared_dir() / "real_sessions_large")
    script = runpy.run_path(str(REPO / "scripts" / "reality_estimate.py"))
    assert script["main"](["--ceiling", "--large", str(large)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["n"] == 75 and found["mid"] == 13  # the large set's automatic compactions; those of mid-session logs
    assert found["repository"] <= found["best"] and found["session"] <= found["best"]
    assert found["best"] + found["mid"] < 0.7 * found["n"]  # measured 38 + 13 = 51 of 75
    assert 2_000 < found["before"] < 5_000 and 2_000 < found["after"] < 5_000  # ±5 messages, in tokens (~3,000)
