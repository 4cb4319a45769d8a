"""A knob move in Chromium reruns one fragment of the page (``knob_page`` in workbench/app.py), not the whole script:
the context chart, the knob the trigger control writes and the control's caption follow it, and the parts drawn by
full runs only (the history picker, the presets, the knob groups with their model pickers) stay on the page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_browser import CHART, SETTLED, open_page

pytestmark = pytest.mark.browser

TRIGGER = ".st-key-trigger_tokens input[type=range]"
CAP = ".st-key-knob_trigger_hard_cap_tokens input[type=range]"  # what the move writes under the default knobs
TRIGGER_Y = """() => { const gd = document.querySelector('.st-key-context_chart .js-plotly-plot');
    const t = gd && gd._fullData && gd._fullData.find(d => d.name && d.name.startsWith('trigger'));
    return t ? Array.from(t.y).find(v => v !== null && !Number.isNaN(v)) : null; }"""


def _caption_tokens(page) -> int:  # noqa: ANN001 - a playwright Page
    text = page.locator(".st-key-trigger_tokens").locator("xpath=following::*[@data-testid='stCaptionContainer'][1]")
    found = re.match(r"([\d,]+) tokens", text.inner_text())
    assert found, text.inner_text()
    return int(found[1].replace(",", ""))


@pytest.fixture(scope="module")
def settled_page(served_app: str) -> Iterator[Any]:
    """The served app in one page (a Streamlit session), its context chart drawn and the page settled, for both tests:
    the second starts where the first left it (its trigger one step lower, which writes the hard cap, not the ratio
    the second reads), one page load instead of two (~6 CPU-s of Chromium's)."""
    from conftest import BROWSER

    BROWSER.browser  # noqa: B018 - skips, or fails under CI, without chromium
    with open_page(BROWSER, served_app, 1500, 1100) as page:
        page.goto(served_app, wait_until="domcontentloaded")
        page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=90_000)
        page.wait_for_function(SETTLED, timeout=90_000)
        yield page


def test_a_trigger_move_updates_what_depends_on_the_knobs_and_keeps_the_rest(settled_page):
    page = settled_page
    before = page.evaluate(TRIGGER_Y)
    assert before is not None and _caption_tokens(page) == round(before)
    thumb = page.locator(TRIGGER)
    thumb.focus()
    thumb.press("ArrowLeft")
    page.wait_for_function(f"() => {{ const y = ({TRIGGER_Y})(); return y !== null && y !== {before}; }}",
                           timeout=60_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    after = page.evaluate(TRIGGER_Y)
    assert after < before
    assert int(float(page.locator(TRIGGER).input_value())) == round(after)
    assert int(float(page.locator(CAP).input_value())) == round(after)  # the knob it writes
    assert _caption_tokens(page) == round(after)
    # drawn by full runs only: still on the page, with the knob groups and the open strategy group's picker
    for key in ("history", "preset", "knob_group_policy", "knob_group_model", "knob_strategy"):
        assert page.locator(f".st-key-{key}").count() == 1, key
    assert page.locator(".stException").count() == 0


def test_an_open_knob_group_follows_a_trigger_move_that_writes_into_it(settled_page):
    """The knob groups are drawn by full runs only; a trigger move that changes what an open group shows (here the
    trigger ratio, raised when the trigger goes above ratio × window) gets a full run, so the group shows it."""
    ratio = ".st-key-knob_trigger_ratio input[type=range]"
    page = settled_page
    page.locator(".st-key-knob_group_trigger summary").click()  # "When to compact": the ratio's group
    page.wait_for_selector(ratio, timeout=60_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    before = float(page.locator(ratio).input_value())
    thumb = page.locator(TRIGGER)
    thumb.focus()
    thumb.press("End")  # the top of the control's range: above ratio × window, so the ratio is raised
    page.wait_for_function(f"() => parseFloat(document.querySelector('{ratio}')?.value) > {before}",
                           timeout=60_000)
    page.wait_for_function(SETTLED, timeout=60_000)
    assert float(page.locator(ratio).input_value()) > before
    assert _caption_tokens(page) == round(page.evaluate(TRIGGER_Y))  # the chart and the caption agree
    assert page.locator(".stException").count() == 0
