"""pin_pattern fast paths: a choice of plain texts is searched as text, with the regex engine's answers."""

from __future__ import annotations

import pytest
import regex  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.knobs.pin_pattern import PinPattern, compile_pin_pattern, plain_alternatives


def test_the_codex_preset_pattern_is_a_choice_of_prefixes() -> None:
    from workbench.presets import get_preset

    pattern = get_preset("codex_cli").pin_pattern
    assert plain_alternatives(pattern) == (True, ("# AGENTS.md instructions", "<environment_context>",
                                                  "<user_instructions>"))
    rx = compile_pin_pattern(pattern)
    assert rx.search("<environment_context>\n  <cwd>/x</cwd>") and not rx.search(" <environment_context>")
    assert compile_pin_pattern(pattern) is rx  # compiled once


def test_patterns_that_are_not_plain_choices_go_to_the_regex_engine() -> None:
    for pattern in ("^a|b", "^(a|b)c", r"a\d", "(?i)ab", "(a)(b)", "a.b", "^$", r"\Aab", "[ab]"):
        assert plain_alternatives(pattern) is None, pattern


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "ab", " ", "#", "<x>", r"\.", r"\|", r"\\", r"\(", "|", ".", "(", ")",
                                 "*", r"\d", "é"]), max_size=6).map("".join),
       st.sampled_from(["", "^"]), st.sampled_from(["{}", "({})", "(?:{})"]),
       st.lists(st.sampled_from(["a", "b", "ab", " ", "#", "<x>", ".", "|", "\\", "(", "\n", "é"]), max_size=8)
       .map("".join))
def test_a_pin_pattern_matches_where_the_regex_engine_does(body: str, anchor: str, group: str, text: str) -> None:
    pattern = anchor + group.format(body)
    try:
        expected = regex.search(pattern, text) is not None
    except regex.error:
        return
    assert PinPattern(pattern).search(text) == expected, (pattern, text, plain_alternatives(pattern))


# ── issue 19 item 8: one time budget for the whole replay's matching, not one per message ─────────


@pytest.fixture
def small_budget(monkeypatch):
    """A 0.3 s budget for the whole search (the shipped one is seconds): the tests stay fast."""
    import workbench.knobs.pin_pattern as pin
    from workbench.policies.base import clear_caches

    monkeypatch.setattr(pin, "PIN_PATTERN_BUDGET_S", 0.3)
    monkeypatch.setattr(pin, "PIN_PATTERN_CHARS_PER_S", float("inf"))
    clear_caches()
    yield
    clear_caches()


def _stops_with_the_budget_error(history, pattern: str) -> str:
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    with pytest.raises(ValueError) as caught:
        simulate(history, Knobs(pin_pattern=pattern, context_window_tokens=200_000))
    text = str(caught.value)
    assert text.startswith(f"pin_pattern {pattern!r} ran over") and "budget" in text and "whole history" in text
    assert "backtracks catastrophically" in text
    return text


def test_a_slow_pattern_on_the_long_sample_stops_at_the_runs_budget(small_budget, long_history):
    """`(\\w+\\s?)+$` stays under any per-message bound on each message, and took 20 s over the whole sample."""
    _stops_with_the_budget_error(long_history, r"(\w+\s?)+$")


def test_600_messages_of_10k_characters_share_one_budget(small_budget):
    """`(a|aa)+$` spends well under a second on each message, and 49 s on all 600."""
    from workbench.history.model import History, Message, text_part

    msgs = tuple(Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
                         parts=(text_part("a" * 10_000 + "!"),)) for i in range(600))
    _stops_with_the_budget_error(History(id="many", messages=msgs), "(a|aa)+$")


def test_an_ordinary_pattern_fits_the_shipped_budget_and_says_how_big_it_is():
    from workbench.knobs.pin_pattern import pin_budget_s

    rx = compile_pin_pattern(r"(?i)claude\.md")
    assert rx.matches(["see CLAUDE.md", "nothing", "x" * 100_000]) == [True, False, False]
    assert pin_budget_s(0) >= 1 and pin_budget_s(100_000_000) > pin_budget_s(0)


def test_an_empty_history_is_searched_without_error():
    """No message: no match (found by the samples fuzz family: a truncated file read as an empty history)."""
    from workbench.history.model import History
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    run = simulate(History(id="empty", messages=()), Knobs(pin_pattern=r"(?i)agents\.md"))
    assert run.metrics.compressions == 0
