"""counting.restore counts the estimate from lengths where it can: each length is the built text's, each floor
at most the bare text's, so the restore decides as if the texts were built and counted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.counting.attachments import (
    LINE_NUMBER,
    bare_floor,
    numbered,
    numbered_len,
    part_text,
    part_text_len,
    read_attachment,
    read_attachment_len,
    without_line_numbers,
)
from workbench.history.jsjson import utf16_len

# Line numbers as the Read tool writes them (and near misses), Unicode digits, astral characters, lone surrogates.
PIECES = ["     1\u2192", "  12\t", "\n", " ", "\t", "7", "\u0663", "\u2192", "a", "\U0001f600", "\ud800", "é", "\r",
          "\n   3\u2192x", "x\u2192", "\u00a0"]
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(texts)
def test_the_floor_of_a_bare_text_is_never_above_its_length(text: str) -> None:
    assert bare_floor(text) <= utf16_len(LINE_NUMBER.sub("", text))


@settings(max_examples=600, deadline=None)
@given(texts)
def test_line_numbers_are_cut_as_the_regex_cuts_them(text: str) -> None:
    assert without_line_numbers(text) == LINE_NUMBER.sub("", text)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(["/a/b.py", "/x/\u00e9\U0001f600.md", 'q"uote\\.txt']))
def test_lengths_are_the_built_texts_lengths(text: str, path: str) -> None:
    assert numbered_len(text) == utf16_len(numbered(text))
    assert read_attachment_len(path) + utf16_len(text) == utf16_len(read_attachment(path, text))
    blocks = [{"type": "text", "text": text}, {"type": "image"}, "junk", {"text": 3}, {"text": text[:3]}]
    for value in (text, blocks, None, 12):
        assert part_text_len(value) == utf16_len(part_text(value))


def test_a_numbered_text_of_a_million_lines_widens_its_numbers_as_the_read_tool_does() -> None:
    content = "\n" * 1_000_001  # 1,000,002 lines: the last three take 7 columns
    assert numbered_len(content) == utf16_len(numbered(content))


def test_the_floor_is_tight_for_a_plain_read_result() -> None:
    text = "\n".join(f"{n:>6}\u2192def f_{n}(): pass" for n in range(1, 200))
    bare = LINE_NUMBER.sub("", text)
    assert 0.5 * utf16_len(bare) < bare_floor(text) <= utf16_len(bare)
