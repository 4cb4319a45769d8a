"""The Reality tab in a real browser: a real Claude Code log from ../shared, opened from a folder, shows the
agent's measured context with the logged compactions beside the predicted ones, and no exception box."""

from __future__ import annotations

import shutil

import pytest
from conftest import need_shared, shared_dir
from test_browser import ARGS, SETTLED, _chromium, _shot, serve

pytestmark = pytest.mark.browser
LOG = "claude_code__b6_f735fbac66_0.jsonl"
CHART = ".st-key-reality_chart .js-plotly-plot"


@pytest.fixture
def served_with_logs(tmp_path):
    """The app with a folder holding one real Claude Code log (from ../shared, never committed)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(need_shared(shared_dir() / "real_sessions" / LOG), folder / LOG)
    with serve(tmp_path, "--histories", str(folder)) as url:
        yield url


def test_the_reality_tab_renders_a_real_log_in_chromium(served_with_logs, tmp_path):
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    shot = _shot("reality.png", tmp_path)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1500})
            page.goto(served_with_logs, wait_until="domcontentloaded")
            page.wait_for_selector(".st-key-context_chart .js-plotly-plot", state="visible", timeout=90_000)
            # The chart is sent first and the sidebar after it: the picker may still be a skeleton.
            page.wait_for_function(SETTLED, timeout=90_000)
            page.locator(".st-key-history").click()
            page.get_by_role("option", name=LOG.removesuffix(".jsonl")).first.click()
            page.wait_for_timeout(1_000)
            page.get_by_role("tab", name="Reality").click()
            page.wait_for_selector(f"{CHART} .scatterlayer .trace", state="visible", timeout=90_000)
            page.wait_for_timeout(1_500)
            body = page.inner_text("body")
            assert page.locator(".stException").count() == 0
            assert "claude_code 2.1.1" in body and "logged compactions" in body
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 20_000
