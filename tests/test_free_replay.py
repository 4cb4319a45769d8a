"""The free replay against the log: the n-th compression against the n-th logged one, the Charts tab's sentence,
and the by-repository table of scripts/replay_report.py."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO, need_shared, shared_dir
from test_app_free_replay import compacting_log

from workbench.analysis.real_logs.free_replay import AgainstLog, summary
from workbench.counting.tokens import CountCache

sys.path.insert(0, str(REPO / "scripts"))
import replay_report  # noqa: E402


def test_the_sentence_says_how_far_apart_each_compaction_is():
    same = AgainstLog(logged=(144, 288), triggers=("auto", "auto"), replayed=(144, 291))
    assert same.errors == (0, 3)
    assert same.sentence() == "The agent compacted twice; this replay twice, at +0 and +3 messages from the agent's."
    fewer = AgainstLog(logged=(116, 277, 474), triggers=("auto", "auto", "auto"), replayed=(116, 280))
    assert fewer.sentence() == ("The agent compacted 3 times; this replay twice, at +0 and +3 messages from the "
                                "agent's; none for its compaction at message 474.")
    more = AgainstLog(logged=(202,), triggers=("manual",), replayed=(202, 347))
    assert more.sentence() == ("The agent compacted once (1 by the user's /compact); this replay twice, at +0 messages "
                               "from the agent's; and again at message 347.")
    moved = same.sentence(counterfactual=True)
    assert moved.startswith("Counterfactual: the knobs differ from the agent's own") and "+3" in moved
    assert AgainstLog(logged=(), triggers=(), replayed=()).sentence() == (
        "The agent never compacted in this log; neither does this replay.")


def test_the_summary_counts_automatic_compactions_only():
    rows = [AgainstLog(logged=(10, 50), triggers=("manual", "auto"), replayed=(10, 58)),
            AgainstLog(logged=(30, 90), triggers=("auto", "auto"), replayed=(31,))]
    s = summary(rows)
    assert (s["auto_compactions"], s["missed"], s["within_0"], s["within_2"], s["within_5"]) == (3, 1, 0, 1, 1)
    assert s["median_abs_error"] == 4.5
    later = summary(rows, later=True)  # after each log's first compaction: 50 (+8) and 90 (none)
    assert (later["auto_compactions"], later["missed"], later["within_5"]) == (2, 1, 0)


def test_the_report_groups_logs_by_repository(tmp_path):
    for name, task in (("a.jsonl", "Refactor the parser."), ("b.jsonl", "Refactor the lexer.")):
        (tmp_path / name).write_text(compacting_log(task=task).text())
    (tmp_path / "facts.json").write_text(json.dumps({"sessions": [
        {"file": "a.jsonl", "source": {"repo": "someone/one"}}, {"file": "b.jsonl", "source": {"repo": "else/two"}}]}))
    by_repo, skipped = replay_report.replay_directory(tmp_path)
    assert sorted(by_repo) == ["else/two", "someone/one"] and not skipped
    rows = replay_report.table_rows(by_repo)
    assert rows[-1][:6] == ["**all**", 2, 2, "2 (100%)", "2 (100%)", "2 (100%)"]
    assert rows[-1][-1] == "–"  # one compaction each: none after a log's first


@pytest.mark.slow
def test_on_the_real_sessions_the_free_replay_compacts_where_the_agents_did():
    """The target of #20 on the set the tests pin: at least 80% of the automatic compactions within 5 messages."""
    directory = need_shared(shared_dir() / "real_sessions")
    cache = CountCache()  # the logs are counted once for both counters, as the script does
    by_repo, _ = replay_report.replay_directory(directory, cache=cache)
    s = summary([r for rows in by_repo.values() for r in rows])
    assert s["auto_compactions"] == 14 and s["within_5"] >= 12
    estimate = summary([r for rows in replay_report.replay_directory(directory, "estimate", cache=cache)[0].values()
                        for r in rows])
    assert estimate["within_5"] < s["within_5"]


@pytest.mark.slow
def test_on_the_real_sessions_every_first_automatic_compaction_is_where_the_agent_compacted():
    """Until its first compaction the free replay counts what the provider billed and triggers on the agent's own
    measure (the last call's bill and answer plus its estimate since): it compacts at the agent's own message, not a
    call early where the bill alone crossed the threshold (5 of these logs were 2 messages early before)."""
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.free_replay import against_log
    from workbench.history.readers import load_history
    from workbench.replay import simulate

    directory = need_shared(shared_dir() / "real_sessions")
    firsts = 0
    for path in sorted(directory.glob("*.jsonl")):
        h = load_history(path)
        row = against_log(simulate(h, agent_settings(h, dollars=False).knobs), h)
        assert row is not None and row.logged
        if row.triggers[0] == "auto":
            firsts += 1
            assert row.errors[0] == 0, path.name
    assert firsts == 9  # the other two logs open with the user's /compact


def test_a_1m_session_compacts_where_the_api_refused_the_call_not_at_its_threshold():
    """Claude Code 2.1.105+ on a 1M window ("[1m]" model id) compacts reactively: the API refuses a call over the
    window, and the agent's own measure then (its preTokens) is a little under it (the logs: near 998,000), because
    its chars / 4 counts the last results short of what the provider bills. The free replay compacts at that check:
    the context it holds there (the last bill plus the billed estimate of what came after) is over the window."""
    from agent_log_builders import ClaudeLog, text_block, tool_use

    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.free_replay import against_log
    from workbench.history.readers import parse_history
    from workbench.replay import simulate

    log = ClaudeLog(version="2.1.110", model="claude-opus-4-6[1m]").user("task: port the parser")
    bills = [60_000 + 20_000 * k for k in range(47)]  # ... 980,000: past the 967,000 threshold, which is off
    for k, bill in enumerate(bills):
        log.assistant([text_block(f"step {k}"), tool_use(f"t{k}")], input_total=bill, output=20)
        log.tool_result(f"t{k}", "word " * (8_000 if k == len(bills) - 1 else 3_000))
    log.compact("auto", 990_020 + 10_000, "Summary. " * 400)  # the agent's measure when the call was refused
    for k in range(3):
        log.assistant([tool_use(f"a{k}")], input_total=60_000 + 5_000 * k, output=20).tool_result(f"a{k}", "ok")
    h = parse_history(log.text(), source="m.jsonl")
    settings = agent_settings(h, dollars=False)
    assert settings.window == 1_000_000 and not settings.knobs.proactive_compaction
    run = simulate(h, settings.knobs)
    row = against_log(run, h)
    assert row is not None and row.errors == (0,)
    assert run.compressions[0].trigger == "reactive"
