"""The extractive briefer: real sectioned text without an LLM, every link kept, chained, fast."""

from __future__ import annotations

import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted import tool_history

from workbench.briefing.base import BriefRequest
from workbench.briefing.extractive import (
    H_DECISIONS,
    H_ERRORS,
    H_FILES,
    H_LINKS,
    ExtractiveBriefer,
    parse_briefing,
    write_briefing,
)
from workbench.briefing.textrefs import LINK_RE
from workbench.history.model import History, Message, Part, text_part, tool_call_part
from workbench.knobs import Knobs
from workbench.replay import simulate

KNOBS = Knobs(context_window_tokens=16_000, min_kept_messages=5)


def req(messages: list[Message], previous: str | None = None, *, chain_index: int = 1, target: int = 30_000):
    return BriefRequest(
        chain_index=chain_index, folded=tuple(messages), folded_from=0, boundary=len(messages),
        previous_briefing=previous, previous_chars=len(previous or ""), new_material_chars=0,
        compact_history_chars=0, target_chars=target, bucket="none", ratio=0.0, percent=0, knobs=KNOBS,
    )


def user(i: int, text: str, **meta) -> Message:
    return Message(id=f"u{i}", role="user", parts=(text_part(text),), metadata=meta or None)


def assistant(i: int, *parts: Part) -> Message:
    return Message(id=f"a{i}", role="assistant", parts=parts)


CONVERSATION = [
    user(0, "Please port [the parser](https://example.com/spec#parser) to Rust. Never touch src/legacy/old.py.",
         mentions=[{"providerType": "file", "mountedPath": "w1/docs/plan.md"}]),
    assistant(
        1,
        text_part("I read [](path:w1/src/parser.py) first."),
        tool_call_part("read", "c1", {"path": "w1/src/parser.py"}, state="output-available", output={"x": 1}),
        tool_call_part("multiEdit", "c2", {"path": "w1/src/lib.rs", "edits": [{"old_string": "a", "new_string": "b"}]},
                       state="output-error", error_text="old_string not found\nmore detail"),
        tool_call_part("executeShellCommand", "c3", {"command": "cargo test"}, state="output-available",
                       output={"exit_code": 101, "output": "test parser::ok ... FAILED"}),
    ),
    user(2, "We decided to keep the public API stable. Use serde for JSON."),
    assistant(3, text_part("Tests pass now; see ![chart](img/chart.png) and [](path:w1/src/lib.rs).")),
]


def test_sections_carry_files_decisions_errors_links_and_status():
    text = write_briefing(req(CONVERSATION))
    for heading in (H_FILES, H_DECISIONS, H_ERRORS, H_LINKS, "## Session intent", "## Current status"):
        assert heading in text
    assert "[](path:w1/src/parser.py) — read" in text  # from the tool input
    assert "[](path:w1/src/lib.rs) — edited" in text
    assert "[](path:src/legacy/old.py) — mentioned" in text  # a plain path in the user's words
    assert "[](path:w1/docs/plan.md) — mentioned" in text  # a mention in metadata
    assert "Never touch src/legacy/old.py." in text and "keep the public API stable" in text
    assert "old_string not found" in text and "exited 101" in text
    assert text.rstrip().endswith("Tests pass now; see ![chart](img/chart.png) and [](path:w1/src/lib.rs).")


def test_every_link_of_the_folded_span_appears_verbatim():
    text = write_briefing(req(CONVERSATION))
    for link in ("[the parser](https://example.com/spec#parser)", "[](path:w1/src/parser.py)",
                 "![chart](img/chart.png)", "[](path:w1/src/lib.rs)"):
        assert link in text


_label = st.text(alphabet="abc XYZ_-.", max_size=12)
_target = st.from_regex(r"(path:w[0-9]/[a-z]{1,8}(/[a-z0-9_.-]{1,10}){0,3}|https://ex\.com/[a-z0-9/#?=&_-]{0,20})",
                        fullmatch=True)
_links = st.lists(st.builds(lambda label, target: f"[{label}]({target})", _label, _target), min_size=1, max_size=6)
_filler = st.text(alphabet="abcdefghij klmnop.,!?\n", max_size=120)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _links, _filler), min_size=1, max_size=8),
       st.integers(min_value=100, max_value=2_000))
def test_property_no_link_is_ever_lost_even_when_trimmed(turns, target):
    """Whatever the text around them and however small the target, every link survives."""
    msgs = [Message(id=str(i), role=role, parts=(text_part(filler + " " + " and ".join(links) + "."),))
            for i, (role, links, filler) in enumerate(turns)]
    text = write_briefing(req(msgs, target=target))
    for _, links, _ in turns:
        for link in links:
            assert link in text


def test_chained_briefing_merges_the_previous_sections():
    first = write_briefing(req(CONVERSATION[:2]))
    later = [user(4, "Now add [](path:w1/src/new.rs) and docs at [guide](https://example.com/guide)."),
             assistant(5, text_part("Added it."))]
    second = write_briefing(req(later, first, chain_index=2))
    assert "[](path:w1/src/parser.py) — read" in second  # carried over
    assert "[](path:w1/src/new.rs)" in second and "[guide](https://example.com/guide)" in second
    assert second.count(H_FILES) == 1 and "Compression 1:" in second and "Compression 2:" in second
    assert second.rstrip().endswith("Added it.")
    assert parse_briefing(second).intent == parse_briefing(first).intent


def test_a_foreign_previous_briefing_is_kept_with_its_links():
    """An LLM's (or a real stagewise) briefing is carried as-is, its links guaranteed too."""
    previous = "## Earlier work\n\nYou fixed [](path:w1/a.ts) and read [docs](https://x.dev/a).\n"
    text = write_briefing(req([user(0, "Continue.")], previous, chain_index=2))
    assert text.startswith("## Earlier work\n\nYou fixed [](path:w1/a.ts)")
    assert "[docs](https://x.dev/a)" in text


def test_deterministic_and_record_fields():
    briefer = ExtractiveBriefer()
    a, b = briefer(req(CONVERSATION)), briefer(req(CONVERSATION))
    assert a == b
    assert a.model == "extractive" and a.chars == len(a.text) and a.tokens == -(-a.chars // 4)
    assert a.cost_usd == 0 and not a.leak_previous_tag


def test_replays_share_briefings_and_each_is_the_one_written_afresh():
    """Replays of one history under several presets ask for many of the same briefings; each answer, shared or not,
    is the record the briefer writes for that request without the shared ones (no ``folded_key``)."""
    from dataclasses import replace

    from workbench.history.readers import load_history
    from workbench.presets import get_preset

    history = load_history(REPO / "sample_histories" / "tool_heavy.jsonl")
    briefer, asked = ExtractiveBriefer(), []

    def checked(request: BriefRequest):
        record = briefer(request)
        assert request.folded_key is not None
        assert record == briefer(replace(request, folded_key=None))
        asked.append((request.folded_key, request.previous_briefing, request.chain_index, request.target_chars))
        return record

    checked.name = "extractive"  # type: ignore[attr-defined]
    for name in ("stagewise", "msagent", "claude_code"):
        for window in (16_000, 32_000):
            simulate(history, get_preset(name).replace(context_window_tokens=window), checked)
    assert len(set(asked)) < len(asked)  # some were shared


def test_links_from_the_replay_span_survive_in_every_landed_briefing():
    """In a chained replay each briefing holds every link of everything folded so far."""
    msgs = [Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
                    parts=(text_part(f"see [](path:w1/f{i}.py) " + "q" * 2_000),)) for i in range(60)]
    run = simulate(History(id="links", messages=tuple(msgs)), KNOBS, ExtractiveBriefer())
    landed = [c for c in run.compressions if c.status == "landed"]
    assert len(landed) >= 3
    for c in landed:
        found = set(LINK_RE.findall(c.record.text))
        assert {f"[](path:w1/f{i}.py)" for i in range(c.boundary)} <= found


def test_a_2000_message_replay_briefs_each_of_its_about_20_compressions():
    """Every compression of a 2,001-message tool history gets a briefing text (its speed: benchmarks/run.py's
    ``extractive`` row)."""
    history = tool_history(1_000, output_chars=8_000)  # 2,001 messages
    run = simulate(history, Knobs(context_window_tokens=200_000), ExtractiveBriefer())
    assert 15 <= run.metrics.compressions <= 40
    assert all(c.record.text for c in run.compressions)


def test_every_planted_decision_of_the_short_sample_survives():
    """short.jsonl lists the decisions and constraints planted in its user turns; each folded one is kept."""

    from workbench.history.readers import load_history

    path = REPO / "sample_histories" / "short.jsonl"
    history = load_history(path)
    where = {m.id: i for i, m in enumerate(history.messages)}
    run = simulate(history, Knobs(context_window_tokens=8_000, min_kept_messages=5), ExtractiveBriefer())
    checked = 0
    for comp in run.compressions:
        for fact in history.meta["facts"]:
            if where[fact["message_id"]] < comp.boundary:
                assert fact["text"] in comp.record.text, (comp.chain_index, fact)
                checked += 1
    assert run.metrics.compressions >= 10 and checked > 100


# -- issue 21, item 11: injected rules text is not the session's intent ---------------------------------------

INJECTED = [
    ("AGENTS.md", "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nNever push to main.\n</INSTRUCTIONS>", {}),
    ("environment", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", {}),
    ("user-instructions", "<user_instructions>\nAlways run the tests.\n</user_instructions>", {}),
    ("skill", "<skill>\n<name>tdd</name>\nWrite the test first.\n</skill>", {}),
    ("system-reminder", "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
                        "# claudeMd\nCodebase and user instructions are shown below.\n</system-reminder>", {}),
    ("claude-code-meta", "Base directory for this skill: /skills/tdd\n\n# Test-Driven Development", {"isMeta": True}),
    ("command-caveat", "<local-command-caveat>Caveat: The messages below were generated by the user while running "
                       "local commands.</local-command-caveat>", {"isMeta": True}),
    ("compact-summary", "This session is being continued from a previous conversation that ran out of context.",
     {"isCompactSummary": True}),
]


def _intent(text: str) -> str:
    return parse_briefing(write_briefing(req([user(0, text)]))).intent


def test_injected_rules_text_is_never_the_session_intent():
    """AGENTS.md, CLAUDE.md and its system reminders, Codex's environment context and skills, Claude Code's meta
    lines: the agent put them there, so the first real request is the intent, however many come before it."""
    for name, text, meta in INJECTED:
        msgs = [user(0, text, **meta), user(1, "Port the parser to Rust, please.")]
        intent = parse_briefing(write_briefing(req(msgs))).intent
        assert intent == "Port the parser to Rust, please.", name


def test_a_reminder_inside_a_request_is_cut_from_the_intent_and_the_request_stays():
    text = ("<system-reminder>\nCLAUDE.md says: use pnpm.\n</system-reminder>\nFix the login redirect loop."
            "\n<system-reminder>The task tools haven't been used recently.</system-reminder>")
    assert _intent(text) == "Fix the login redirect loop."
    assert _intent("Fix the login redirect loop.") == "Fix the login redirect loop."


def test_the_injected_prefixes_have_one_definition():
    """Codex's contextual fragments are counting's list (turns, reasoning), read here, not copied."""
    from workbench.briefing import message_facts
    from workbench.counting.usage import CONTEXTUAL_USER_PREFIXES

    assert set(CONTEXTUAL_USER_PREFIXES) <= set(message_facts.INJECTED_USER_PREFIXES)


# More that agents inject as user messages, seen in ../shared's logs (real_sessions_large, agent_formats).
MORE_INJECTED = [
    ("command-without-args", "<command-message>github-pr-review</command-message>\n"
                             "<command-name>/github-pr-review</command-name>", {}),
    ("builtin-command", "<command-name>/exit</command-name>\n  <command-message>exit</command-message>\n"
                        "  <command-args></command-args>", {}),
    ("interrupted", "[Request interrupted by user]", {}),
    ("interrupted-tool", "[Request interrupted by user for tool use]", {}),
    ("bash-input", "<bash-input>git fetch --all</bash-input>", {}),
    ("bash-output", "<bash-stdout></bash-stdout><bash-stderr></bash-stderr>", {}),
    ("task-notification", "<task-notification>\n<task-id>bbb49d4</task-id>\n</task-notification>", {}),
    ("copilot-reminder", "<system_reminder>\nIMPORTANT: The tools listed below are deferred.\n</system_reminder>", {}),
    ("copilot-date", "<current_datetime>2026-07-24T06:45:25.233-04:00</current_datetime>", {}),
]


def test_slash_commands_reminders_and_shell_echoes_are_not_the_session_intent():
    for name, text, meta in MORE_INJECTED:
        msgs = [user(0, text, **meta), user(1, "Port the parser to Rust, please.")]
        assert parse_briefing(write_briefing(req(msgs))).intent == "Port the parser to Rust, please.", name


def test_the_users_words_inside_what_an_agent_wrapped_round_them_are_the_intent():
    """A slash command with arguments reads as typed; Copilot's date and reminder blocks, Gemini CLI's and
    OpenCode's @-mentioned file contents are cut away from the request."""
    assert _intent("<command-message>workflows:review</command-message>\n<command-name>/workflows:review"
                   "</command-name>\n<command-args>https://github.com/o/r/pull/2</command-args>"
                   ) == "/workflows:review https://github.com/o/r/pull/2"
    assert _intent("<current_datetime>2026-07-24T06:45:25.233-04:00</current_datetime>\n\ngood morning. Please "
                   "pick up where we left off.\n\n<system_reminder>\n<sql_tables>Available tables: todos"
                   "</sql_tables>\n</system_reminder>") == "good morning. Please pick up where we left off."
    assert _intent("Wrap the gifs in @README.md in img tags.\n--- Content from referenced files ---\nContent from "
                   "@README.md:\n# Session Bridge\nMust never be used.\n--- End of content ---"
                   ) == "Wrap the gifs in @README.md in img tags."
    assert _intent("Let's review @ci.yaml\nCalled the Read tool with the following input: {\"filePath\": \"ci.yaml\"}"
                   "\n<path>ci.yaml</path>") == "Let's review @ci.yaml"


def test_a_generated_claude_code_logs_briefing_states_the_users_request_not_its_rules():
    """A Claude Code log as the agent writes it: CLAUDE.md in a system reminder, a skill run without arguments and
    its injected body, an interruption, a `!` shell echo, then the request; replayed with the extractive briefer."""
    import random

    from agent_log_builders import ClaudeLog, text_block, tool_use

    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.history.readers import parse_history
    from workbench.history.samples import synth

    rng = random.Random(11)
    log = ClaudeLog()
    log.user("<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n"
             "Contents of /repo/CLAUDE.md (project instructions):\n\nAlways use pnpm. Never commit to main.\n"
             "</system-reminder>\n")
    log.user("<command-message>tdd</command-message>\n<command-name>/tdd</command-name>")
    log.user("Base directory for this skill: /skills/tdd\n\n# Test-Driven Development\nYou must write the test "
             "first.", isMeta=True)
    log.user("[Request interrupted by user]")
    log.user("<bash-input>git status</bash-input>")
    log.user("<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>")
    log.user("Fix the login redirect loop in server/auth.py.")
    billed = 20_000
    for i in range(12):
        body = " ".join(synth.sentence(rng, 20) for _ in range(300))
        log.assistant([text_block("Reading."), tool_use(f"t{i}", "Read", file_path=f"/r/src/p{i}.py")],
                      input_total=billed, output=50)
        log.tool_result(f"t{i}", body)
        billed += len(body) // 4
    history = parse_history(log.text(), source="claude.jsonl")
    run = simulate(history, Knobs(context_window_tokens=40_000), ExtractiveBriefer())
    landed = [c for c in run.compressions if c.record is not None and c.record.text]
    assert landed
    for c in landed:
        assert parse_briefing(c.record.text).intent == "Fix the login redirect loop in server/auth.py.", c.chain_index


def _real_intents(path):
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.history.readers import load_history

    history = load_history(path)
    knobs = agent_settings(history).knobs
    run = simulate(history, knobs, ExtractiveBriefer())
    return [parse_briefing(c.record.text).intent for c in run.compressions if c.record is not None and c.record.text]


def test_a_real_claude_code_session_opened_by_a_skill_gets_the_users_first_request_as_intent():
    """claude_code__fc_99...: /superpowers:brainstorm without arguments, its skill body, then the user's request."""
    from conftest import need_shared, shared_dir

    path = need_shared(shared_dir() / "real_sessions" / "claude_code__fc_99c919b212_0.jsonl")
    intents = _real_intents(path)
    assert intents and all(i.startswith("B) I'd like to add 'session end' hooks to both claude and gemini")
                           for i in intents), intents


def test_no_real_sessions_briefing_opens_its_intent_with_an_injected_block():
    from conftest import need_shared, shared_dir

    folder = need_shared(shared_dir() / "real_sessions")
    for path in sorted(folder.glob("claude_code__*.jsonl")):  # (Codex's preset briefs opaquely: no intent section)
        intents = _real_intents(path)
        assert intents and all(intents), path.name
        for intent in intents:
            assert not intent.startswith(("<", "[Request interrupted")), (path.name, intent[:80])


def test_the_progress_line_counts_one_tool_call_in_the_singular():
    msgs = [user(0, "Fix it."), assistant(1, tool_call_part("read", "c1", {"path": "a.py"}, state="output-available",
                                                             output={"x": 1}))]
    progress = parse_briefing(write_briefing(req(msgs))).progress
    assert progress == ["Compression 1: messages 0–1 folded (1 from the user, 1 from you, 1 tool call)."]


def test_a_hostile_request_of_many_unclosed_blocks_is_read_in_one_pass():
    """200,000 opening tags with no closing one, and a closing tag far after many openings: the words stay, once."""
    from workbench.briefing.message_facts import own_words

    text = "Fix it. " + "<system_reminder>" * 200_000
    assert own_words(user(0, text), text) == text.strip()
    text = "<current_datetime>now</current_datetime> Fix it." + " <current_datetime>x" * 100_000
    assert own_words(user(0, text), text).startswith("Fix it.")
