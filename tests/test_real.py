"""Replaying real stagewise compressions: where they cut versus our policy, and our briefing versus theirs."""

from __future__ import annotations

import json

import pytest
from conftest import in_ci, shared_dir

from workbench.analysis.real_logs.stagewise_real import (
    as_dict,
    check_boundary,
    compression_points,
    diff_briefings,
    load_real_histories,
    real_request,
    replay_real,
)
from workbench.briefing.textrefs import LINK_RE
from workbench.cli import main
from workbench.knobs import Knobs
from workbench.stagewise.serialize import serialize_compact_history

SAMPLE = shared_dir() / "golden" / "stagewise_instances_sample.sqlite"
# Missing shared data skips with the reason, but fails under CI (where ../shared is always laid beside the clone).
pytestmark = pytest.mark.skipif(not SAMPLE.is_file() and not in_ci(), reason=f"sample store not found: {SAMPLE}")
SMALL = Knobs(context_window_tokens=8_000, min_kept_messages=5)  # the sample's chats are tiny


def chats() -> dict[str, object]:
    return {h.meta["title"]: h for h in load_real_histories(SAMPLE)}


def test_points_are_the_messages_that_carry_briefings():
    by_title = chats()
    assert compression_points(by_title["SYNTHETIC chat A: one briefing"]) == (10,)
    assert compression_points(by_title["SYNTHETIC chat B: chained briefings"]) == (9, 18)
    assert compression_points(by_title["Side chat: SYNTHETIC chat B: chained briefings"]) == (9, 18)
    assert compression_points(by_title["SYNTHETIC chat D: legacy history column"]) == ()


def test_request_is_what_stagewise_sent_at_that_point():
    b = chats()["SYNTHETIC chat B: chained briefings"]
    req = real_request(b, 18, SMALL, chain_index=2)
    assert req.compact_history == serialize_compact_history(b.messages[:18])
    assert req.compact_history.startswith("<previous-chat-history>")
    assert (req.previous_chars, req.bucket, req.percent, req.folded_from) == (350, "lt60", 1, 9)
    assert req.previous_briefing == b.messages[9].briefing and req.folded[0].id == b.messages[9].id
    assert req.compact_history_chars == len(req.compact_history)


def test_a_fitting_policy_reproduces_the_real_boundaries():
    """With knobs that match the chat, some trigger point gives exactly the stored boundary."""
    for title in ("SYNTHETIC chat A: one briefing", "SYNTHETIC chat B: chained briefings"):
        h = chats()[title]
        for b in compression_points(h):
            chk = check_boundary(h, b, SMALL)
            assert chk.reproduced and chk.delta == 0 and chk.policy_boundary == b, (title, b)
            assert dict(chk.candidates)[chk.trigger_index] == b
            assert chk.trigger_index >= b and chk.policy_outcome == "floor"
            assert chk.estimated_context_tokens > 0 and chk.would_fire is False  # 8k window: trigger 5,200


def test_default_knobs_cut_elsewhere_and_say_by_how_much():
    """stagewise's defaults keep 10 messages, so on a 16-message chat they cut before the real point."""
    a = chats()["SYNTHETIC chat A: one briefing"]
    chk = check_boundary(a, 10, Knobs())
    assert not chk.reproduced
    assert chk.delta == chk.policy_boundary - 10 < 0
    assert chk.candidates[0][0] == 10 and chk.candidates[-1][0] == 15
    assert chk.policy_boundary == max(bound for _, bound in chk.candidates if bound is not None)


def test_later_briefings_are_hidden_when_checking_an_earlier_point():
    """At point 9 the briefing at 18 did not exist yet; it must not weigh on the estimates."""
    b = chats()["SYNTHETIC chat B: chained briefings"]
    chk = check_boundary(b, 9, SMALL)
    assert max(e for e, _ in chk.candidates) == 17  # scanned up to the next point only


def test_extractive_briefing_is_diffed_and_keeps_every_link_the_span_had():
    """Links the real briefing has and ours lacks were written by its LLM, not found in the messages."""
    missing = set()
    for h in chats().values():
        replay = replay_real(h, SMALL)
        for c in replay.compressions:
            assert c.record is not None and c.record.model == "extractive"
            assert 0.0 <= c.diff.similarity <= 1.0
            assert c.diff.unified.startswith("--- actual-output.md\n+++ new-output.md")
            actual = h.messages[c.boundary].briefing
            assert c.diff.actual_links == len(set(LINK_RE.findall(actual))) > 0
            span_text = "\n".join(m.text for m in h.messages[: c.boundary])
            assert set(LINK_RE.findall(span_text)) <= set(LINK_RE.findall(c.record.text))
            assert not [link for link in c.diff.links_missing_from_new if link in span_text]
            missing |= set(c.diff.links_missing_from_new)
            assert c.actual_chars == len(actual) and not c.actual_leak_previous_tag
    assert missing == {"[](path:wfak3/src/)"}  # the sample's briefing B1 names the folder itself


def test_diff_briefings_reports_lines_only_in_one_side():
    d = diff_briefings("## A\n\nsame\nnew line [](path:x)", "## A\n\nsame\nold line [](path:y)")
    assert d.only_in_new == ("new line [](path:x)",) and d.only_in_actual == ("old line [](path:y)",)
    assert d.links_missing_from_new == ("[](path:y)",)
    assert 0.5 < d.similarity < 1.0


def test_a_live_briefer_can_write_the_new_briefing(fake_provider):
    from workbench.briefing.live import LiveBriefer

    b = chats()["SYNTHETIC chat B: chained briefings"]
    briefer = LiveBriefer(["openai/fake-good"], api_base=fake_provider.api_base, api_key="sk-x", timeout_s=2)
    replay = replay_real(b, SMALL, briefer)
    assert [c.record.model for c in replay.compressions] == ["openai/fake-good"] * 2
    assert "continuing the previous briefing" in replay.compressions[1].record.text
    assert fake_provider.total_requests == 2


def test_a_json_export_works_like_the_store(tmp_path):
    b = chats()["SYNTHETIC chat B: chained briefings"]
    path = tmp_path / "chat-b.json"
    path.write_text(json.dumps([m.to_dict() for m in b.messages], default=str))
    (loaded,) = load_real_histories(path)
    assert compression_points(loaded) == (9, 18)
    assert [c.check.policy_boundary for c in replay_real(loaded, SMALL).compressions] == [9, 18]


def test_frame_summary_and_json_views():
    replay = replay_real(chats()["SYNTHETIC chat B: chained briefings"], SMALL)
    frame = replay.to_frame()
    assert frame["boundary"].to_list() == [9, 18] and frame["reproduced"].to_list() == [True, True]
    assert "2 real compressions" in replay.summary()
    assert json.loads(json.dumps(as_dict(replay)))["compressions"][1]["previous_chars"] == 350


def test_real_command_prints_json(capsys):
    assert main(["real", str(SAMPLE), "--chat-id", "5e5e5e5e-0000-4000-8000-000000000001", "--json",
                 "--set", "context_window_tokens=8000", "--set", "min_kept_messages=5"]) == 0
    (replay,) = json.loads(capsys.readouterr().out)
    assert replay["compressions"][0]["boundary"] == 10 and replay["compressions"][0]["reproduced"] is True
