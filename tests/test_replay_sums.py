"""The replay's running values equal their naive recomputation (#24: the replay is linear again).

What the replay now keeps as it goes, each checked against the value computed from scratch, on histories hypothesis
builds: what the agent re-attaches at a compaction (``RunningRestore`` against ``compaction_restore`` of the
history up to it), the chunk lengths of a span (the growing prefix against a plain sum), the briefer's folded span
(against the tuple it stands for), the tokens of the pinned messages, and whole replays of Claude Code logs under the
restoring presets against a replay that recomputes the restore from the start at every compaction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from agent_log_builders import ClaudeLog, tool_use
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.counting.billed import billed_counts
from workbench.counting.restore import RunningRestore, compaction_restore
from workbench.counting.tokens import CountCache
from workbench.history.model import History, Message, Part
from workbench.history.readers import parse_claude_code
from workbench.knobs import Knobs
from workbench.policies import get_policy
from workbench.presets import get_preset
from workbench.replay.compaction import MessageSpan
from workbench.replay.context import ContextSums
from workbench.replay.loop import _billed_of, _Replay, prepared

PATHS = ["/repo/a.py", "/repo/b.py", "/repo/c.py", "/repo/CLAUDE.md", "/repo/.claude/plans/p.md", "/repo/d.py"]
LINE = "    value = compute(value, other)  # a line\n"

# One step of a Claude Code session: (kind, file, size).
steps = st.lists(st.tuples(st.sampled_from(["read", "range", "edit", "write", "todo", "skill", "say", "compact"]),
                           st.integers(0, len(PATHS) - 1), st.integers(1, 400)), min_size=1, max_size=40)


def _session(plan: list[tuple[str, int, int]]) -> History:
    """A Claude Code log of the steps: reads whole or by range (with the line counts Claude Code logs), edits,
    writes, todo lists, skills, plain answers and logged compactions."""
    log = ClaudeLog().user("go")
    for n, (kind, f, size) in enumerate(plan):
        path, call = PATHS[f], f"c{n}"
        if kind in ("read", "range"):
            start, shown = (1, size) if kind == "read" else (size // 3 + 1, max(1, size // 4))
            args: dict[str, Any] = {"file_path": path} if kind == "read" else {
                "file_path": path, "offset": start, "limit": shown}
            log.assistant([tool_use(call, "Read", **args)], input_total=20_000 + 50 * n, output=10)
            text = "".join(f"{i:>6}\u2192{LINE}" for i in range(start, start + shown))
            log.user([{"type": "tool_result", "tool_use_id": call, "content": text}], toolUseResult={
                "type": "text", "file": {"filePath": path, "content": LINE * shown, "numLines": shown,
                                         "startLine": start, "totalLines": size + 10}})
        elif kind == "edit":
            log.assistant([tool_use(call, "Edit", file_path=path, old_string="a", new_string="b")],
                          input_total=20_000 + 50 * n, output=10)
            log.tool_result(call, "The file has been updated.")
        elif kind == "write":
            log.assistant([tool_use(call, "Write", file_path=path, content=LINE * size)],
                          input_total=20_000 + 50 * n, output=10)
            log.tool_result(call, f"File created successfully at: {path}")
        elif kind == "todo":
            todos = [{"content": f"task {size}", "status": "pending", "activeForm": "working"}]
            log.assistant([tool_use(call, "TodoWrite", todos=todos)], input_total=20_000 + 50 * n, output=10)
            log.tool_result(call, "Todos have been modified successfully.")
        elif kind == "skill":
            log.assistant([tool_use(call, "Skill", skill=f"s{f}")], input_total=20_000 + 50 * n, output=10)
            log.tool_result(call, f"Launching skill: s{f}")
            log.user("# Skill\n" + LINE * (size // 10 + 1), isMeta=True)
        elif kind == "compact":
            log.compact("auto", 150_000, f"Summary {n}: " + LINE * 3)
        else:
            log.assistant([{"type": "text", "text": "done " * size}], input_total=20_000 + 50 * n, output=size)
            log.user(f"next {n}")
    return parse_claude_code(log.text())


@settings(max_examples=40, deadline=None)
@given(plan=steps, at=st.lists(st.integers(0, 10_000), min_size=1, max_size=8),
       files=st.sampled_from([0, 1, 5]), limit=st.sampled_from([200, 5_000]), billed=st.booleans(),
       counter=st.sampled_from(["estimate", "o200k_base"]))
def test_the_running_restore_equals_the_restore_computed_from_the_start(plan, at, files, limit, billed,
                                                                         counter) -> None:
    history = _session(plan)
    n = len(history.messages)
    knobs = Knobs(restore_files=files, restore_file_tokens=limit, trigger_counter=counter, token_ratio=1.12,
                  compaction_restore_tokens=123)
    counts = CountCache().counts_for(history)
    bill = billed_counts(counts, knobs.replace(log_counter="billed")).tokens if billed else None
    running = RunningRestore(history.messages, knobs, cache=CountCache(), billed=lambda: bill)
    for i in sorted(x % n for x in at):  # compactions at nondecreasing messages, repeats included
        naive = compaction_restore(history.messages[: i + 1], knobs, cache=CountCache(), billed=bill)
        assert running.at(i) == naive


def _history(lengths: list[int], tools: list[bool]) -> History:
    msgs = []
    for j, (size, tool) in enumerate(zip(lengths, tools, strict=True)):
        part = ({"type": "tool-read", "toolCallId": f"t{j}", "state": "output-available", "input": {},
                 "output": "x" * size} if tool else {"type": "text", "text": "y" * size})
        msgs.append(Message(id=f"m{j}", role="assistant" if j % 2 else "user",
                            parts=(Part(data=part),) if size else ()))
    return History(id="spans", messages=tuple(msgs))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), lengths=st.lists(st.integers(0, 500), min_size=1, max_size=60))
def test_chunk_spans_from_the_growing_prefix_equal_their_plain_sums(data, lengths) -> None:
    tools = data.draw(st.lists(st.booleans(), min_size=len(lengths), max_size=len(lengths)))
    history = _history(lengths, tools)
    n = len(lengths)
    counts = CountCache().counts_for(history)
    plain = CountCache().counts_for(history)
    chars = [plain.serialized_chars(j) for j in range(n)]
    spans = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), min_size=1, max_size=12))
    for lo, hi in spans:  # in any order: spans past the prefix, inside it, and across its end
        want = (sum(c for c in chars[lo:hi] if c >= 0), sum(1 for c in chars[lo:hi] if c >= 0))
        assert counts.serialized_span(lo, hi) == want
    pins = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=8)), dtype=np.int64)
    assert counts.serialized_chars_at(pins).tolist() == [chars[j] for j in pins]


@given(n=st.integers(0, 30), lo=st.integers(0, 35), hi=st.integers(0, 35),
       skip=st.frozensets(st.integers(-2, 40), max_size=10))
def test_the_folded_span_is_the_tuple_it_stands_for(n, lo, hi, skip) -> None:
    messages = tuple(Message(id=f"m{j}", role="user", parts=()) for j in range(n))
    span = MessageSpan(messages, lo, hi, skip)
    want = tuple(m for j, m in enumerate(messages[lo:hi], lo) if j not in skip)
    assert len(span) == len(want) and span == want and tuple(span) == want and list(span[1:]) == list(want[1:])
    if want:
        assert span[-1] is want[-1] and span[0] is want[0]
    assert hash(span) == hash(want)


@given(tokens=st.lists(st.integers(0, 10_000), min_size=1, max_size=50), data=st.data())
def test_pinned_tokens_equal_their_sum_one_by_one(tokens, data) -> None:
    n = len(tokens)
    sums = ContextSums(np.array(tokens, dtype=np.int64), np.arange(n, dtype=np.int64))
    stubbed = data.draw(st.lists(st.integers(0, n - 1), max_size=5, unique=True))
    sums.stub(stubbed, np.array([t // 2 for t in tokens], dtype=np.int64))
    pinned = data.draw(st.sets(st.integers(0, n - 1)))
    assert sums.in_context_tokens(pinned) == sum(tokens[j] - (tokens[j] // 2 if j in stubbed else 0) for j in pinned)


class _NaiveRestore:
    """The restore as the loop computed it before #24: the history up to the compaction, walked from the start."""

    def __init__(self, replay: _Replay) -> None:
        self.replay = replay

    def at(self, i: int) -> int:
        r = self.replay
        return compaction_restore(r.history.messages[: i + 1], r.knobs, cache=CountCache(), billed=_billed_of(r.counts, r.knobs)())


@pytest.mark.slow  # 3-4 s: twelve replays, each against a naive restore from the start
@settings(max_examples=12, deadline=None)
@given(plan=st.lists(st.tuples(st.sampled_from(["read", "range", "edit", "write", "todo", "say"]),
                               st.integers(0, len(PATHS) - 1), st.integers(50, 400)), min_size=20, max_size=60),
       preset=st.sampled_from(["claude_code", "claude_code_2_1_1", "codex_cli", "stagewise"]),
       window=st.sampled_from([20_000, 40_000]))
def test_a_replay_with_the_running_restore_equals_one_that_restores_from_the_start(plan, preset, window) -> None:
    history = _session(plan)
    knobs = get_preset(preset).replace(context_window_tokens=window, trigger_hard_cap_tokens=window // 2)
    cache = CountCache()
    ours = prepared(_Replay, history, knobs, cache=cache).run()
    naive = prepared(_Replay, history, knobs, policy=get_policy(knobs), cache=cache)
    naive.restore = _NaiveRestore(naive)  # type: ignore[assignment]
    theirs = naive.run()
    assert ours.metrics == theirs.metrics
    assert [c.to_dict() for c in ours.compressions] == [c.to_dict() for c in theirs.compressions]
    assert ours.timeline.equals(theirs.timeline)
