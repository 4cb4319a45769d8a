"""The shortcuts of the fact extractors give what the plain rules give, on texts built to sit on their edges.

Issue 12 item 16 (``workbench probe`` at 100k messages under 30 s) made the per-message extraction skip work:
one search of a whole text before splitting it into sentences, a plan found from the text's last cue. Each
shortcut is compared here with the rule it replaces; speed is measured in benchmarks/, not here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.fact_probes import fact_rules

# Pieces that sit on the rules' edges: cue words, sentence ends, bullets, Unicode whitespace, code.
_PIECES = ["next", "I'll", "let me", "Let's", "now I", "plan", "going to", "then I", "i need to", "planet",
           "must", "don't", "use", "never", "avoid", "only", "we", "fix", "the", "tests", "a", "b.", "c!", "d?",
           ".", "?", "!", " ", "  ", "\n", "\n\n", "\t", "\u2028", "\u00a0", "- ", "* ", "1. ", "2) ", "> ",
           "•", "\u0130", "\u0131", "\u017f", "x=1;", "{", "}", "`code`", "src/app.py", "é", "_", "'", '"']
_texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def _plan_rule(text: str) -> str | None:
    plans = [s for s in fact_rules._sentences(text) if fact_rules._PLAN_RE.search(s) and len(s.split()) >= 4]
    return plans[-1] if plans else None


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_texts)
def test_last_plan_is_the_last_plan_sentence(text):
    assert fact_rules._last_plan(text) == _plan_rule(text)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(_texts)
def test_a_text_without_a_cue_has_no_cue_sentence(text):
    """The decision and plan prefilters: a sentence matches only where its text does."""
    for cue in (fact_rules._DECISION_RE, fact_rules._PLAN_RE):
        if cue.search(text) is None:
            assert not any(cue.search(s) for s in fact_rules._sentences(text))


def test_plan_edge_cases():
    assert fact_rules._last_plan("Let me fix the tests. ok") == "Let me fix the tests."
    assert fact_rules._last_plan("Let me fix the tests now.\nnext") == "Let me fix the tests now."  # last cue too short
    assert fact_rules._last_plan("  - then I run it all\n") == "then I run it all"
    assert fact_rules._last_plan("planet earth is big") is None
