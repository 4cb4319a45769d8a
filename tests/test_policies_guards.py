"""Guards users ask for (spec/peers.md §3), each an event on the timeline and a metric.

Pinned content (items 6, 11, 15), minimum savings (14), cooldown (20), thrash (16, 20), reactive
compaction as its own switch (9), manual compaction (17) and OpenCode's tool-output pruning (12, 22).
Chats are 250-token messages; at a 20,000-token window the 0.5 trigger is 10,000 tokens.
"""

from __future__ import annotations

import pytest
from policy_scripts import agent, chat, plain

from workbench.replay import simulate

BASE = plain(strategy="summarize", context_window_tokens=20_000, trigger_ratio=0.5, trigger_hard_cap_tokens=10_000_000)
RULES = chat("s" + "ua" * 40, texts={5: "# AGENTS.md instructions for /repo\n"})


def events(run, kind):
    return [e for e in run.events if e.kind == kind]


@pytest.mark.parametrize(
    ("changes", "pinned"),
    [
        ({"pin_system_messages": True}, (0,)),
        ({"pin_first_user_message": True}, (1,)),
        ({"pin_pattern": r"^# AGENTS\.md"}, (5,)),
        ({"pin_first_messages": 3}, (0, 1, 2)),
    ],
    ids=["system-prompt", "first-user-message", "rules-file", "first-3"],
)
def test_pinned_messages_are_never_folded_and_stay_counted(changes, pinned):
    run = simulate(RULES, BASE.replace(**changes))
    unpinned = simulate(RULES, BASE).compressions[0]
    assert all(c.pinned == pinned for c in run.compressions) and len(run.compressions) >= 2
    first = run.compressions[0]
    assert first.tokens_after == first.briefing_tokens + 250 * len(pinned) + (41 - first.boundary) * 250
    assert run.timeline.row(41, named=True)["pinned"] == 250 * len(pinned)
    assert unpinned.pinned == ()


def test_pinned_messages_stay_out_of_the_briefer_input():
    """The pinned task (1,000 chars + 13 of tags + 1 newline) is not summarized: it is still there verbatim."""
    folded = simulate(RULES, BASE).compressions[0].new_material_chars
    pinned = simulate(RULES, BASE.replace(pin_first_user_message=True)).compressions[0].new_material_chars
    assert folded - pinned == 1_014


@pytest.mark.parametrize(
    ("kept_ratio", "first_rows", "ineffective", "thrash"),
    [
        (0.45, [(40, 1_097, False), (44, 878, True), (47, 658, True)], 26, 22),
        (0.48, [(40, 600, True), (42, 439, True), (44, 439, True)], 38, 37),
    ],
    ids=["tail-45pct", "tail-48pct"],
)
def test_compactions_that_free_little_are_flagged_ineffective(kept_ratio, first_rows, ineffective, thrash):
    """A tail almost as big as the trigger folds a few messages: 600 of 10,250 tokens is under 10%."""
    run = simulate(chat("ua" * 40), BASE.replace(kept_budget_ratio=kept_ratio))
    assert [(c.index_started, c.freed_tokens, c.ineffective) for c in run.compressions[:3]] == first_rows
    assert (run.metrics.ineffective_compressions, run.metrics.thrash_events) == (ineffective, thrash)
    assert len(events(run, "ineffective")) == ineffective and len(events(run, "thrash")) == thrash


# LangChain's docs example on a chat: 20 kept messages are 5,000 tokens, above the 4,000 trigger, so it
# fires at every check once it has fired once.
EVERY_CHECK = plain(
    strategy="summarize",
    context_window_tokens=200_000,
    trigger_ratio=1.0,
    trigger_hard_cap_tokens=4_000,
    keep_rule="messages",
    keep_recent_messages=20,
)


@pytest.mark.parametrize(
    ("cooldown", "starts", "compressions", "skips", "thrash"),
    [(0, [20, 21, 22, 23], 60, 0, 59), (3, [20, 24, 28, 32], 15, 45, 0)],
    ids=["no-cooldown-thrashes", "cooldown-3"],
)
def test_cooldown_holds_proactive_compaction_and_thrash_is_reported(cooldown, starts, compressions, skips, thrash):
    run = simulate(chat("ua" * 40), EVERY_CHECK.replace(cooldown_checks=cooldown))
    m = run.metrics
    assert [c.index_started for c in run.compressions[:4]] == starts
    assert (m.compressions, m.cooldown_skips, m.thrash_events) == (compressions, skips, thrash)
    if cooldown:
        first = events(run, "cooldown-skip")[0]
        assert (first.check, first.detail) == (21, "3 checks held until check 24")
        assert "cooldown-skip" in run.timeline.row(21, named=True)["events"]


@pytest.mark.parametrize(
    ("proactive", "reactive", "expected", "overflow_checks"),
    [
        (True, False, [(40, 43, "threshold"), (61, 64, "threshold"), (80, 83, "threshold")], 0),
        (False, True, [(80, 80, "reactive")], 1),  # 250 x 81 = 20,250 > 20,000: lands at once despite latency
        (False, False, [], 20),
        (True, True, [(40, 43, "threshold"), (61, 64, "threshold"), (80, 83, "threshold")], 0),
    ],
    ids=["proactive-only", "reactive-only", "neither", "both"],
)
def test_reactive_compaction_is_a_switch_separate_from_proactive(proactive, reactive, expected, overflow_checks):
    knobs = BASE.replace(proactive_compaction=proactive, reactive_compaction=reactive, latency_steps=3)
    run = simulate(chat("ua" * 50), knobs)
    assert [(c.index_started, c.check_landed, c.trigger) for c in run.compressions[:3]] == expected
    assert run.metrics.overflows == overflow_checks
    assert (
        run.metrics.reactive_compressions
        == len(events(run, "reactive"))
        == (1 if expected == [(80, 80, "reactive")] else 0)
    )


def test_manual_compaction_works_for_any_policy_and_ignores_the_cooldown():
    knobs = plain(context_window_tokens=1_000_000, manual_compact_checks="10, 12", cooldown_checks=50)
    run = simulate(chat("ua" * 40), knobs)  # stagewise: the walk keeps its floor of 10 messages
    assert [(c.index_started, c.boundary, c.trigger) for c in run.compressions] == [
        (10, 1, "manual"),
        (12, 3, "manual"),
    ]
    assert run.metrics.manual_compressions == len(events(run, "manual")) == 2


PRUNE = plain(
    strategy="summarize",
    context_window_tokens=1_000_000,
    trigger_ratio=-1,
    prune_tool_outputs=True,
    prune_protect_tokens=10_000,
    prune_minimum_tokens=5_000,
    prune_protect_user_turns=0,
    check_point="step",
)


def test_pruning_protects_the_newest_tool_output_and_waits_for_a_minimum_reclaim():
    """Tool results free 1,970 tokens each. The newest five (9,850) are protected; the older ones are cleared
    only once together they free more than 5,000: three of them, at step 7, then every three steps, the walk
    stopping at the newest output already cleared."""
    run = simulate(agent(20), PRUNE)
    assert [(e.check, e.detail) for e in events(run, "elide")] == [
        (check, "3 tool outputs stubbed, 5,910 tokens freed (prune)") for check in (7, 10, 13, 16, 19)
    ]
    assert run.metrics.compressions == 0


def test_pruning_skips_the_newest_user_turns():
    """OpenCode never prunes inside the last two user turns: a one-request session is never pruned."""
    assert simulate(agent(20), PRUNE.replace(prune_protect_user_turns=2)).metrics.elisions == 0


@pytest.mark.parametrize(
    ("prune", "first_event", "compaction_checks"),
    [(True, "elide", [19]), (False, "compression-started", [6, 11, 16])],
    ids=["prune-first", "no-prune"],
)
def test_pruning_runs_before_the_policy_and_postpones_its_compaction(prune, first_event, compaction_checks):
    """At step 6 the context (15,125) crosses 0.5 of 30,000; pruning frees 3,940 first, so nothing is folded
    until step 19, when the stubs and the calls alone have grown past the trigger."""
    knobs = PRUNE.replace(
        context_window_tokens=30_000, trigger_ratio=0.5, prune_minimum_tokens=3_000, prune_tool_outputs=prune
    )
    run = simulate(agent(20), knobs)
    assert (run.events[0].check, run.events[0].kind) == (6, first_event)
    assert [c.check_started for c in run.compressions] == compaction_checks


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"manual_compact_checks": "10, x"}, "manual_compact_checks must list whole check numbers"),
        ({"pin_pattern": "("}, "pin_pattern must be a regular expression"),
        ({"keep_rule": "tail"}, "keep_rule must be one of budget, messages, turns, share, user_messages, none"),
        ({"briefing_mode": "fancy"}, "briefing_mode must be one of incremental, anchored"),
        ({"trigger_reserve_tokens": -5}, "trigger_reserve_tokens must be in [1, 1e+07] or 0"),
    ],
    ids=["manual-checks", "pin-pattern", "keep-rule", "briefing-mode", "reserve"],
)
def test_new_knobs_refuse_bad_values_by_name(changes, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("+", r"\+")):
        plain(**changes)


def test_manual_checks_parse_in_order_and_a_reserve_above_the_window_warns():
    assert plain(manual_compact_checks="40 , 7,40").manual_checks == (7, 40)
    warnings = plain(strategy="summarize", context_window_tokens=32_000, trigger_reserve_tokens=33_000).warnings()
    assert any("fires at every check" in w for w in warnings)
