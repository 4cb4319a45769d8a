"""pin_pattern fast paths: a choice of plain texts is searched as text, with the regex engine's answers."""

from __future__ import annotations

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
