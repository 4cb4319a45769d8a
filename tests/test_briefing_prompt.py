"""The briefer prompt: our own wording in stagewise's shape, with its four budget buckets and number rules."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import need_shared, shared_dir

from workbench.briefing.prompt import (
    CLOSING_INSTRUCTION,
    SYSTEM_PROMPT,
    budget_hint,
    build_messages,
    build_user_message,
    detect_leaks,
    format_en_us,
    hint_bucket,
)
from workbench.stagewise.core import budget_bucket, js_round


@pytest.mark.parametrize(
    ("chars", "percent", "bucket"),
    [
        (0, 0, "none"),
        (150, 1, "lt60"),  # 0.5% rounds up, as Math.round does
        (17_999, 60, "lt60"),  # prints 60% but is still below the 0.6 edge
        (18_000, 60, "60to85"),
        (25_499, 85, "60to85"),
        (25_500, 85, "gte85"),
        (45_000, 150, "gte85"),  # the percentage is not capped
    ],
    ids=["none", "150-rounds-up", "17999", "18000", "25499", "25500", "45000"],
)
def test_bucket_edges_follow_stagewise(chars, percent, bucket):
    _, pct, got = hint_bucket(chars)
    assert (pct, got) == (percent, bucket)
    assert budget_bucket(chars)[1:] == (percent, bucket)


def test_buckets_match_the_golden_vectors():
    """Every golden case with a compression agrees on ratio, printed percent and bucket."""
    path = need_shared(shared_dir() / "golden" / "stagewise_visible.json")
    cases = [c for c in json.loads(path.read_text())["cases"] if c["expected"].get("compression")]
    assert cases
    for case in cases:
        comp = case["expected"]["compression"]
        ratio, pct, bucket = hint_bucket(comp["previousBriefingChars"])
        assert (pct, bucket) == (comp["ratioPercentRounded"], comp["budgetBucket"]), case["id"]
        assert ratio == pytest.approx(comp["ratio"])


def test_numbers_are_en_us_and_math_round():
    assert format_en_us(30_000) == "30,000"
    assert format_en_us(1_234_567) == "1,234,567"
    assert (js_round(0.5), js_round(1.5), js_round(2.5), js_round(-0.5)) == (1, 2, 3, 0)
    assert "30,000" in budget_hint(0)
    assert "17,999 characters (60%" in budget_hint(17_999)


def test_each_bucket_gets_its_own_guidance():
    hints = {b: budget_hint(c) for b, c in [("none", 0), ("lt60", 1_000), ("60to85", 20_000), ("gte85", 28_000)]}
    assert "previous" not in hints["none"]
    assert "do NOT shorten it" in hints["lt60"]
    assert "do NOT shorten aggressively" in hints["60to85"]
    assert "condense the oldest" in hints["gte85"]
    assert len(set(hints.values())) == 4


def test_user_message_shape():
    """<chat-history> + transcript + </chat-history>, blank line, hint, blank line, closing instruction."""
    msg = build_user_message("<user>hi</user>", 1_000)
    head, hint, closing = msg.split("\n\n")
    assert head == "<chat-history><user>hi</user></chat-history>"
    assert hint == budget_hint(1_000)
    assert closing == CLOSING_INSTRUCTION
    system, user = build_messages("x")
    assert (system["role"], user["role"]) == ("system", "user")
    assert system["content"] == SYSTEM_PROMPT


def test_system_prompt_is_our_own_wording():
    """Not stagewise's text (its sha256 is in the golden constants) but it covers the same ground."""
    digest = hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()
    assert not digest.startswith("753b8e27")
    for needle in ("[](path:", "<previous-chat-history>", "## heading", "you", "the user", "markdown link"):
        assert needle in SYSTEM_PROMPT


@pytest.mark.parametrize(
    ("text", "previous", "xml"),
    [
        ("## Topic\n\nAll fine.", False, False),
        ("<previous-chat-history>## A</previous-chat-history>", True, True),
        ("## A\n\n</chat-history>", False, True),
        ("<briefing>\n## A\n</briefing>", False, True),
        ("<notes>whole thing</notes>", False, True),
        ("Use List<String> here and a <br> tag.", False, False),
        (None, False, False),
    ],
    ids=["clean", "previous-tag", "chat-history", "briefing-wrapper", "wrapped-whole", "generics", "none"],
)
def test_leak_flags(text, previous, xml):
    assert detect_leaks(text) == (previous, xml)
