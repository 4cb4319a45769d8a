"""Links and URLs: one reading of where they start and end, shared by the extractive briefer and the probes."""

from __future__ import annotations

import pytest

from workbench.analysis.fact_probes.facts import extract_facts
from workbench.briefing.base import BriefRequest
from workbench.briefing.extractive import write_briefing
from workbench.briefing.textrefs import bare_urls, link_targets
from workbench.history.model import History, Message, text_part
from workbench.knobs import Knobs


@pytest.mark.parametrize(
    ("text", "targets", "urls"),
    [
        ("see [a](path:w1/src/app.py) now", ["path:w1/src/app.py"], []),
        ("spec [x](https://a.org/x_(y)) here", ["https://a.org/x_(y)"], []),
        ('titled [t](https://a.org/p "Title")', ["https://a.org/p"], []),
        ("read https://docs.example.com/page. Then go", [], ["https://docs.example.com/page"]),
    ],
    ids=["path-link", "parens-in-target", "titled-link", "url-before-full-stop"],
)
def test_link_targets_and_bare_urls(text, targets, urls):
    assert list(link_targets(text)) == targets
    assert bare_urls(text) == urls


def test_every_link_fact_is_found_verbatim_in_the_extractive_briefing():
    """What the probes call a link is exactly what the briefer keeps, edge cases included."""
    text = ("Use [spec](https://a.org/x_(y)) and read https://docs.example.com/page. "
            "Edit [](path:w1/src/app.py) please.")
    history = History(id="t", messages=(Message(id="u", role="user", parts=(text_part(text),)),))
    briefing = write_briefing(BriefRequest(
        chain_index=1, folded=history.messages, folded_from=0, boundary=1, previous_briefing=None,
        previous_chars=0, new_material_chars=0, compact_history_chars=0, target_chars=30_000, bucket="none",
        ratio=0.0, percent=0, knobs=Knobs(),
    ))
    facts = [f for f in extract_facts(history) if f.kind == "link"]
    assert {f.key for f in facts} == {"https://a.org/x_(y)", "https://docs.example.com/page"}
    for f in facts:
        assert f.key in briefing
