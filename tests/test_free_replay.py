"""The free replay against the log: the n-th compression against the n-th logged one, the Charts tab's sentence,
and the by-repository table of scripts/replay_report.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import need_shared, shared_dir
from test_app_free_replay import compacting_log

from workbench.analysis.real_logs.free_replay import AgainstLog, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
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


def test_the_report_groups_logs_by_repository(tmp_path):
    for name, task in (("a.jsonl", "Refactor the parser."), ("b.jsonl", "Refactor the lexer.")):
        (tmp_path / name).write_text(compacting_log(task=task).text())
    (tmp_path / "facts.json").write_text(json.dumps({"sessions": [
        {"file": "a.jsonl", "source": {"repo": "someone/one"}}, {"file": "b.jsonl", "source": {"repo": "else/two"}}]}))
    by_repo, skipped = replay_report.replay_directory(tmp_path)
    assert sorted(by_repo) == ["else/two", "someone/one"] and not skipped
    rows = replay_report.table_rows(by_repo)
    assert rows[-1][:6] == ["**all**", 2, 2, "2 (100%)", "2 (100%)", "2 (100%)"]


def test_on_the_real_sessions_the_free_replay_compacts_where_the_agents_did():
    """The target of #20 on the set the tests pin: at least 80% of the automatic compactions within 5 messages."""
    directory = need_shared(shared_dir() / "real_sessions")
    by_repo, _ = replay_report.replay_directory(directory)
    s = summary([r for rows in by_repo.values() for r in rows])
    assert s["auto_compactions"] == 14 and s["within_5"] >= 12
    estimate = summary([r for rows in replay_report.replay_directory(directory, "estimate")[0].values() for r in rows])
    assert estimate["within_5"] < s["within_5"]
