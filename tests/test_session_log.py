"""Agent logs keep what the agent logged, as typed values: usage per call, version, model, window, compactions
with their real summaries, images as images; and a canonical JSONL round trip keeps all of it."""

from __future__ import annotations

import gzip
import json

import pytest
from agent_log_builders import ClaudeLog, CodexLog, image_block, png_bytes, text_block, tool_use
from conftest import need_shared, shared_dir

from workbench.counting.counters import trigger_tokens
from workbench.counting.images import anthropic_image_tokens, openai_image_tokens
from workbench.counting.tokens import CountCache
from workbench.history.images import image_from_base64
from workbench.history.readers import load_history, parse_history
from workbench.history.session_log import CallUsage
from workbench.history.writers import write_canonical_jsonl
from workbench.knobs import Knobs

SESSIONS = shared_dir() / "real_sessions"


def claude_session() -> ClaudeLog:
    log = ClaudeLog(version="2.1.25")
    log.user("Fix the date test.")
    log.assistant([{"type": "thinking", "thinking": "look first", "signature": "sig"}, text_block("Looking."),
                   tool_use("t1")], input_total=40_000, output=212, msg_id="msg_A", snapshots=[1, 3, 212])
    log.tool_result("t1", "a.py\nb.py")
    log.assistant([text_block("Done.")], input_total=40_300, output=20, msg_id="msg_B")
    log.compact("auto", 167_050, "This session is being continued ... summary text")
    log.user("Next task.")
    return log


def test_claude_code_usage_model_version_and_lines():
    """One response logged over three lines is one call: its highest output snapshot, model, first line."""
    h = parse_history(claude_session().text(), source="cc.jsonl")
    log = h.log
    assert log is not None and (log.agent, log.version, log.model) == ("claude_code", "2.1.25", "claude-opus-4-5-20251101")
    first, second = log.calls
    assert (first.index, first.source_line, first.model) == (1, 2, "claude-opus-4-5-20251101")
    assert first.usage == CallUsage(input_tokens=3, cache_read_tokens=39_897, cache_write_tokens=100, output_tokens=212)
    assert first.usage.context_tokens == 40_000 and first.usage.total_tokens == 40_212
    assert h.messages[1].usage == first.usage and h.messages[1].source_line == 2
    assert second.index == 3 and second.usage.total_tokens == 40_320


def test_claude_code_compaction_keeps_line_trigger_tokens_and_the_real_summary():
    h = parse_history(claude_session().text(), source="cc.jsonl")
    (c,) = h.log.compactions
    assert (c.source_line, c.index, c.trigger, c.tokens_before) == (7, 4, "auto", 167_050)
    assert c.summary == "This session is being continued ... summary text" and c.summary_index == 4
    assert h.messages[4].meta("isCompactSummary") is True and not c.parent_missing
    missing = ClaudeLog().user("x").compact("manual", 10, "s", parent_missing=True)
    (m,) = parse_history(missing.text(), source="m.jsonl").log.compactions
    assert m.trigger == "manual" and m.parent_missing


def test_claude_code_log_that_starts_mid_session_says_so():
    """The first record's parent is not in the file: a later part of a longer session."""
    h = parse_history(ClaudeLog(first_parent="u-elsewhere").user("go on").text(), source="part.jsonl")
    assert h.log.extra == {"starts_mid_session": True, "earlier_time": "2026-01-01T00:00:01Z"}  # its first record's time
    assert parse_history(ClaudeLog().user("hi").text(), source="whole.jsonl").log.extra == {}


def codex_session() -> CodexLog:
    log = CodexLog(version="0.142.2", model="gpt-5.3-codex-spark", window_logged=121_600)
    log.turn().user("# AGENTS.md instructions for /repo").user("Triage the issues.")
    log.reasoning().call("c1", "rg stale").output("c1", "3 hits")
    log.tokens(20_000, 500, cached=4_000, reasoning=300).tokens(20_000, 500, cached=4_000, reasoning=300, repeat=True)
    log.reasoning().say("Here is the plan.").tokens(21_000, 200, reasoning=100).end_turn()
    log.turn().user("Do it.").reasoning().call("c2").output("c2", "ok")
    log.compacted(["Triage the issues.", "Do it."], after_estimate=13_290)
    log.say("Continuing.").tokens(14_000, 50).end_turn()
    log.turn().end_turn()  # a turn that holds nothing but /compact
    log._add("event_msg", {"type": "task_started"})
    log.compacted(["Triage the issues."], after_estimate=9_000)
    log.end_turn()
    return log


def test_codex_usage_split_cached_reasoning_and_repeats_ignored():
    h = parse_history(codex_session().text(), source="cx.jsonl")
    log = h.log
    assert (log.agent, log.version, log.model, log.window_logged) == ("codex", "0.142.2", "gpt-5.3-codex-spark", 121_600)
    assert len(log.calls) == 3  # the repeated token_count is the same call logged twice
    u = log.calls[0].usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens, u.total_tokens) == (
        16_000, 4_000, 500, 300, 20_500)
    assert log.calls[0].cumulative is not None and log.calls[0].cumulative.total_tokens == 20_500


def test_codex_compactions_keep_the_replacement_history_and_tell_manual_from_auto():
    h = parse_history(codex_session().text(), source="cx.jsonl")
    auto, manual = h.log.compactions
    assert auto.trigger == "auto" and manual.trigger == "manual"
    assert auto.tokens_before == 21_200 and auto.tokens_after == 13_290 and manual.tokens_after == 9_000
    assert [m.text for m in auto.kept] == ["Triage the issues.", "Do it."] and auto.opaque_items == 1
    assert auto.summary is None  # remote compaction: the summary is an encrypted item


def test_images_are_images_with_media_type_bytes_and_pixels():
    data = png_bytes(321, 123)
    ref = image_from_base64(__import__("base64").b64encode(data).decode(), "image/png")
    assert (ref.media_type, ref.byte_size, ref.width, ref.height) == ("image/png", len(data), 321, 123)
    h = parse_history(ClaudeLog().user([image_block(1000, 1000), text_block("what is this?")]).text(), source="i.jsonl")
    (img,) = h.messages[0].images()
    assert (img.width, img.height) == (1000, 1000)
    counts = CountCache().counts_for(h)
    as_text = int(trigger_tokens(counts, Knobs())[0])
    as_image = int(trigger_tokens(counts, Knobs(image_token_rule="anthropic"))[0])
    assert as_image == anthropic_image_tokens(1000, 1000) + int(
        trigger_tokens(counts, Knobs(image_token_rule="fixed", image_default_tokens=0))[0])
    assert as_text > as_image


@pytest.mark.parametrize(("width", "height", "anthropic", "openai"), [
    (1000, 1000, 1334, 765),  # Anthropic's table: 1000x1000 ~ 1,334 tokens; OpenAI 4 tiles
    (200, 200, 54, 255),
    (1568, 1568, 1600, 765),  # capped at ~1,600 tokens
    (2048, 4096, 1600, 1105),  # OpenAI's worked example: 768x1536, 6 tiles
], ids=["1000sq", "small", "cap", "openai-example"])
def test_provider_image_rules(width, height, anthropic, openai):
    assert abs(anthropic_image_tokens(width, height) - anthropic) <= 1
    assert openai_image_tokens(width, height) == openai


def test_the_415_kb_screenshot_counts_as_an_image_not_as_104k_tokens_of_text():
    """claude_code__fc_99c919b212_0.jsonl: a 1421x1999 PNG; Anthropic's rule gives 1,599 tokens, the bill ~1.9k."""
    path = need_shared(SESSIONS / "claude_code__fc_99c919b212_0.jsonl")
    h = load_history(path)
    counts = CountCache().counts_for(h)
    (j,) = counts.image_messages().tolist()
    (ref,) = h.messages[j].images()
    assert (ref.width, ref.height, ref.payload_chars) == (1421, 1999, 415_032)
    rule = anthropic_image_tokens(ref.width, ref.height)
    preset = Knobs(image_token_rule="anthropic", overhead_chars_per_message=16, log_counter="estimate")
    counted = int(trigger_tokens(counts, preset)[j])
    assert abs(counted - rule) <= 0.2 * rule
    assert int(trigger_tokens(counts, preset.replace(image_token_rule="serialized"))[j]) > 100_000  # base64 as text
    # The provider's own count (log_counter billed): the messages between the calls around it share their growth
    billed = trigger_tokens(counts, preset.replace(log_counter="billed"))
    calls = [c.index for c in h.log.calls]
    before, after = max(i for i in calls if i < j), min(i for i in calls if i > j)
    growth = h.messages[after].usage.context_tokens - h.messages[before].usage.context_tokens
    assert int(billed[before:after].sum()) == growth and 0 < int(billed[j]) <= growth


def test_canonical_round_trip_keeps_the_session_log():
    h = parse_history(codex_session().text(), source="cx.jsonl")
    back = parse_history(write_canonical_jsonl(h), source="back.jsonl")
    assert back.log == h.log and back.messages == h.messages
    assert [m.usage for m in back.messages] == [m.usage for m in h.messages]


def test_gzipped_logs_load_like_plain_ones(tmp_path):
    plain = tmp_path / "s.jsonl"
    plain.write_text(claude_session().text())
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_history(plain), load_history(packed)
    assert b.id == "s" and a.messages == b.messages and a.log == b.log
    broken = tmp_path / "bad.jsonl.gz"
    broken.write_bytes(gzip.compress(b"x" * 100)[:20])
    with pytest.raises(Exception, match="bad.jsonl.gz: not a readable gzip file"):
        load_history(broken)


def test_every_logged_compaction_of_the_dev_set_is_read_where_facts_json_says():
    """Line, first message after, trigger and logged tokens of all 16 compactions in ../shared/real_sessions."""
    facts = json.loads(need_shared(SESSIONS / "facts.json").read_text())
    seen = 0
    for s in facts["sessions"]:
        h = load_history(SESSIONS / s["file"])
        assert h.log is not None and h.log.version == s["version"] and len(h) == s["messages_as_loaded"]
        got = [(c.source_line, c.index, c.trigger, c.tokens_before) for c in h.log.compactions]
        assert got == [(c["source_line"], c["message_index_after"], c["trigger"], c["tokens_before"])
                       for c in s["compactions"]]
        if h.log.agent == "claude_code":
            assert all(c.summary and c.summary.startswith("This session is being continued") for c in h.log.compactions)
        seen += len(got)
    assert seen == 16
