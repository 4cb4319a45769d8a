"""The Reality tab in a real browser: a real Claude Code log from ../shared, opened from a folder, shows the
agent's measured context with the logged compactions beside the predicted ones, and no exception box."""

from __future__ import annotations

import pytest
from conftest import need_shared, shared_dir
from test_browser import SETTLED, _shot, open_page, pick, settle_charts

pytestmark = pytest.mark.browser
LOG = "claude_code__b6_f735fbac66_0.jsonl"
CHART = ".st-key-reality_chart .js-plotly-plot"


def test_the_reality_tab_renders_a_real_log_in_chromium(chromium, served_logs, tmp_path):
    need_shared(shared_dir() / "real_sessions" / LOG)  # in served_logs' folder when it is there (tests/conftest.py)
    url, _ = served_logs
    shot = _shot("reality.png", tmp_path)
    with open_page(chromium, url, 1500, 1500) as page:
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(".st-key-context_chart .js-plotly-plot", state="visible", timeout=90_000)
        # The chart is sent first and the sidebar after it: the picker may still be a skeleton.
        page.wait_for_function(SETTLED, timeout=90_000)
        pick(page, "history", LOG.removesuffix(".jsonl"))
        page.get_by_role("tab", name="Reality").click()
        page.wait_for_selector(f"{CHART} .scatterlayer .trace", state="visible", timeout=90_000)
        page.wait_for_function(SETTLED, timeout=60_000)
        settle_charts(page)
        body = page.inner_text("body")
        assert page.locator(".stException").count() == 0
        assert "claude_code 2.1.1" in body and "logged compactions" in body
        page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
