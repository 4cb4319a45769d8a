"""Cue patterns searched on a lowercased text find what ``re.IGNORECASE`` finds in the text itself.

``workbench.history.caseless`` rests on two facts about Unicode and Python's ``re``, checked here over every
code point, and its patterns (the plan cues in their rewritten form, the decision cues) are compared with the
IGNORECASE originals on texts built from the characters where the two could part.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.fact_probes import fact_rules
from workbench.briefing import message_facts
from workbench.history.caseless import CaselessPattern, folded

_ALL = [chr(cp) for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF]


@pytest.mark.slow
def test_lowercasing_keeps_length_and_word_characters_but_for_dotted_i():
    longer = [c for c in _ALL if len(c.lower()) != 1]
    assert longer == ["\u0130"]
    kept = [c for c in _ALL if len(c.lower()) == 1]
    text, low = "".join(kept), "".join(c.lower() for c in kept)
    assert [m.start() for m in re.finditer(r"\w", text)] == [m.start() for m in re.finditer(r"\w", low)]
    assert [m.start() for m in re.finditer(r"\s", text)] == [m.start() for m in re.finditer(r"\s", low)]


def test_ignorecase_matches_an_ascii_literal_exactly_where_lower_equals_it_but_for_two():
    literals = "abcdefghijklmnopqrstuvwxyz0123456789'_ -.?"
    anything = re.compile("[" + re.escape(literals) + "]", re.IGNORECASE)
    matched = {c for c in _ALL if anything.fullmatch(c)}
    lowered = {c for c in _ALL if len(c.lower()) == 1 and c.lower() in literals}
    # İ lowers to two characters (folded() checks the length); ı and ſ: IGNORECASE folds them, lower() keeps them
    assert matched ^ lowered == {"\u0130", "\u0131", "\u017f"}
    for c in matched & lowered:
        assert re.fullmatch(re.escape(c.lower()), c, re.IGNORECASE)
        assert [x for x in literals if re.fullmatch(re.escape(x), c, re.IGNORECASE)] == [c.lower()]


def test_folded_refuses_the_texts_where_it_would_differ():
    assert folded("Let Me") == "let me"
    assert folded("Naïve → Plan") == "naïve → plan"
    for odd in ("\u0130 will", "\u0131'll", "\u017fhould"):
        assert folded(odd) is None


_PIECES = ["next", "NEXT", "i'll", "I'll", "I will", "let me", "Let's", "now I", "plan", "Plan", "going to",
           "then i", "I need to", "must", "Don't", "do not", "use", "USE", "prefer", "needs", "stays", "let's",
           "make sure", "no new", "\u0130", "\u0131", "\u017f", "K", "é", "ß", "Σ", "_", "x", "9", " ", "\n", ".",
           "'", "-", "\u00a0", "unplanned", "planet", "snext", "mustard"]
_texts = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join)


def _spans(matches):
    return [m.span() for m in matches]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_texts)
def test_cue_patterns_find_what_ignorecase_finds(text):
    for cues in (fact_rules._PLAN_CUES, fact_rules._DECISION_CUES, message_facts._DECISION_CUES):
        assert _spans(cues.finditer(text)) == _spans(cues.ignorecase.finditer(text))
        assert (cues.search(text) is None) == (cues.ignorecase.search(text) is None)


def test_a_pattern_with_a_rewritten_fast_form():
    cues = CaselessPattern(r"\b(plan|next)\b", r"(?:p(?<!\w.)lan|n(?<!\w.)ext)\b")
    assert _spans(cues.finditer("Plan; unplanned NEXT next_ plan")) == [(0, 4), (16, 20), (27, 31)]
    assert _spans(cues.finditer("PLAN \u0130")) == [(0, 4)]  # the IGNORECASE path
