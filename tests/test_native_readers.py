"""The OpenCode, Copilot CLI, Gemini CLI and Pi readers: every shared log, and hand-built logs for each rule.

The shared logs (``../shared/agent_formats``, and the two of ``../shared/real_sessions_large`` that compacted) are
read once per module; their numbers come from the files themselves (line 949's ``preCompactionTokens``, the OpenCode
export's 44th message). The hand-built ones (``native_log_builders``) pin what no shared log shows: manual
compactions, prunes, subagents, ``$set`` updates, branches, hostile numbers.
"""

from __future__ import annotations

import functools
import json

import pytest
from conftest import need_shared, shared_dir
from native_log_builders import CopilotLog, GeminiLog, OpenCodeLog, PiLog, oc_tool

from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.analysis.real_logs.reality import follow_log
from workbench.history.errors import HistoryError
from workbench.history.readers import detect_format, load_history, parse_history
from workbench.history.readers.discover import agent_logs
from workbench.history.readers.opencode_store import opencode_db_sessions
from workbench.history.readers.uimessage import message_from_uimessage
from workbench.history.session_log import SessionLog
from workbench.replay import simulate

AGENT_FORMATS = {  # file -> (format, version, model, calls, messages) as read
    "copilot-cli/JeffreyCA-azure-dev__01KXYAY6X6AX6YHS3EQP27BY7E_0.jsonl": ("copilot_cli", "1.0.72-1", "gpt-5.6-sol", 0, 148),
    "copilot-cli/eitatech-gatomia-vscode__17_6a36dde4c6_0.jsonl": ("copilot_cli", "1.0.40", "gpt-5.4", 0, 50),
    "copilot-cli/polecatspeaks-StarCar__70_f01dc53f44_0.jsonl": ("copilot_cli", "1.0.74", "claude-fable-5", 0, 134),
    "gemini-cli/savekirk-session-bridge__23_607762cc12_0.json": ("gemini_cli", None, "gemini-3-flash-preview", 3, 6),
    "opencode/The-Best-Codes-bestcodes.dev__c0_ea73dac434_0.json": ("opencode", "1.14.28", "ling-2.6-flash-free", 7, 8),
    "opencode/eitatech-gatomia-vscode__04_3777f29eaf_0.json": ("opencode", "1.14.30", "gpt-5.4", 1, 3),
    "opencode/nivalis-studio-biome-config__01_25fb057a68_1.json": ("opencode", "1.3.13", "gpt-5.3-codex", 3, 5),
    "pi/entireio-auth-go__f1_c404717fe7_0.jsonl": ("pi", None, "gpt-5.5", 106, 236),
}
OPENCODE_LARGE = "opencode__savekirk-session-bridge__13_dddd416599_0.json.gz"
COPILOT_LARGE = "copilot_cli__polecatspeaks-StarCar__4b_a9fe109041_0.jsonl.gz"


@functools.cache
def _shared(path: str) -> object:
    return load_history(need_shared(shared_dir() / path))


def shared(path: str):  # noqa: ANN201 - a History
    return _shared(path)


# -- every shared log --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(AGENT_FORMATS), ids=lambda n: n.split("/")[0] + ":" + n.split("__")[0][-12:])
def test_each_agent_formats_log_reads_with_its_agent_version_model_and_calls(name):
    """Each native log of ../shared/agent_formats loads by detection, as its agent's, warning-free."""
    fmt, version, model, calls, messages = AGENT_FORMATS[name]
    h = shared(f"agent_formats/{name}")
    assert (h.source_format, h.log.agent, h.log.version, h.log.model) == (fmt, fmt, version, model)
    assert (len(h.log.calls), len(h.messages), h.log.compactions, h.warnings) == (calls, messages, (), ())


def test_the_opencode_export_of_the_large_set_logs_its_compaction_where_it_happened():
    """The 1.4.3 export's automatic compaction: after the call that billed 112,579, with its real summary."""
    h = shared(f"real_sessions_large/{OPENCODE_LARGE}")
    (c,) = h.log.compactions
    assert (c.index, c.trigger, c.tokens_before, c.summary_index) == (44, "auto", 112_579, 44)
    assert c.summary is not None and len(c.summary) == 4_494 and h.messages[44].role == "assistant"
    assert h.messages[43].usage.total_tokens == 112_579  # the measure OpenCode compared (tokens.total)
    assert h.messages[44].usage is None and h.messages[44].meta("briefingUsage")["input_tokens"] == 98_608
    assert (h.log.version, h.log.model, len(h.log.calls)) == ("1.4.3", "claude-sonnet-4.6", 68)


def test_the_copilot_log_of_the_large_set_logs_its_compaction_with_the_agents_own_count():
    """Copilot CLI 1.0.74: the compaction started at line 949 with 160,540 tokens over 149 messages (its own
    preCompactionMessagesLength), the summary from compaction_complete; subagents' 506 events read apart."""
    h = shared(f"real_sessions_large/{COPILOT_LARGE}")
    (c,) = h.log.compactions
    assert (c.source_line, c.index, c.trigger, c.tokens_before) == (949, 149, "auto", 160_540)
    assert c.summary.startswith("<overview>") and h.meta["subagent_events"] == 506
    assert h.log.extra["tool_definitions_tokens"] == 11_789 and h.log.model == "claude-fable-5"
    assert h.log.extra["compaction_counts"] == [{"index": 149, "line": 949, "system": 36_321,
                                                 "conversation": 113_075, "tool_definitions": 11_144}]
    assert h.log.calls == ()  # assistant.usage is ephemeral: never in the file
    assert sum(m.logged_tokens is not None for m in h.messages) == 120  # every (Claude) answer's own count


@pytest.mark.parametrize("usage", [True, False], ids=["usage", "ignore-usage"])
def test_reality_predicts_the_opencode_compaction_exactly(usage):
    """The 1.4.3 compaction: its preset (opencode_1_3, window 128,000 - 20,000) predicts message 44, with the
    log's usage or without it; the context after it within 10% of the 16,303 the next call billed."""
    s = follow_log(shared(f"real_sessions_large/{OPENCODE_LARGE}"), usage=usage)
    (c,) = s.compactions
    assert (s.preset, s.window, c.real_index, c.predicted_index) == ("opencode_1_3", 128_000, 44, 44)
    if usage:
        assert c.logged_tokens_after == 16_303 and abs(c.after_error) < 0.10


def test_reality_predicts_the_copilot_compaction_within_two_messages():
    """Copilot CLI's count (o200k x 1.2, a Claude answer as its outputTokens, the logged tool definitions) crosses
    0.8 x 200,000 two messages after the agent did: it counts each tool result's call id and its newer system
    prompt, which the transcript's count leaves out (docs/reality.md)."""
    s = follow_log(shared(f"real_sessions_large/{COPILOT_LARGE}"))
    (c,) = s.compactions
    assert (s.preset, s.window, c.real_index, c.predicted_index) == ("copilot_cli", 200_000, 149, 151)
    assert 160_000 <= c.predicted_tokens_before < 161_000 * 1.01


def test_agent_settings_pick_each_agents_preset_and_window_from_the_log():
    """Preset by agent and version, window by model, as each agent's own tables size them."""
    cases = {f"real_sessions_large/{OPENCODE_LARGE}": ("opencode_1_3", 128_000),
             f"real_sessions_large/{COPILOT_LARGE}": ("copilot_cli", 200_000),
             "agent_formats/opencode/eitatech-gatomia-vscode__04_3777f29eaf_0.json": ("opencode", 272_000),
             "agent_formats/copilot-cli/eitatech-gatomia-vscode__17_6a36dde4c6_0.jsonl": ("copilot_cli", 272_000),
             "agent_formats/gemini-cli/savekirk-session-bridge__23_607762cc12_0.json": ("gemini_cli", 1_048_576),
             "agent_formats/pi/entireio-auth-go__f1_c404717fe7_0.jsonl": ("pi", 272_000)}
    for path, (preset, window) in cases.items():
        s = agent_settings(shared(path), dollars=False)
        assert (s.preset, s.window, s.knobs.context_window_tokens) == (preset, window, window), path
    copilot = agent_settings(shared(f"real_sessions_large/{COPILOT_LARGE}"), dollars=False).knobs
    assert (copilot.token_ratio, copilot.hidden_prefix_tokens, copilot.trigger_ratio) == (1.2, 11_789, 0.8)


def test_a_folder_of_shared_logs_is_found_recursively_with_gzipped_exports():
    """Discovery finds every native log of agent_formats in its agent subfolders, and the .json.gz export."""
    found, notes = agent_logs(need_shared(shared_dir() / "agent_formats"))
    names = {p.relative_to(shared_dir() / "agent_formats").as_posix() for p in found}
    assert names - {"sources.json"} == set(AGENT_FORMATS)  # sources.json is no log: the loader says so
    large, _ = agent_logs(shared_dir() / "real_sessions_large")
    assert OPENCODE_LARGE in {p.name for p in large} and notes == []


# -- OpenCode, hand-built ----------------------------------------------------------------------------------------

def _oc(log: OpenCodeLog):  # noqa: ANN202
    return parse_history(log.text(), source="oc.json")


def test_opencode_manual_compaction_and_its_summary_message():
    """A /compact (auto false) is manual; its summary message is the new context's first and no logged call."""
    log = OpenCodeLog().user("go").assistant(total=5_000).compaction(auto=False).assistant("the summary", total=9_000,
                                                                                            summary=True)
    h = _oc(log.user("more").assistant(total=2_000))
    (c,) = h.log.compactions
    assert detect_format(log.text()) == "opencode"
    assert (c.index, c.trigger, c.tokens_before, c.summary) == (2, "manual", 5_000, "the summary")
    assert [call.index for call in h.log.calls] == [1, 4] and [m.role for m in h.messages] == [
        "user", "assistant", "assistant", "user", "assistant"]


def test_opencode_tool_parts_stay_in_their_step_and_pruned_outputs_are_logged_prunes():
    """Tool calls and outputs stay in the assistant message; outputs stamped compacted become a LoggedPrune from
    the first message created after the stamp, and the replay stubs them there."""
    log = OpenCodeLog().user("go")  # created at +1 s; each message one second later
    stamp = log.t + 2_500  # after the second step (+3 s), before the next user message (+4 s)
    log.assistant(total=5_000, tools=[oc_tool("read", "c1", "x" * 40_000, compacted=stamp)])
    log.assistant(total=6_000, tools=[oc_tool("bash", "c2", "boom", status="error")])
    h = _oc(log.user("next").assistant(total=3_000))
    tool = h.messages[1].parts[1]
    assert (tool.kind, tool.state, tool.output[:3]) == ("tool", "output-available", "xxx")
    assert h.messages[2].parts[1].state == "output-error"
    (prune,) = h.log.prunes
    assert (prune.index, prune.messages) == (3, (1,))
    again = SessionLog.from_dict(json.loads(json.dumps(h.log.to_dict())), message=message_from_uimessage)
    assert again.prunes == h.log.prunes and again.agent == "opencode"
    run = simulate(h, agent_settings(h, dollars=False).knobs.replace(trigger_ratio=-1, trigger_reserve_tokens=0,
                                                                    prune_tool_outputs=False))
    assert any(e.kind == "elide" and "the agent's own prune" in e.detail for e in run.events)


def test_opencode_hostile_numbers_and_parts_warn_and_shapes_fail_located():
    """A token count that is no count drops that call's usage with a warning; an unknown part type is skipped
    with one; a message that is not an object is one located error."""
    log = OpenCodeLog().user("go").assistant(total=1, tokens={"input": "NaN", "output": 1e400, "cache": []})
    log.messages[1]["parts"].append({"type": "hologram"})
    h = _oc(log)
    assert h.log.calls == () and [w.field for w in h.warnings] == ["parts[3].type", "info.tokens.input"]
    doc = log.doc()
    doc["messages"][1] = 7
    with pytest.raises(HistoryError, match=r"oc\.json: messages\[1\]: expected a message object, got int"):
        parse_history(json.dumps(doc), source="oc.json")
    doc["messages"][1] = {"info": {"role": "robot"}, "parts": []}
    with pytest.raises(HistoryError, match=r"messages\[1\]: field 'info.role': unknown role 'robot'"):
        parse_history(json.dumps(doc), source="oc.json")


def test_opencode_database_and_storage_folder_read_as_the_export(tmp_path):
    """OpenCode's own storage: opencode.db (one session, or db#id of several) and the older storage folder give
    the export's history; discovery lists one entry per session and never the message or part files."""
    log = OpenCodeLog().user("go").assistant(total=5_000, tools=[oc_tool("read", "c1", "abc")]).compaction()
    log.assistant("sum", total=6_000, summary=True).user("on").assistant(total=1_500)
    export = _oc(log)
    single = load_history(log.write_db(tmp_path / "opencode.db"))
    assert [m.parts for m in single.messages] == [m.parts for m in export.messages]
    assert single.log.compactions[0].index == export.log.compactions[0].index == 2
    (tmp_path / "data").mkdir()
    multi = log.write_db(tmp_path / "data" / "opencode.db", extra_sessions=1)
    assert [s for s, _ in opencode_db_sessions(multi)] == ["ses_1", "ses_2"]
    with pytest.raises(HistoryError, match=r"holds 2 sessions: name one as opencode.db#<id>"):
        load_history(multi)
    second = load_history(f"{multi}#ses_2")
    assert len(second.messages) == len(export.messages) and second.source_path.endswith("opencode.db#ses_2")
    session_file = log.write_storage(tmp_path / "data" / "storage")
    folder = load_history(session_file)
    assert [m.parts for m in folder.messages] == [m.parts for m in export.messages]
    found, _ = agent_logs(tmp_path / "data")
    assert [p.name for p in found] == ["opencode.db#ses_1", "opencode.db#ses_2", "ses_1.json"]


def test_opencode_storage_file_that_is_not_json_is_one_located_error(tmp_path):
    """A damaged part file of the storage folder names that file."""
    session_file = OpenCodeLog().user("go").assistant(total=100).write_storage(tmp_path / "storage")
    bad = next((tmp_path / "storage" / "part").rglob("*.json"))
    bad.write_text("{nope")
    with pytest.raises(HistoryError, match=rf"{bad.name}: invalid JSON"):
        load_history(session_file)


# -- Copilot CLI, hand-built -------------------------------------------------------------------------------------

def test_copilot_events_subagents_system_updates_and_claude_answers():
    """Main thread only; the first system prompt is the transcript's, later ones counted; a Claude answer carries
    its logged count, a GPT answer does not; a failed tool run is an error result."""
    log = CopilotLog().system().user("hi").assistant("look", calls=[("c1", "powershell")], out=321)
    log.result("c1", "done", success=False)
    log.event("assistant.message", agent="sub-1", messageId="x", model="claude-opus-4.8", content="sub",
              toolRequests=[], outputTokens=9, parentToolCallId="c9")
    log.system("You are the GitHub Copilot CLI. (updated)").assistant("gpt says", out=40, model="gpt-5.4")
    h = parse_history(log.text(), source="events.jsonl")
    assert detect_format(log.text()) == "copilot_cli"
    assert [m.role for m in h.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert h.messages[1].text.startswith("<now/>")  # what the model read (transformedContent)
    assert (h.messages[2].logged_tokens, h.messages[4].logged_tokens) == (321, None)
    assert h.messages[3].parts[0].get("isError") is True
    assert (h.meta["subagent_events"], h.meta["system_updates"], h.log.version) == (1, 1, "1.0.74")


def test_copilot_compactions_manual_failed_and_usage_events():
    """/compact right after the user's message is manual; a failed compaction is not logged as one; an
    assistant.usage line (an SDK's dump) becomes the call's usage, cached input split out."""
    log = CopilotLog().system().user("go").assistant("a", out=10).compaction(pre=50_000)
    log.user("/compact").compaction(pre=20_000, tools=900)
    log.event("session.compaction_start", systemTokens=1, conversationTokens=2, toolDefinitionsTokens=3)
    log.event("session.compaction_complete", success=False, error="boom")
    log.assistant("b", out=5).event("assistant.usage", model="claude-fable-5", inputTokens=10_000,
                                    cacheReadTokens=8_000, cacheWriteTokens=1_000, outputTokens=5)
    h = parse_history(log.text(), source="events.jsonl")
    assert [(c.index, c.trigger, c.tokens_before) for c in h.log.compactions] == [(3, "auto", 50_000),
                                                                                 (4, "manual", 20_000)]
    (call,) = h.log.calls
    assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.cache_write_tokens) == (1_000, 8_000,
                                                                                                      1_000)
    assert h.meta["failed_compactions"] == 1 and h.log.extra["tool_definitions_tokens"] == 1_000


def test_copilot_hostile_lines_warn_and_a_bad_data_field_is_located():
    """A glued line is skipped with a warning naming it; outputTokens that are no count warn; data that is not an
    object fails naming line and field."""
    log = CopilotLog().system().user("hi").assistant("a", out=10)
    log.lines[-1]["data"]["outputTokens"] = -5
    text = log.text().replace("\n", "", 1)  # lines 1 and 2 glued
    h = parse_history(text, source="events.jsonl")
    assert any(w.line == 1 and "glued" in w.message for w in h.warnings)
    assert any(w.field == "data.outputTokens" for w in h.warnings)
    bad = CopilotLog().system().user("hi")
    bad.lines[-1]["data"] = [1]
    with pytest.raises(HistoryError, match=r"events.jsonl:4: field 'data': must be an object, got array"):
        parse_history(bad.text(), source="events.jsonl")


# -- Gemini CLI, hand-built --------------------------------------------------------------------------------------

def test_gemini_both_layouts_read_the_same_history():
    """The JSON document and the record-per-line layout of one chat give the same messages and calls."""
    log = GeminiLog().info("hello").user("read a").gemini("reading", prompt=20_000, cached=15_000,
                                                          calls=[("r1", "read_file", "content")])
    log.gemini("done", prompt=21_000)
    doc = parse_history(json.dumps(log.doc(), indent=2), source="session.json")
    lines = parse_history(log.jsonl(), source="session.jsonl")
    assert detect_format(log.jsonl()) == detect_format(json.dumps(log.doc())) == "gemini_cli"
    assert [m.parts for m in doc.messages] == [m.parts for m in lines.messages]
    for text in (json.dumps(log.doc(), indent=2), log.jsonl()):  # told the format, either layout reads the same
        assert [m.parts for m in parse_history(text, source="s", format="gemini_cli").messages] == [
            m.parts for m in doc.messages]
    assert [m.role for m in doc.messages] == ["user", "assistant", "tool", "assistant"]
    u = doc.log.calls[0].usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        5_000, 15_000, 25, 5, 20_000)  # the agent's measure: the prompt's count


def test_gemini_set_updates_rewinds_and_replaced_records():
    """A later record with the same id replaces the earlier in place; $rewindTo drops it and all after;
    $set.messages replaces every message; metadata merges."""
    log = GeminiLog().user("one").gemini("a", prompt=100).user("two").gemini("b", prompt=200)
    replaced = {**log.messages[1], "content": "a, revised"}
    text = log.jsonl(replaced, {"$rewindTo": "g2"}, {"$set": {"summary": "s"}})
    h = parse_history(text, source="s.jsonl")
    assert [m.text for m in h.messages] == ["one", "a, revised"] and h.meta["summary"] == "s"
    reset = parse_history(log.jsonl({"$set": {"messages": [log.messages[2]]}}), source="s.jsonl")
    assert [m.text for m in reset.messages] == ["two"]


def test_gemini_state_snapshot_is_a_logged_compaction():
    """A user message holding the <state_snapshot> the compression wrote is a compaction; the UI's line after a
    compression gives its sizes."""
    log = GeminiLog().user("go").gemini("a", prompt=600_000)
    log.user("<state_snapshot>\n<overall_goal>ship</overall_goal>\n</state_snapshot>")
    log.info("Chat history compressed from 600,000 to 20,000 tokens.").gemini("b", prompt=25_000)
    h = parse_history(log.jsonl(), source="s.jsonl")
    (c,) = h.log.compactions
    assert (c.index, c.tokens_before, c.tokens_after, c.summary_index) == (2, 600_000, 20_000, 2)
    assert c.summary.startswith("<state_snapshot>")


# -- Pi, hand-built ----------------------------------------------------------------------------------------------

def test_pi_reads_the_last_branch_and_its_compaction_with_what_it_kept():
    """Entries off the last entry's branch are left out with a warning; a compaction keeps the messages from its
    firstKeptEntryId, after Pi's summary message; an aborted call's usage is not a call."""
    log = PiLog()
    first = log.user("task")
    log.assistant("look", total=10_000, call="c1")
    kept = log.result("c1", "files")
    log.assistant("more", total=12_000)
    log.compaction(kept, before=12_000)
    log.user("next")
    log.assistant("x", total=3_000, stop="aborted")
    log.user("abandoned", parent=first)  # a branch from the first entry, then back to the main line
    log.user("resume", parent=log.lines[-2]["id"])
    h = parse_history(log.text(), source="pi.jsonl")
    assert detect_format(log.text()) == "pi"
    assert [m.text.split()[0] if m.text else m.role for m in h.messages] == [
        "task", "look", "tool", "more", "next", "x", "resume"]
    (c,) = h.log.compactions
    assert (c.index, c.tokens_before, c.trigger) == (4, 12_000, "auto")
    assert c.kept[0].text.startswith("The conversation history before this point was compacted")
    assert [m.role for m in c.kept[1:]] == ["tool", "assistant"]
    assert [call.index for call in h.log.calls] == [1, 3] and "other branches" in h.warnings[0].message
    assert (h.log.extra["thinking_level"], h.log.model) == ("medium", "gpt-5.5")


def test_pi_hostile_usage_warns_and_a_bad_role_is_located():
    log = PiLog()
    log.user("task")
    log.assistant("a", total=1_000)
    log.lines[-1]["message"]["usage"]["cacheRead"] = float("inf")
    h = parse_history(log.text(), source="pi.jsonl")
    assert h.log.calls == () and h.warnings[0].field == "message.usage.cacheRead"
    log.lines[-1]["message"]["role"] = "robot"
    with pytest.raises(HistoryError, match=r"pi.jsonl:5: field 'message.role': unknown role 'robot'"):
        parse_history(log.text(), source="pi.jsonl")


def test_builders_survive_gzip_and_folder_discovery(tmp_path):
    """Each agent's folder layout under a home folder is found: Claude Code's projects, Copilot's session-state,
    Gemini's chats, Pi's sessions; every file found loads as its agent's."""
    import gzip

    home = tmp_path / "home"
    (home / ".copilot/session-state/s-1").mkdir(parents=True)
    (home / ".copilot/session-state/s-1/events.jsonl").write_text(CopilotLog().system().user("hi").text())
    (home / ".copilot/session-state/s-1/plan.md").write_text("# plan")
    (home / ".gemini/tmp/abc/chats").mkdir(parents=True)
    (home / ".gemini/tmp/abc/chats/session-1.jsonl").write_text(GeminiLog().user("a").gemini("b", prompt=9).jsonl())
    (home / ".pi/agent/sessions/--w--").mkdir(parents=True)
    (home / ".pi/agent/sessions/--w--/1_pi.jsonl").write_text(PiLog().text().rstrip() + "\n" + json.dumps(
        {"type": "message", "id": "z", "parentId": "e002", "message": {"role": "user", "content": "x"}}) + "\n")
    (home / "exports").mkdir()
    (home / "exports/oc.json.gz").write_bytes(gzip.compress(OpenCodeLog().user("a").assistant(total=9).text().encode()))
    found, _ = agent_logs(home)
    agents = sorted(load_history(p).log.agent for p in found)
    assert agents == ["copilot_cli", "gemini_cli", "opencode", "pi"]



# -- each agent's window by model ----------------------------------------------------------------------------------

def test_each_agents_window_reserve_and_ratio_by_model():
    """The window each agent gives a model (its own table), and what else the preset's knobs take from the log;
    a user's own knobs (base) keep their ratio and prefix, the window still comes from the log."""
    from workbench.knobs import Knobs

    def settings(log_text: str, source: str, base: Knobs | None = None):  # noqa: ANN202
        return agent_settings(parse_history(log_text, source=source), base=base, dollars=False)

    sonnet = settings(CopilotLog(model="claude-sonnet-4.6").system().user("hi").compaction(pre=9).text(), "e.jsonl")
    assert (sonnet.window, sonnet.knobs.token_ratio, sonnet.knobs.hidden_prefix_tokens) == (168_000, 1.17, 1_000)
    unknown = settings(CopilotLog(model="gpt-9").system().user("hi").text(), "e.jsonl")
    assert (unknown.window, unknown.knobs.token_ratio) == (128_000, 1.0)
    own = settings(CopilotLog().system().user("hi").compaction(pre=9).text(), "e.jsonl", base=Knobs())
    assert (own.window, own.knobs.token_ratio, own.knobs.hidden_prefix_tokens) == (200_000, 1.0, 0)
    oc = settings(OpenCodeLog(provider="github-copilot", model="gpt-4.1").user("a").assistant(total=9).text(), "o.json")
    assert (oc.preset, oc.window, oc.knobs.trigger_reserve_tokens) == ("opencode_1_3", 64_000, 16_384)
    pi = settings(PiLog(provider="openai-codex", model="gpt-5.5").text().rstrip() + "\n" + json.dumps(
        {"type": "message", "id": "m", "parentId": "e002", "message": {"role": "user", "content": "x"}}), "p.jsonl")
    assert (pi.preset, pi.window, pi.knobs.trigger_reserve_tokens) == ("pi", 272_000, 16_384)
    gemma = settings(GeminiLog(model="gemma-4-31b-it").user("a").gemini("b", prompt=9).jsonl(), "g.jsonl")
    assert (gemma.preset, gemma.window) == ("gemini_cli", 256_000)
