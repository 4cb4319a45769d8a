"""The strategy families of seed 003 as tables: triggers, tails, briefing shapes, and four small policies.

Most rows use an 80-message chat of 250-token messages (user at even indices), so the context at
message i is 250 x (i + 1); at a 20,000-token window a 0.5 trigger is 10,000 tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from policy_scripts import agent, chat, plain

from workbench.policies import list_policy_names
from workbench.replay import simulate

CHAT = chat("ua" * 40)
BASE = plain(strategy="summarize", context_window_tokens=20_000, trigger_ratio=0.5, trigger_hard_cap_tokens=10_000_000)


def firsts(run, n=2):
    return [(c.index_started, c.boundary, c.trigger) for c in run.compressions[:n]]


def test_every_family_is_registered():
    assert {"stagewise", "msagent", "staged", "summarize", "sliding_window", "importance", "task_boundary"} <= set(
        list_policy_names()
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, [(40, 25, "threshold"), (61, 46, "threshold")]),  # 10,250 > 10,000; the tail is 4,000 tokens
        ({"trigger_at_equal": True}, [(39, 24, "threshold"), (61, 46, "threshold")]),  # 10,000 >= 10,000
        ({"trigger_ratio": 1.0, "trigger_hard_cap_tokens": 5_000}, [(20, 5, "threshold"), (24, 9, "threshold")]),
        ({"trigger_ratio": -1, "trigger_reserve_tokens": 15_000}, [(20, 5, "threshold"), (24, 9, "threshold")]),
        ({"trigger_ratio": -1, "trigger_max_messages": 30}, [(30, 15, "count"), (44, 29, "count")]),
        ({"trigger_ratio": -1}, []),
    ],
    ids=["fixed-ratio", "ratio-inclusive", "absolute-tokens", "window-minus-reserve", "message-count", "no-clause"],
)
def test_trigger_families(changes, expected):
    """Absolute 5,000 and window − 15,000 coincide here; the count clause counts the briefing too (1 + 16 + 14)."""
    assert firsts(simulate(CHAT, BASE.replace(**changes))) == expected


@pytest.mark.parametrize(
    ("changes", "boundary", "pinned"),
    [
        ({"keep_rule": "budget", "kept_budget_ratio": 0.1}, 33, ()),  # 2,000 tokens = 8 messages
        ({"keep_rule": "budget", "kept_budget_ratio": 0.1, "keep_starts_at_user": True}, 32, ()),
        ({"keep_rule": "messages", "keep_recent_messages": 6}, 35, ()),
        ({"keep_rule": "turns", "keep_recent_turns": 2}, 38, ()),  # turns start at users 38 and 40
        ({"keep_rule": "share", "keep_recent_share": 0.3}, 29, ()),  # 30% of 10,250 = 12 messages
        ({"keep_rule": "none"}, 40, ()),  # keep_min_messages 1
        ({"keep_rule": "none", "keep_min_messages": 0}, 41, ()),
        (
            {"keep_rule": "user_messages", "keep_user_messages_tokens": 1_000, "keep_min_messages": 0},
            41,
            (34, 36, 38, 40),
        ),
    ],
    ids=["budget", "budget-starts-at-user", "messages", "turns", "share", "none-keeps-min", "none", "user-messages"],
)
def test_tail_families(changes, boundary, pinned):
    c = simulate(CHAT, BASE.replace(**changes)).compressions[0]
    assert (c.index_started, c.boundary, c.pinned) == (40, boundary, pinned)


def test_user_messages_tail_keeps_the_newest_users_across_compactions():
    """Codex: each rebuild re-selects user messages newest-first; older kept ones drop out of the budget."""
    run = simulate(CHAT, BASE.replace(keep_rule="user_messages", keep_user_messages_tokens=1_000, keep_min_messages=0))
    assert [c.pinned for c in run.compressions[:2]] == [(34, 36, 38, 40), (66, 68, 70, 72)]
    row = run.timeline.row(41, named=True)
    assert row["pinned"] == 4 * 250 and row["verbatim"] == 250


@pytest.mark.parametrize(
    ("mode", "first_chars", "second_previous", "second_reads"),
    [
        ("incremental", 3_056, 3_056, 24_507),
        ("anchored", 3_256, 3_256, 24_707),  # + 200 chars of section headings
        ("opaque", 1_528, 1_528, 25_017),  # half the size: Factory's 0.7% against 1.4%
        ("regenerative", 3_056, 0, 46_873),  # no previous briefing; it re-reads the raw history, which grows
        ("none", 0, 0, None),  # dropped, no briefing at all
    ],
)
def test_briefing_families(mode, first_chars, second_previous, second_reads):
    run = simulate(CHAT, BASE.replace(briefing_mode=mode))
    first, second = run.compressions[:2]
    assert (first.style, first.briefing_chars, second.previous_chars) == (mode, first_chars, second_previous)
    if second_reads is not None:
        assert second.compact_history_chars == second_reads
    else:
        assert run.metrics.briefer_input_tokens == 0 and int(run.timeline["briefing"].max()) == 0


def test_sliding_window_keeps_the_last_turns_and_writes_no_briefing():
    run = simulate(CHAT, BASE.replace(strategy="sliding_window", keep_recent_turns=2))
    assert firsts(run) == [(40, 38, "threshold"), (78, 76, "threshold")]
    assert {c.style for c in run.compressions} == {"none"}
    assert int(run.timeline["briefing"].max()) == 0


def test_importance_elides_the_largest_oldest_tool_outputs_first():
    """Results of steps 1 and 5 are 5,000 tokens, step 3 is 3,000, the rest 2,000. At 22,125 > 20,000 the
    context must drop to 12,000 (0.3 of 40,000): 10,125 tokens, so steps 1 and 5 (4,970 each) are not enough
    and step 3 (2,970) is next; the small outputs of steps 0, 2 and 4 stay."""
    h = agent(8, outputs={1: 19_928, 3: 11_928, 5: 19_928})
    knobs = plain(
        strategy="importance",
        context_window_tokens=40_000,
        trigger_ratio=0.5,
        trigger_hard_cap_tokens=10_000_000,
        soft_trigger_ratio=0.3,
        kept_budget_ratio=0.1,
        check_point="step",
    )
    run = simulate(h, knobs)
    (elide,) = [e for e in run.events if e.kind == "elide"]
    assert (elide.index, elide.detail) == (14, "3 tool outputs stubbed, 12,910 tokens freed (largest oldest first)")
    assert run.timeline.filter(run.timeline["index"] == 14)["total"].item() == 22_125 - 12_910
    assert run.compressions == ()


def test_importance_falls_back_to_a_summary_when_stubs_are_not_enough():
    h = chat("ua" * 40)  # no tool output at all
    run = simulate(h, BASE.replace(strategy="importance"))
    assert firsts(run, 1) == [(40, 25, "threshold")] and run.metrics.elisions == 0


def test_task_boundary_folds_finished_work_when_the_next_request_arrives():
    """New requests arrive at messages 21 and 42. Above 15,000 (0.3 of 50,000) the check before each folds all
    but the last step; checks in between are above the arm ratio but are not boundaries."""
    h = agent(30, users_before=(10, 20))
    knobs = plain(
        strategy="task_boundary",
        context_window_tokens=50_000,
        trigger_ratio=0.85,
        trigger_hard_cap_tokens=10_000_000,
        soft_trigger_ratio=0.3,
        check_point="step",
    )
    run = simulate(h, knobs)
    assert firsts(run) == [(20, 19, "task-boundary"), (41, 40, "task-boundary")]
    assert [h.messages[c.index_started + 1].role for c in run.compressions] == ["user", "user"]
    assert run.metrics.skipped_checks == 0


def test_task_boundary_still_compacts_a_single_task_that_outgrows_the_window():
    h = agent(30)
    knobs = plain(
        strategy="task_boundary",
        context_window_tokens=20_000,
        trigger_ratio=0.85,
        trigger_hard_cap_tokens=10_000_000,
        soft_trigger_ratio=0.3,
        check_point="step",
    )
    run = simulate(h, knobs)
    assert run.compressions and {c.trigger for c in run.compressions} == {"threshold"}


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 12_000), min_size=1, max_size=80),
    strategy=st.sampled_from(["msagent", "staged", "summarize", "sliding_window", "importance", "task_boundary"]),
    rule=st.sampled_from(["budget", "messages", "turns", "share", "user_messages", "none"]),
    mode=st.sampled_from(["incremental", "anchored", "regenerative", "opaque", "none"]),
    latency=st.integers(0, 2),
    guards=st.booleans(),
)
def test_every_policy_keeps_the_replay_consistent(sizes, strategy, rule, mode, latency, guards):
    """Whatever the family: context = system + briefing + pinned + verbatim, the boundary never moves back,
    stubs never free more than a message holds, and a pinned message never enters a fold."""
    knobs = plain(
        strategy=strategy,
        context_window_tokens=20_000,
        trigger_ratio=0.5,
        trigger_hard_cap_tokens=10_000_000,
        keep_rule=rule,
        briefing_mode=mode,
        latency_steps=latency,
        pin_first_user_message=True,
        reactive_compaction=guards,
        cooldown_checks=2 if guards else 0,
        prune_tool_outputs=guards,
        prune_protect_tokens=2_000,
        prune_minimum_tokens=1_000,
        prune_protect_user_turns=0,
    )
    h = agent(len(sizes), outputs=dict(enumerate(sizes)), users_before=(3, 9))
    run = simulate(h, knobs)
    t = run.timeline
    parts = t.select(["system", "briefing", "pinned", "verbatim"]).to_numpy().sum(axis=1)
    assert (t["total"].to_numpy() == parts).all()
    assert (t["boundary"].diff().drop_nulls() >= 0).all()
    assert (t["elided_saved"] >= 0).all()
    assert 0 not in [j for c in run.compressions for j in range(c.folded_from, c.boundary) if j not in c.pinned]


def test_user_messages_pinned_by_pattern_use_no_budget():
    """Codex keeps AGENTS.md packets in the initial context and leaves them out of the kept user messages."""
    h = chat("ua" * 40, texts={0: "# AGENTS.md instructions for /repo\n"})
    knobs = BASE.replace(
        keep_rule="user_messages", keep_user_messages_tokens=1_000, keep_min_messages=0, pin_pattern=r"^# AGENTS\.md"
    )
    assert simulate(h, knobs).compressions[0].pinned == (0, 34, 36, 38, 40)
