"""msagent pinned on scripted chats: where it fires, where it cuts, and the offload log it leaves (seed 001).

The chat is a 1,000-char system message followed by user/assistant messages of 1,000 chars: 250 tokens
each, so the context at message i is 250 x (i + 1). At a 10,000-token window the 0.85 trigger is 8,500.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from policy_scripts import agent, chat

from workbench.analysis.offload import (
    buffer_lines,
    build_offload,
    log_path,
    offload_log,
    offload_reports,
    offloaded_indices,
    safe_thread_id,
    summarization_events,
)
from workbench.cli import main
from workbench.history.writers import write_canonical_jsonl
from workbench.presets import get_preset
from workbench.replay import simulate

CHAT = chat("s" + "ua" * 40)
MSAGENT = get_preset("msagent").replace(
    context_window_tokens=10_000, overhead_chars_per_message=0, check_point="message"
)
NOW = datetime(2026, 4, 2, 12, 34, 56, tzinfo=UTC)


def first(run):
    c = run.compressions[0]
    return (c.index_started, c.boundary, c.kept)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, (33, 28, 6)),  # 250 x 34 = 8,500 >= 8,500; the last 6 non-system messages are 28..33
        ({"trigger_at_equal": False}, (34, 29, 6)),  # strict > waits one message
        ({"keep_recent_messages": 4}, (33, 30, 4)),
        ({"keep_recent_messages": 0}, (33, 33, 1)),  # messages_to_keep has ge=1 upstream
        ({"trigger_ratio": 0.7}, (27, 22, 6)),  # 7,000 = 250 x 28
    ],
    ids=["fires-at-0.85-inclusive", "strict-one-later", "keep-4", "keep-0-means-1", "threshold-0.7"],
)
def test_trigger_step_and_boundary(changes, expected):
    assert first(simulate(CHAT, MSAGENT.replace(**changes))) == expected


def test_everything_before_the_tail_becomes_one_summary_and_the_system_message_stays():
    run = simulate(CHAT, MSAGENT)
    c = run.compressions[0]
    assert c.pinned == (0,)
    assert c.folded_from == 0 and offloaded_indices(c) == list(range(1, 28))
    assert c.tokens_before == 8_500
    assert c.tokens_after == 250 + c.briefing_tokens + 6 * 250  # system + summary + kept tail
    row = run.timeline.row(33, named=True)
    assert "compression-landed" in row["events"]
    assert run.timeline.row(34, named=True)["pinned"] == 250


def test_chain_is_rolling_the_previous_summary_is_read_again():
    """After the first summary (~830 tokens) the context is 250 + summary + 250 x (i - 27): 8,500 at i = 57."""
    run = simulate(CHAT, MSAGENT)
    assert [c.index_started for c in run.compressions] == [33, 57, 78]
    second = run.compressions[1]
    assert second.previous_chars == run.compressions[0].briefing_chars
    assert (second.folded_from, second.boundary) == (28, 52)


def test_a_cut_on_a_tool_result_moves_back_to_its_call():
    """Keeping 5 would start at a tool result; deepagents keeps AI/Tool pairs, so 6 stay."""
    h = agent(12, system=True)  # sys, u0, then a/t pairs: 2,000-token tool results
    knobs = MSAGENT.replace(keep_recent_messages=5, context_window_tokens=20_000)
    c = simulate(h, knobs).compressions[0]
    assert h.messages[c.boundary].role == "assistant"
    assert c.kept == 6


@pytest.mark.parametrize(
    ("checks", "expected"),
    [("10", [(10, 5, "manual")]), ("3", []), ("3, 12", [(12, 7, "manual")])],
    ids=["offload-at-10", "too-short-at-3", "short-then-offload"],
)
def test_manual_offload_at_chosen_checks(checks, expected):
    run = simulate(CHAT, MSAGENT.replace(context_window_tokens=1_000_000, manual_compact_checks=checks))
    assert [(c.index_started, c.boundary, c.trigger) for c in run.compressions] == expected
    assert run.metrics.manual_compressions == len(expected)
    if checks.startswith("3"):
        assert any(e.kind == "skip" and "too short" in e.detail for e in run.events)


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(timestamp, body lines) of each ``## Offloaded at`` section."""
    out = []
    for block in re.split(r"^## Offloaded at ", text, flags=re.M)[1:]:
        stamp, _, body = block.partition("\n\n")
        out.append((stamp, body.rstrip("\n").split("\n")))
    return out


def expected_lines(history, comp) -> list[str]:
    return [line for j in offloaded_indices(comp) for line in buffer_lines(history.messages[j])]


def test_offload_log_has_one_section_per_compaction_with_exactly_the_folded_originals():
    h = agent(30, system=True)
    run = simulate(h, MSAGENT.replace(context_window_tokens=20_000))
    landed = [c for c in run.compressions if c.status == "landed"]
    assert len(landed) >= 2
    got = sections(offload_log(run, h, now=NOW))
    assert [s for s, _ in got] == ["2026-04-02T12:34:56+00:00"] * len(landed)
    for (_, lines), comp in zip(got, landed, strict=True):
        assert lines == expected_lines(h, comp)
    offloaded = [j for c in landed for j in offloaded_indices(c)]
    assert offloaded == list(range(1, landed[-1].boundary))  # each original once, the system message never
    first_lines = got[0][1]
    assert first_lines[0].startswith("Human: Fix the bug")
    assert first_lines[1].startswith("AI: bbbb") and '"name": "read"' in first_lines[1]
    assert first_lines[2].startswith("Tool: cccc")


def test_summarization_events_and_reports():
    h = agent(30, system=True)
    run = simulate(h, MSAGENT.replace(context_window_tokens=20_000))
    events = summarization_events(run, thread_id="t-1")
    reports = offload_reports(run, thread_id="t-1")
    assert [e.cutoff_index for e in events] == [c.boundary for c in run.compressions]
    assert {e.file_path for e in events} == {log_path("t-1")} == {"/conversation_history/t-1.md"}
    assert "/conversation_history/t-1.md" in events[0].summary_message
    r = reports[0]
    assert (r.offloaded, r.kept) == (len(offloaded_indices(run.compressions[0])), 6)
    assert (r.tokens_before, r.tokens_after) == (run.compressions[0].tokens_before, run.compressions[0].tokens_after)
    assert "offloaded" in r.line() and "-> " in r.line()


def test_cli_offload_dir_appends_and_never_rewrites(tmp_path, capsys):
    """Two replays through ``--offload-dir``: the second appends its sections after the first, untouched."""
    h = agent(30, system=True)
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(h), encoding="utf-8")
    out_dir = tmp_path / "msagent"
    argv = [
        "simulate",
        str(path),
        "--preset",
        "msagent",
        "--set",
        "context_window_tokens=20000",
        "--set",
        "overhead_chars_per_message=0",
        "--set",
        "check_point=message",
        "--offload-dir",
        str(out_dir),
        "--thread-id",
        "thread-42",
        "--json",
        "--no-timeline",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    log = out_dir / "conversation_history" / "thread-42.md"
    first_text = log.read_text(encoding="utf-8")
    landed = [c for c in data["compressions"] if c["status"] == "landed"]
    got = sections(first_text)
    assert len(got) == len(landed) == len(data["offload"]["events"]) >= 2
    for (_, lines), comp in zip(got, landed, strict=True):
        keep = set(comp["pinned"])
        idx = [j for j in range(comp["folded_from"], comp["boundary"]) if j not in keep]
        assert lines == [line for j in idx for line in buffer_lines(h.messages[j])]
    assert data["offload"]["events"][0]["file_path"] == "/conversation_history/thread-42.md"

    assert main(argv) == 0
    capsys.readouterr()
    second_text = log.read_text(encoding="utf-8")
    assert second_text.startswith(first_text)
    assert len(sections(second_text)) == 2 * len(got)
    assert [b for _, b in sections(second_text[len(first_text) :])] == [b for _, b in got]


def test_the_offload_is_one_pure_value_of_run_history_thread_and_clock():
    h = agent(30, system=True)
    run = simulate(h, MSAGENT.replace(context_window_tokens=20_000))
    a = build_offload(run, h, thread_id="t/1", now=NOW)
    assert a == build_offload(run, h, thread_id="t/1", now=NOW)
    assert a.file_path == f"/conversation_history/{safe_thread_id('t/1')}.md"
    assert a.text == offload_log(run, h, now=NOW) and len(a.events) == len(a.reports) == len(run.compressions)


def test_each_thread_id_has_its_own_offload_file_and_a_safe_id_keeps_its_name():
    """Ids that differ only in characters a file name cannot hold (non-ASCII, ``/`` against ``_``, dots) get a
    readable slug and a hash of the exact id; an id that is already a safe file name is its own name, so logs
    written before stay where they were."""
    unsafe = ["a/b", "é", "è", "", ".", "..", "a b", "a\\b", "a~b", "_a", "x" * 300, "t/1", "t\udc801"]
    safe = ["a_b", "thread", "t-1", "thread-42", "A", "x" * 252, "0b5e8c2a-uuid.v4"]
    names = [safe_thread_id(t) for t in unsafe + safe]
    assert len(set(names)) == len(names)
    assert [safe_thread_id(t) for t in safe] == safe
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._~-]*", n) and len(f"{n}.md".encode()) <= 255 for n in names)
    assert safe_thread_id("a/b").startswith("a_b~") and safe_thread_id("é").startswith("thread~")


@pytest.mark.parametrize("pair", [("a/b", "a_b"), ("café", "cafè")])
def test_two_threads_whose_ids_collided_append_to_two_files(tmp_path, pair):
    src = tmp_path / "h.jsonl"
    src.write_text(write_canonical_jsonl(agent(30, system=True)), encoding="utf-8")
    for thread in pair:
        assert main(["simulate", str(src), "--preset", "msagent", "--set", "context_window_tokens=20000",
                     "--offload-dir", str(tmp_path / "off"), "--thread-id", thread]) == 0
    logs = sorted((tmp_path / "off" / "conversation_history").iterdir())
    assert len(logs) == 2 and all(p.read_text().startswith("## Offloaded at ") for p in logs)
