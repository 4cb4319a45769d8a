"""Readers: every format to the same History, real transcripts with their published numbers, located errors."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO
from conftest import shared_dir as shared_root

from workbench.history import (
    FORMATS,
    History,
    HistoryError,
    Message,
    detect_format,
    list_format_names,
    load_history,
    load_stagewise_sqlite,
    parse_history,
    text_part,
    write_canonical_jsonl,
)
from workbench.history.readers import parse_canonical, parse_claude_code, parse_stagewise
from workbench.history.readers.jsontext import jsonl_bytes_records, jsonl_records
from workbench.history.readers.superjson import decode_superjson
from workbench.history.writers import write_uimessage_json

FIXTURES = Path(__file__).parent / "fixtures" / "histories"


def shared_dir() -> Path:
    """../shared next to the repo (or $WORKBENCH_SHARED); CI must have it, a laptop may not."""
    path = shared_root()
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"shared data missing at {path} (set WORKBENCH_SHARED)")
        pytest.skip(f"shared data not found at {path}; set WORKBENCH_SHARED to run these tests")
    return path


def roles(h: History) -> Counter[str]:
    return Counter(m.role for m in h.messages)


def tool_calls(h: History) -> list:
    return [p for m in h.messages for p in m.parts or () if p.kind == "tool"]


# -- real transcripts ---------------------------------------------------------------------------

# From shared/real_histories/SOURCES.md: msgs, (sys, user, asst, tool), chars of all content, tool calls.
REAL = {
    "sweagent__pydicom-1458_gpt4.jsonl": (26, (1, 13, 12, 0), 56_550, 0),
    "minisweagent__sqlfluff-1733_deepseek-chat.jsonl": (315, (1, 1, 157, 156), 273_565, 157),
    "minisweagent__sqlfluff-1733_deepseek-reasoner.jsonl": (290, (1, 1, 144, 144), 132_804, 144),
    "minisweagent__astropy-12907_deepseek.jsonl": (129, (1, 1, 64, 63), 80_198, 64),
    "openhands__ponyc-4588_llama4-maverick.jsonl": (101, (1, 2, 49, 49), 66_148, 49),
    "openhands__ponyc-4593_llama4-maverick.jsonl": (68, (1, 2, 33, 32), 50_362, 33),
    "claudecode__python-to-rust-port.jsonl": (80, (0, 2, 39, 39), 28_299, 39),
    "claudecode__todo-app-subagent-page-layout.jsonl": (106, (0, 1, 53, 52), 46_513, 52),
    "claudecode__todo-app-subagent-nextjs-setup.jsonl": (68, (0, 1, 34, 33), 50_927, 33),
    "codex__chatbot-ui-lmstudio_gpt-5.1-codex.jsonl": (80, (0, 2, 39, 39), 80_780, 39),
    "codex__agentv-issue-staleness-triage_gpt-5.3-codex-spark.jsonl": (370, (2, 11, 180, 177), 846_527, 177),
    "codex__agentv-promptfoo-contract-plan_gpt-5.5.jsonl": (113, (3, 5, 29, 76), 622_132, 76),
    "codex__agentv-sandbox-research_gpt-5.5.jsonl": (315, (3, 30, 134, 148), 492_388, 149),
    "aider__2024-08-13-blame-chart.jsonl": (65, (0, 41, 24, 0), 55_462, 0),
}


def test_real_histories_listed_are_the_ones_shipped():
    """The table above covers exactly the files in shared/real_histories."""
    shipped = {p.name for p in (shared_dir() / "real_histories").glob("*.jsonl")}
    assert shipped == set(REAL)


@pytest.mark.parametrize("name", sorted(REAL), ids=lambda n: n.split("__")[0] + "/" + n.split("__")[1][:24])
def test_real_history_loads_with_published_numbers(name):
    """Each real transcript loads as openai_jsonl with SOURCES.md's message, role, char and call counts."""
    total, (n_sys, n_user, n_asst, n_tool), chars, calls = REAL[name]
    path = shared_dir() / "real_histories" / name
    h = load_history(path)
    assert h.source_format == "openai_jsonl"
    assert h.id == name.removesuffix(".jsonl")
    assert len(h) == total
    assert roles(h) == Counter({"system": n_sys, "user": n_user, "assistant": n_asst, "tool": n_tool}) - Counter()
    assert len(tool_calls(h)) == calls == h.meta["tool_calls"]
    content = sum(len(p.text) for m in h.messages for p in m.parts if p.kind == "text")
    content += sum(len(p.output) for m in h.messages for p in m.parts if p.kind == "tool-result")
    assert content == chars
    # every call answered later is marked so; the rest (unanswered submits, a running command) stay open
    answered = sum(1 for p in tool_calls(h) if p.state == "output-available")
    assert answered == n_tool
    assert [m.id for m in h.messages] == [f"m{i:04d}" for i in range(total)]


def test_real_tool_parts_have_the_ai_sdk_shape():
    """Calls are static tool parts with parsed input and no toolName; results name their tool."""
    h = load_history(shared_dir() / "real_histories" / "codex__agentv-sandbox-research_gpt-5.5.jsonl")
    calls = tool_calls(h)
    assert all("toolName" not in p.data and "output" not in p.data for p in calls)
    assert {p.tool_name for p in calls} >= {"exec_command", "write_stdin", "apply_patch"}
    patch = next(p for p in calls if p.tool_name == "apply_patch")
    assert set(patch.input) == {"input"} and patch.input["input"].startswith("*** Begin Patch")
    results = [p for m in h.messages for p in m.parts if p.kind == "tool-result"]
    assert all(isinstance(p.data["toolName"], str) and p.tool_call_id for p in results)
    assert calls[-1].state == "input-available"  # m0314: the checkpoint was written while it ran


# -- one fixture per native format ------------------------------------------------------------

FIXTURE_TABLE = [
    # file, format, messages, roles (system, user, assistant, tool), tool-call states
    ("claude_code_session.jsonl", "claude_code", 14, (0, 5, 5, 4),
     {"output-available": 3, "output-error": 1}),
    ("codex_rollout.jsonl", "codex", 11, (2, 3, 4, 2), {"output-available": 2, "input-available": 1}),
    ("codex_rollout_0_58.jsonl", "codex", 5, (0, 2, 2, 1), {"output-available": 1}),
    ("anthropic_messages.json", "anthropic", 9, (1, 2, 3, 3), {"output-available": 2, "output-error": 1}),
    ("openai_chat.json", "openai", 9, (2, 2, 3, 2), {"output-available": 2, "input-available": 1}),
    ("stagewise_history_superjson.json", "stagewise", 3, (0, 2, 1, 0), {"output-available": 1, "output-error": 1}),
]


@pytest.mark.parametrize(("name", "fmt", "count", "role_counts", "states"), FIXTURE_TABLE,
                         ids=[row[0] for row in FIXTURE_TABLE])
def test_fixture_reads_as_its_format(name, fmt, count, role_counts, states):
    """Detection names the format; the messages, roles and call states are as the fixture was written."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    assert detect_format(text, source=name) == fmt
    h = load_history(FIXTURES / name)
    assert h == parse_history(text, source=str(FIXTURES / name), format=fmt)
    assert h.source_format == fmt
    assert len(h) == count
    expected = dict(zip(("system", "user", "assistant", "tool"), role_counts, strict=True))
    assert roles(h) == Counter(expected) - Counter()
    assert Counter(p.state for p in tool_calls(h)) == Counter(states)
    assert len({m.id for m in h.messages}) == count


@pytest.mark.parametrize("name", [row[0] for row in FIXTURE_TABLE])
def test_canonical_round_trip_is_exact(name):
    """parse(write(h)) == h, message for message, for every format."""
    h = load_history(FIXTURES / name)
    again = parse_history(write_canonical_jsonl(h))
    assert again == h
    assert [m.to_dict() for m in again.messages] == [m.to_dict() for m in h.messages]
    assert again.source_format == "canonical" and again.meta["original_format"] == h.source_format


def test_claude_code_merges_split_responses_and_keeps_order():
    """Lines sharing message.id become one assistant message; results become tool messages in order."""
    h = load_history(FIXTURES / "claude_code_session.jsonl")
    first = h.messages[1]
    assert [p.type for p in first.parts] == ["reasoning", "text", "tool-Read", "tool-Grep"]
    assert first.parts[0].data["providerMetadata"] == {"anthropic": {"signature": "EqQBCkYIBxgCKkBsig"}}
    assert first.meta("usage")["output_tokens"] == 212  # the last line's usage wins
    assert first.meta("createdAt") == "2025-09-02T10:00:03.200Z"
    grep = h.messages[3].parts[0]
    assert grep.output == ("src/utils/date.ts:4:  const d = new Date(value);\n"
                           "src/utils/date.test.ts:4:  expect(formatDate(new Date(2024, 0, 1)))")
    assert grep.tool_name == "Grep" and grep.tool_call_id == "toolu_01Grep"
    bash = h.messages[5].parts[0]
    assert bash.data["isError"] is True and h.messages[4].parts[0].state == "output-error"
    (compaction,) = h.log.compactions
    assert (compaction.index, compaction.timestamp, compaction.trigger, compaction.tokens_before) == (
        11, "2025-09-02T10:01:20.000Z", "manual", 18234)
    assert compaction.summary_index == 11 and compaction.summary == h.messages[11].text
    assert h.messages[11].meta("isCompactSummary") is True and h.messages[9].meta("isMeta") is True
    assert h.meta["summaries"][0]["summary"] == "Fix flaky date test in utils"
    assert h.meta["skipped_records"] == {"file-history-snapshot": 1, "queue-operation": 1}
    assert h.meta["sidechains"] == ["s-0001"]
    assert all(not m.id.startswith("s-") for m in h.messages)


def test_claude_code_sidechain_is_rebuilt_from_its_root():
    """A subagent's own context starts from the Task prompt and follows parentUuid."""
    text = (FIXTURES / "claude_code_session.jsonl").read_text()
    side = parse_claude_code(text, source="s.jsonl", sidechain="s-0001")
    assert [m.id for m in side.messages] == ["s-0001", "s-0002", "s-0003", "s-0004"]
    assert [m.role for m in side.messages] == ["user", "assistant", "tool", "assistant"]
    assert side.meta["sidechain"] == "s-0001"
    only_side = "\n".join(line for line in text.splitlines() if '"isSidechain":true' in line)
    assert [m.id for m in parse_claude_code(only_side).messages] == [m.id for m in side.messages]
    with pytest.raises(HistoryError, match="no sidechain rooted at 'nope' \\(roots: s-0001\\)"):
        parse_claude_code(text, sidechain="nope")


def test_codex_groups_items_and_records_what_it_drops():
    """Assistant items until an output form one message; compaction and dropped items land in meta."""
    h = load_history(FIXTURES / "codex_rollout.jsonl")
    assert h.messages[0].text.startswith("You are Codex") and h.messages[0].role == "system"
    assert len(h.messages[1].parts) == 2 and h.messages[1].role == "system"  # developer message, two blocks
    step = h.messages[4]
    assert [p.type for p in step.parts] == ["reasoning", "tool-exec_command"]
    assert step.parts[0].text == "**Locating the schema**"
    assert step.parts[1].input["cmd"].startswith("rg -n")
    assert step.meta("usage")["input_tokens"] == 24500
    patch = h.messages[6].parts[1]
    assert patch.type == "tool-apply_patch" and patch.input["input"].startswith("*** Begin Patch")
    assert h.messages[7].parts[0].output.startswith("Exit code: 0")
    (compaction,) = h.log.compactions
    assert (compaction.index, compaction.timestamp, compaction.trigger) == (8, "2026-06-26T09:00:12.000Z", "auto")
    assert len(compaction.kept) + compaction.opaque_items == 2
    assert h.meta["dropped_items"] == {"ghost_snapshot": 1, "web_search_call": 1}
    assert h.meta["turns_aborted"] == 1 and h.meta["models"] == ["gpt-5.5"] and h.meta["cli_version"] == "0.142.4"
    old = load_history(FIXTURES / "codex_rollout_0_58.jsonl")
    assert old.messages[2].parts[1].input["command"] == ["bash", "-lc", "rg -n ollama -g '!node_modules'"]
    assert json.loads(old.messages[3].parts[0].output)["metadata"]["exit_code"] == 0  # kept verbatim


def test_anthropic_splits_tool_results_out_of_user_turns():
    """tool_result blocks become tool messages; the user's own words after them stay a user message."""
    h = load_history(FIXTURES / "anthropic_messages.json")
    assert [p.text for p in h.messages[0].parts] == ["You are a careful coding agent working in /repo.",
                                                     "Prefer small diffs."]
    image = h.messages[1].parts[1]
    assert image.data["mediaType"] == "image/png" and image.data["url"].startswith("data:image/png;base64,")
    assert [m.role for m in h.messages[3:6]] == ["tool", "tool", "user"]
    assert h.messages[4].parts[0].output == "ENOENT: no such file or directory, open 'src/router.ts'"
    assert h.messages[4].parts[0].tool_name == "read_file"
    assert h.messages[6].parts[0].data["providerMetadata"]["anthropic"]["redactedData"].startswith("EmwK")
    assert h.messages[8].text == "Fixed: the page now shows a spinner until the session loads."


def test_openai_real_api_shape():
    """function-wrapped calls, invalid argument JSON kept raw, content blocks, developer as system."""
    h = load_history(FIXTURES / "openai_chat.json")
    calls = h.messages[2].parts
    assert calls[0].input == {"command": "make test 2>&1 | tail -20"}
    assert calls[1].input == '{"command": "cat Makefile'  # not valid JSON: the raw text is the input
    assert h.messages[4].parts[0].output == "test:\n\tpytest --cov=app"
    assert h.messages[4].parts[0].tool_name == "bash"  # looked up from the call
    assert h.messages[1].parts[1].data == {"type": "file", "mediaType": "image/jpeg",
                                           "url": "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAEBAQ=="}
    assert h.messages[6].role == "system" and h.messages[6].text == "Answer briefly."


def test_stagewise_superjson_export_is_decoded():
    """Dates stay ISO strings, undefined keys vanish, null entries are dropped and counted."""
    h = load_history(FIXTURES / "stagewise_history_superjson.json")
    assert h.meta == {"null_entries": 1}
    user = h.messages[0]
    assert user.metadata["envState"]["workspace.main"]["state"]["openedAt"] == "2026-03-01T09:59:00.000Z"
    failed = h.messages[1].parts[4]
    assert failed.state == "output-error" and "input" not in failed.data
    assert h.messages[1].metadata["partsMetadata"][6] == {"startedAt": "2026-03-01T10:00:09.000Z"}
    assert h.briefing_indices() == (2,)


@pytest.mark.parametrize("wrap", [
    lambda items: items,
    lambda items: {"messages": items},
    lambda items: {"history": json.dumps({"json": items})},
    lambda items: {"json": items, "meta": {"values": {"0.metadata.createdAt": ["Date"]}, "v": 1}},
], ids=["array", "messages", "history-string", "envelope-v1"])
def test_stagewise_containers(wrap):
    """A UIMessage array is found in each container stagewise data comes in."""
    items = [{"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}],
              "metadata": {"createdAt": "2030-01-02T03:04:05.678Z"}}]
    h = parse_stagewise(json.dumps(wrap(items)), source="x.json")
    assert [m.to_dict() for m in h.messages] == items


# -- superjson --------------------------------------------------------------------------------


@pytest.mark.parametrize(("meta", "expected"), [
    ({"values": {"a\\.b.c": ["undefined"]}}, {"a.b": {"d": 1}}),
    ({"values": {"a\\.b.c": ["undefined"]}, "v": 1}, {"a.b": {"d": 1}}),
    ({"values": {"a\\.b.c": ["undefined"]}}, {"a.b": {"d": 1}}),
], ids=["legacy", "v1", "legacy-again"])
def test_superjson_escaped_dots(meta, expected):
    """``\\.`` in a path is a dot inside a key, in both path syntaxes."""
    assert decode_superjson({"json": {"a.b": {"c": None, "d": 1}}, "meta": meta}) == expected


def test_superjson_path_rules_differ_between_versions():
    """With v:1 a double backslash is one backslash; legacy leaves the last key unescaped."""
    value = {"x\\": {"k": None}, "last.key": None, "keep": 1}
    v1 = decode_superjson({"json": json.loads(json.dumps(value)),
                           "meta": {"values": {"x\\\\.k": ["undefined"]}, "v": 1}})
    assert v1 == {"x\\": {}, "last.key": None, "keep": 1}
    legacy = decode_superjson({"json": json.loads(json.dumps(value)), "meta": {"values": {"last.key": ["undefined"]}}})
    assert legacy == {"x\\": {"k": None}, "keep": 1}


def test_superjson_root_and_arrays():
    """A root undefined is None; an undefined array element stays null, as JS prints it."""
    assert decode_superjson({"json": None, "meta": {"values": ["undefined"]}}) is None
    assert decode_superjson({"json": [1, None], "meta": {"values": {"1": ["undefined"]}}}) == [1, None]
    assert decode_superjson({"json": "2030-01-02T03:04:05.678Z", "meta": {"values": ["Date"]}}) == "2030-01-02T03:04:05.678Z"


@pytest.mark.parametrize(("envelope", "message"), [
    ({"json": {"a": 1}, "meta": {"values": {"a": ["map"]}}}, "unsupported superjson annotation 'map' at path 'a'"),
    ({"json": {"a": 1}, "meta": {"values": {"a": ["Date"]}}}, "superjson Date at 'a' holds int"),
    ({"json": {"a": {}}, "meta": {"values": {"a.b": ["Date"]}}}, "superjson path 'a.b' does not exist"),
    ({"json": [], "meta": {"values": {"x.y": ["undefined"]}}}, "indexes an array with 'x'"),
], ids=["map", "date-not-string", "missing-path", "bad-index"])
def test_superjson_fails_loudly(envelope, message):
    """Annotations it cannot honour are errors, never silently wrong values."""
    with pytest.raises(HistoryError, match=message):
        decode_superjson(envelope)


# -- the stagewise SQLite store ---------------------------------------------------------------


def golden_sqlite() -> Path:
    return shared_dir() / "golden" / "stagewise_instances_sample.sqlite"


def chat(n: int) -> str:
    return f"5e5e5e5e-0000-4000-8000-00000000000{n}"


@pytest.fixture(scope="session")  # once per worker, not once per visit (tests/conftest.py)
def store() -> dict[str, History]:
    return {h.id: h for h in load_stagewise_sqlite(golden_sqlite())}


def test_sqlite_counts(store):
    """5 chats, 70 rows, and the part counts of the sample's table."""
    assert len(store) == 5
    assert sum(len(h) for h in store.values()) == 70
    rows = {n: (len(store[chat(n)]), sum(len(m.parts) for m in store[chat(n)].messages)) for n in range(1, 6)}
    assert rows == {1: (16, 42), 2: (24, 63), 3: (22, 56), 4: (6, 16), 5: (2, 5)}
    assert store[chat(1)].meta["db_version"] == 14
    assert [m.role for m in store[chat(1)].messages] == ["user", "assistant"] * 8
    meta = {n: store[chat(n)].meta for n in range(1, 6)}
    assert [meta[n]["used_tokens"] for n in range(1, 6)] == [71234, 88001, 12000, 3100, 0]
    assert [meta[n]["tool_approval_mode"] for n in range(1, 6)] == ["alwaysAsk", "smart", "smart", "alwaysAsk",
                                                                     "alwaysAllow"]
    sidebar = sorted((n for n in meta if meta[n]["side_chat_parent_id"] is None and meta[n]["archived_at"] is None),
                     key=lambda n: (-meta[n]["unread"], -meta[n]["last_message_at"]))
    assert sidebar == [2, 5, 1]


BRIEFINGS = [
    (1, 10, "user", 474, "d7e052d4756708c9c8654ed6f33384306f7bf072d19c443ee9d8fcc29f003fa6",
     "## SYNTHETIC briefing A1 (test fixture, not a real conversation)"),
    (2, 9, "assistant", 350, "350d94abc27999f0f2f6347ad280b4bd0b5e35794c5da7651cfef2e99ef071de",
     "## SYNTHETIC briefing B1 (first compression, test fixture)"),
    (2, 18, "user", 593, "168a54d1dfb51cb90ad4853e6508a6ec4f7d5d5185e6297370e7ddb29aee32ce",
     "## SYNTHETIC briefing B1 (carried over, test fixture)"),
]


@pytest.mark.parametrize(("n", "seq", "role", "length", "sha", "first"), BRIEFINGS, ids=["A-10", "B-9", "B-18"])
def test_sqlite_briefings(store, n, seq, role, length, sha, first):
    """Each briefing sits on its message with the documented length, hash and first line."""
    m = store[chat(n)].messages[seq]
    assert m.id == f"5e5e5e5e-000{n}-4000-9000-0000000000{seq:02d}"
    assert m.role == role
    assert len(m.briefing) == length
    assert hashlib.sha256(m.briefing.encode()).hexdigest() == sha
    assert m.briefing.splitlines()[0] == first


def test_sqlite_briefing_positions_and_side_chat_copies(store):
    """Briefings at 10 / 9,18 / 9,18; the side chat repeats B's ids and content under its own chat."""
    assert {n: store[chat(n)].briefing_indices() for n in range(1, 6)} == {
        1: (10,), 2: (9, 18), 3: (9, 18), 4: (), 5: ()}
    b, side = store[chat(2)], store[chat(3)]
    assert side.meta["side_chat_parent_id"] == chat(2) and b.meta["side_chat_parent_id"] is None
    assert [m.id for m in side.messages[:20]] == [m.id for m in b.messages[:20]]
    assert [m.parts for m in side.messages[:20]] == [m.parts for m in b.messages[:20]]
    # B's first rows are superjson 2.2.6 ("v":1), the side chat's copies 2.2.2: both decode the same
    assert [m.metadata for m in side.messages[:20]] == [m.metadata for m in b.messages[:20]]
    assert side.messages[9].briefing == b.messages[9].briefing
    assert {m.id for m in side.messages[20:]}.isdisjoint(m.id for m in b.messages)


def test_sqlite_edge_cases(store):
    """Dotted-key Date path, both superjson forms, undefined annotations, NULL metadata, queued message."""
    b0 = store[chat(2)].messages[0].metadata
    assert b0["envState"]["synthetic.domain"]["state"]["capturedAt"] == "2026-05-28T14:09:59.999Z"
    assert b0["createdAt"] == "2026-05-28T14:10:00.500Z" and b0["attachments"][0]["originalFileName"]
    interrupted = store[chat(5)].messages[1]
    read = interrupted.parts[1]
    assert read.type == "tool-read" and read.state == "output-error" and "input" not in read.data
    assert interrupted.metadata["partsMetadata"][3] == {"startedAt": "2026-07-10T16:45:07.750Z"}
    assert interrupted.parts[3].data["state"] == "streaming"
    assert store[chat(1)].messages[1].metadata["partsMetadata"][0] is None  # a hole, not annotated
    null_meta = store[chat(4)].messages[1]
    assert null_meta.metadata is None and null_meta.to_dict()["metadata"] is None
    assert store[chat(5)].meta["queued_messages"] == 1
    assert all(not m.id.endswith("900") for m in store[chat(5)].messages)
    assert store[chat(1)].messages[0].metadata["mentions"][0]["providerType"] == "file"


def test_sqlite_legacy_column_is_stale_not_used(store):
    """Chat D reads its 6 rows; the legacy cell (4 messages) is only reported."""
    d = store[chat(4)]
    assert len(d) == 6 and d.meta["history_source"] == "agentMessages"
    assert d.meta["stale_legacy_history_messages"] == 4
    assert "v7_casualty" not in d.meta
    assert d.meta["archived_at"] == 1783600200 and d.meta["active_provider_instance_id"] is None


def test_sqlite_v7_casualty_falls_back_to_the_cell(tmp_path):
    """A chat with no rows but a legacy cell is read from the cell and flagged."""
    copy = tmp_path / "instances.sqlite"
    shutil.copyfile(golden_sqlite(), copy)
    with sqlite3.connect(copy) as con:
        con.execute("DELETE FROM agentMessages WHERE agent_instance_id = ?", (chat(4),))
    d = load_stagewise_sqlite(copy, chat_id=chat(4))
    assert d.meta["v7_casualty"] is True and d.meta["history_source"] == "history column"
    assert len(d) == 4
    assert d.messages[0].metadata["createdAt"] == "2026-04-10T08:00:00.000Z"


def test_sqlite_single_chat_and_load_history(tmp_path):
    """chat_id picks one chat; load_history needs it when the store holds several."""
    path = golden_sqlite()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert load_stagewise_sqlite(path, chat_id=chat(1)).briefing_indices() == (10,)
    assert load_history(path, chat_id=chat(2)).source_format == "stagewise_sqlite"
    with pytest.raises(HistoryError, match="holds 5 chats: pass chat_id="):
        load_history(path)
    with pytest.raises(HistoryError, match="no chat with id 'nope'"):
        load_stagewise_sqlite(path, chat_id="nope")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # read through a copy
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(HistoryError, match="no agentInstances table"):
        load_stagewise_sqlite(other)


def test_sqlite_histories_round_trip_through_canonical(store):
    """What the store holds survives our writer: briefings, NULL metadata, holes."""
    for h in store.values():
        assert parse_canonical(write_canonical_jsonl(h)) == h


# -- canonical JSONL and detection --------------------------------------------------------------


def test_canonical_header_keeps_id_and_meta():
    """The header carries what messages cannot: the history's id and its notes."""
    h = History(id="demo", messages=(Message(id="a", role="user", parts=(text_part("ü\u2028x"),)),),
                meta={"seed": 3})
    text = write_canonical_jsonl(h)
    assert text.splitlines()[0].startswith('{"kind":"workbench.history","version":1,"id":"demo"')
    back = parse_history(text, source="whatever.jsonl")
    assert back == h and back.meta == {"seed": 3} and back.id == "demo"
    lone = History(id="x", messages=(Message(id="a", role="user", parts=(text_part("\ud83d"),)),))
    assert parse_history(write_canonical_jsonl(lone)) == lone  # a lone surrogate is escaped, not lost


def test_uimessage_json_writer_reads_back_as_stagewise():
    """The plain JSON array writer gives what stagewise's history cell holds."""
    h = load_history(FIXTURES / "stagewise_history_superjson.json")
    again = parse_history(write_uimessage_json(h), source="x.json")
    assert again.source_format == "stagewise" and again.messages == h.messages


def test_canonical_without_header_is_named_after_the_file():
    """Plain UIMessage lines are canonical too; the id comes from the file name."""
    line = json.dumps({"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}]})
    h = parse_history(line + "\n" + line.replace('"a"', '"b"'), source="runs/chat.v2.jsonl")
    assert h.id == "chat.v2" and h.source_format == "canonical" and len(h) == 2


def test_format_names():
    """Every format has a name, and detection only ever answers with one of them."""
    assert list_format_names() == list(FORMATS)
    assert set(FORMATS) == {"canonical", "stagewise", "openai", "openai_jsonl", "anthropic", "claude_code", "codex",
                            "opencode", "copilot_cli", "gemini_cli", "pi", "stagewise_sqlite"}


# -- errors ---------------------------------------------------------------------------------------

OK = json.dumps({"role": "user", "content": "hi"})


def jsonl(*lines: str) -> str:
    return "\n".join(lines) + "\n"


ERRORS = [
    ("truncated-json", "x.json", '[{"role": "user", "content": "hi"', None,
     "x.json:1:34: invalid JSON: Expecting ',' delimiter"),
    ("expecting-value", "x.json", "[1, ]", None, "x.json:1:5: invalid JSON: Expecting value"),
    ("truncated-jsonl-line", "chat.jsonl", jsonl(OK, OK, '{"role": "user", "content": "hi'), None,
     "chat.jsonl:3:29: invalid JSON: Unterminated string starting at"),
    ("unknown-role", "chat.jsonl", jsonl(*[OK] * 16, json.dumps({"role": "robot", "content": "x"})), None,
     "chat.jsonl:17: field 'role': unknown role 'robot' (expected system, user, assistant, tool)"),
    ("content-int", "chat.jsonl", jsonl(OK, json.dumps({"role": "user", "content": 5})), None,
     "chat.jsonl:2: field 'content': must be a string or a list of blocks, got int"),
    ("role-missing", "chat.jsonl", jsonl(OK, json.dumps({"role": "user", "content": "a"}), '{"content": "x"}'),
     "openai_jsonl", "chat.jsonl:3: field 'role': missing"),
    ("tool-calls-not-list", "chat.jsonl", jsonl(json.dumps({"role": "assistant", "content": "", "tool_calls": {}})),
     None, "chat.jsonl:1: field 'tool_calls': must be a list, got object"),
    ("call-name-missing", "chat.json",
     json.dumps({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}]}),
     None, "chat.json: messages[0]: field 'tool_calls[0].function.name': must be a non-empty string, got null"),
    ("messages-not-list", "chat.json", '{"messages": 3}', "openai", "chat.json: field 'messages': must be an array"),
    ("empty", "empty.jsonl", "", None, "empty.jsonl: empty file"),
    ("blank", "empty.jsonl", "\n  \n\n", None, "empty.jsonl: empty file"),
    ("unknown-json", "x.json", '{"foo": 1}', None,
     "x.json: unknown history format (tried stagewise, openai, anthropic, opencode, gemini_cli; found an object with keys foo)"),
    ("unknown-jsonl", "x.jsonl", jsonl('{"foo": 1}', '{"foo": 2}'), None,
     "x.jsonl:1: unknown history format (tried canonical, openai_jsonl, claude_code, codex, copilot_cli, gemini_cli, pi; found an object"),
    ("unknown-format-name", "x.jsonl", OK, "yaml", "x.jsonl: unknown format 'yaml' (known: canonical, stagewise,"),
    ("canonical-parts", "h.jsonl", jsonl(json.dumps({"id": "a", "role": "user", "parts": "hi"})), None,
     "h.jsonl:1: field 'parts': must be a list of parts, got str"),
    ("canonical-id", "h.jsonl", jsonl(json.dumps({"id": 7, "role": "user", "parts": []})), None,
     "h.jsonl:1: field 'id': must be a string, got int"),
    ("canonical-header", "h.jsonl", jsonl('{"kind": "workbench.history", "version": 9, "id": "x"}'), None,
     "h.jsonl:1: field 'version': unsupported version 9 (expected 1)"),
    ("claude-message", "s.jsonl", jsonl('{"type": "user", "uuid": "u1", "message": "hi"}'), None,
     "s.jsonl:1: field 'message': must be an object, got str"),
    ("codex-payload", "r.jsonl", jsonl('{"type": "session_meta", "payload": {}}', '{"type": "response_item", "payload": 3}'),
     "codex", "r.jsonl:2: field 'payload': must be an object, got int"),
    ("codex-call-id", "r.jsonl", jsonl('{"type": "response_item", "payload": {"type": "function_call", "name": "x"}}'),
     None, "r.jsonl:1: field 'payload.call_id': must be a string, got null"),
    ("anthropic-tool-result", "a.json",
     json.dumps({"system": "s", "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}),
     None, "a.json: messages[0]: field 'content[0].tool_use_id': must be a string, got null"),
    ("anthropic-role", "a.json", json.dumps({"system": "s", "messages": [{"role": "system", "content": "x"}]}), None,
     "a.json: messages[0]: field 'role': unknown role 'system' (expected user, assistant)"),
    ("stagewise-item", "s.json", json.dumps([{"id": "a", "role": "user", "parts": []}, 5]), None,
     "s.json: messages[1]"),
    ("superjson-type", "s.json", json.dumps({"json": [], "meta": {"values": ["bigint"]}}), None,
     "s.json: field 'json': unsupported superjson annotation 'bigint'"),
]


@pytest.mark.parametrize(("source", "text", "fmt", "message"), [row[1:] for row in ERRORS], ids=[row[0] for row in ERRORS])
def test_errors_name_file_line_and_field(source, text, fmt, message):
    """Bad input raises HistoryError (a ValueError) whose message says where and what."""
    with pytest.raises(HistoryError) as info:
        parse_history(text, source=source, format=fmt)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(message), str(info.value)


def test_load_history_file_errors(tmp_path):
    """Missing files and non-UTF-8 bytes are HistoryErrors that name the file and line."""
    with pytest.raises(HistoryError, match="missing.jsonl: cannot read"):
        load_history(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(OK.encode() + b"\n\xff\xfe\n")
    with pytest.raises(HistoryError, match=r"bad.jsonl:2: not UTF-8 text \(byte 34\)"):
        load_history(bad)


@pytest.mark.parametrize("name", [row[0] for row in FIXTURE_TABLE])
def test_damaged_input_never_escapes_as_another_exception(name):
    """Truncated or line-dropped files either parse or raise HistoryError: never a deep traceback."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    damaged = [text[:cut] for cut in range(0, len(text), max(1, len(text) // 60))]
    damaged += ["\n".join(lines[:i] + lines[i + 1:]) for i in range(len(lines))]
    damaged += [text.replace('"', "'", k) for k in (1, 7, 40)]
    damaged += [text.replace(old, new) for old, new in (('"content"', '"content":7,"x"'), ('"role"', '"rol"'),
                                                        ('"type"', '"typ"'), ('"parts"', '"parts":{},"p"'))]
    for variant in damaged:
        for fmt in (None, FIXTURE_TABLE[[r[0] for r in FIXTURE_TABLE].index(name)][1]):
            with contextlib.suppress(HistoryError):
                parse_history(variant, source=name, format=fmt)


# Reader speed against json.loads is benchmarks/bench_readers.py's target, not a unit test's.


def _canonical_files() -> list[Path]:
    root = REPO / "sample_histories"
    return sorted(root.glob("*.jsonl")) + sorted(FIXTURES.glob("*.jsonl"))


@pytest.mark.parametrize("path", _canonical_files(), ids=lambda p: p.name)
def test_load_history_line_by_line_equals_parsing_the_text(path):
    """Loading a canonical file a line at a time gives exactly what parsing its whole text gives."""
    loaded = load_history(path)
    parsed = parse_history(path.read_text(encoding="utf-8"), source=str(path))
    assert loaded == parsed
    assert (loaded.id, loaded.meta, loaded.source_format, loaded.source_path) == (
        parsed.id, parsed.meta, parsed.source_format, parsed.source_path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"\n{not json}\n", r"h.jsonl:3:2: invalid JSON: Expecting property name"),
        (b"\n{not json}\n\xff\n", r"h.jsonl:4: not UTF-8 text \(byte 139\)"),  # UTF-8 errors come first
        (b"\n\n  \n", None),  # blank lines are skipped
        (b'\n{"id": "m1"}\n', r"h.jsonl:3: field 'role': missing"),
        (b'\n\xef\xbb\xbf{"id": "m1"}\n', r"h.jsonl:3:1: invalid JSON: Unexpected UTF-8 BOM"),
    ],
    ids=["bad-json", "utf8-after-bad-json", "blank-lines", "bad-message", "bom-inside"],
)
def test_load_history_canonical_errors_match_parse_history(tmp_path, body, message):
    """A canonical file read line by line fails where, and with what, parsing its text fails."""
    header = b'\xef\xbb\xbf{"kind":"workbench.history","version":1,"id":"h","source_format":"canonical","meta":{}}\n'
    path = tmp_path / "h.jsonl"
    path.write_bytes(header + b'{"id":"m0","role":"user","parts":[]}' + body)
    if message is None:
        assert load_history(path) == parse_history(path.read_bytes().decode("utf-8"), source=str(path))
        return
    for fmt in (None, "canonical"):
        with pytest.raises(HistoryError, match=message):
            load_history(path, format=fmt)
    with contextlib.suppress(UnicodeDecodeError), pytest.raises(HistoryError, match=message):
        parse_history(path.read_bytes().decode("utf-8"), source=str(path))


_CC = '{"type":"user","uuid":"u%d","sessionId":"s","message":{"role":"user","content":%s}}'


@pytest.mark.parametrize("lines", [
    [_CC % (1, '"hi"'), _CC % (2, '"there"')],
    [_CC % (1, '"hi"'), "", "   \t", _CC % (2, '"a\\u2028b \\ud83d\\ude00"')],  # blank lines, escapes
    [_CC % (1, '"x"') + "\r", _CC % (2, '"y"') + "\r"],  # CRLF
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "184467440737095516160")],  # an integer past 64 bits
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "-9223372036854775809")],  # just below 64 bits
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "[18446744073709551615, 9223372036854775807]")],
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "1e+300")],
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "NaN")],  # json reads NaN, orjson does not
    [_CC % (1, '"x"'), _CC % (2, '"lone \\ud800"')],
    [_CC % (1, '"x"'), "\x0c", "\u00a0", _CC % (2, '"y"')],  # whitespace only str.isspace knows
    ["\ufeff" + _CC % (1, '"x"'), _CC % (2, '"y"')],
    [_CC % (1, '"x"')],  # one line: maybe a whole JSON document
    [_CC % (1, '"x"'), _CC % (2, '"y"'), "\ufeff" + _CC % (3, '"z"')],  # a BOM inside: an error
    [_CC % (1, '"x"'), '{"broken": ', _CC % (2, '"y\u00e9"')],
    [_CC % (1, '"x"'), _CC % (2, '"' + "[{" * 300 + '"')],  # brackets inside a string do not nest
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "[" * 198 + "]" * 198)],  # 199 deep, under the limit
    [_CC % (1, '"x"'), (_CC % (2, '"y"')).replace('"s"', "[" * 200 + "]" * 200)],  # 201 deep: refused, located
    [_CC % (1, '"x"'), _CC % (2, '"y"'), '{"a": 1'],  # a cut-off last line: left out with a warning
])
@pytest.mark.parametrize("fmt", [None, "claude_code"])
def test_jsonl_read_from_bytes_is_the_text_read(tmp_path: Path, lines: list[str], fmt: str | None) -> None:
    """load_history parses JSONL from the file's bytes (faster); the history or the error is parse_history's."""
    text = "\n".join(lines) + "\n"
    path = tmp_path / "log.jsonl"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    fast = jsonl_bytes_records(path.read_bytes())
    if fast is not None:  # the same records, types included (2**70 stays an int, 1e+300 a float)
        assert repr(fast) == repr(jsonl_records(text.removeprefix("\ufeff"), source="x"))
    try:
        expected: object = parse_history(text, source=str(path), format=fmt)
    except HistoryError as exc:
        with pytest.raises(HistoryError) as got:
            load_history(path, format=fmt)
        assert str(got.value) == str(exc)
        return
    got_history = load_history(path, format=fmt)
    assert got_history == expected
    assert got_history.warnings == expected.warnings  # type: ignore[attr-defined]
    assert [m.digest for m in got_history.messages] == [m.digest for m in expected.messages]  # type: ignore[attr-defined]
    assert (got_history.meta, got_history.log) == (expected.meta, expected.log)  # type: ignore[attr-defined]


def test_jsonl_read_from_bytes_reports_bad_utf8_first(tmp_path: Path) -> None:
    """A JSON error before a byte that is not UTF-8: the UTF-8 error is reported, as from the whole text."""
    path = tmp_path / "log.jsonl"
    path.write_bytes((_CC % (1, '"x"') + "\n{oops\n").encode() + _CC.encode() % (2, b'"\xff"') + b"\n")
    with pytest.raises(HistoryError, match="not UTF-8 text") as got:
        load_history(path)
    assert ":3" in str(got.value)


def test_jsonl_read_from_bytes_keeps_its_speed_on_bracket_heavy_lines() -> None:
    """Tool outputs full of brackets (code, JSON text) stay on the bytes path; only real nesting leaves it."""
    lines = [_CC % (1, '"x"'), _CC % (2, '"' + "[{" * 300 + '"'),
             (_CC % (3, '"y"')).replace('"s"', "[" * 198 + "]" * 198)]
    assert jsonl_bytes_records(("\n".join(lines) + "\n").encode()) is not None
    deep = (_CC % (3, '"y"')).replace('"s"', "[" * 200 + "]" * 200)
    assert jsonl_bytes_records(("\n".join([*lines[:2], deep]) + "\n").encode()) is None


def _reference_scan(value: object) -> tuple[bool, int]:
    if isinstance(value, dict):
        kids = [_reference_scan(v) for v in value.values()]
    elif isinstance(value, list):
        kids = [_reference_scan(v) for v in value]
    else:
        return isinstance(value, float) and not abs(value) < 2.0**63, 0
    return any(h for h, _ in kids), 1 + max((d for _, d in kids), default=0)


@pytest.mark.slow
def test_the_bytes_path_scan_measures_depth_and_huge_floats_as_the_text_would() -> None:
    """One walk gives json_depth of the value's text and whether a float of 2**63 or more is in it."""
    import json as _json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from workbench.history.readers.jsontext import _scan, json_depth

    leaves = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=False)
    values = st.recursive(leaves, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids,
                                                                                              max_size=3), max_leaves=20)

    @settings(max_examples=300, deadline=None)
    @given(values)
    def check(value: object) -> None:
        assert _scan(value) == _reference_scan(value)
        assert _scan(value)[1] == json_depth(_json.dumps(value))

    check()
