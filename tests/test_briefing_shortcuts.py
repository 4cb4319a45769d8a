"""The faster forms of the extractive briefer's patterns find what the plain rules find.

Issue 12 item 16 (``workbench probe`` at 100k messages under 30 s) rewrote two scans that ran on every
message: file names found from their extensions' dots (``_file_names`` for ``_FILE_RE``) and the markdown link
pattern written to start with a literal; ``find_links`` finds its links from their "[" (a chained briefing holds
hundreds). Each is compared with the rule it replaces on texts built to sit on the rules' edges; speed is measured
in benchmarks/, not here.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.briefing import extractive, message_facts
from workbench.briefing.textrefs import LINK_RE, find_links

_PLAIN_LINK_RE = re.compile(r"!?\[[^\[\]\n]*\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_PIECES = ["a", "src", "x_1", "-", ".", "..", "/", "@", ":", "py", "pyi", "tsx", "json", "jsonl", "c", "h",
           "lock", "bak", ".py", ".tsx", ".json", " ", "\n", ",", "é", "日", "_", "~", "!", "[", "]", "(", ")", "](",
           "[](path:", "![img](", '"t"', "\t", "9"]
_texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(_texts)
def test_file_names_are_the_file_pattern_matches(text):
    assert message_facts._file_names(text) == [m.group(1) for m in message_facts._FILE_RE.finditer(text)]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_texts)
def test_link_pattern_finds_what_the_plain_rule_finds(text):
    assert [m.span() for m in LINK_RE.finditer(text)] == [m.span() for m in _PLAIN_LINK_RE.finditer(text)]
    assert find_links(text) == _PLAIN_LINK_RE.findall(text)


def test_find_links_puts_an_images_mark_back():
    text = 'see ![a](x.png) and [b](y "t"), !x [c](z(1)) then ![](p:q)![d](e)'
    assert find_links(text) == LINK_RE.findall(text) == ["![a](x.png)", '[b](y "t")', "[c](z(1))", "![](p:q)",
                                                          "![d](e)"]


def test_file_name_edges():
    names = message_facts._file_names
    assert names("edit foo.py.bak and a.b.c.py, then x.json.") == ["foo.py", "a.b.c.py", "x.json"]
    assert names("@x.py :y.py /z.py .hidden.py") == []
    assert names("a.pyi b.py/ c.py-d") == ["a.pyi", "c.py"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_PIECES, '"', ' "t")', "\n", "\n ", '\n"']), max_size=30).map("".join))
def test_a_briefings_links_read_line_by_line_are_the_link_pattern_matches(text):
    """``parse_briefing`` reads a previous briefing's links line by line (lines repeat from briefing to briefing);
    a link whose title follows a line break is still found whole."""
    assert extractive._links_in(text) == LINK_RE.findall(text)
    assert extractive._links_in(text) == LINK_RE.findall(text)  # again, from the line cache
    assert extractive._links_in('[a](b\n"t") [c](d)') == ['[a](b\n"t")', "[c](d)"]
