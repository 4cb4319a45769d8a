"""Markdown injection in a real browser: a Claude Code log and an upload whose id, version, model, user text, tool
and file names and summary carry ``![t](http://127.0.0.1:PORT/…)``, ``<img src=…>`` and bare links. With a listener
on that port and every request Chromium makes recorded, opening each tab (and hovering the context chart) fetches
nothing, draws no image or link from the log, and shows the text as written."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hostile_log import hostile, hostile_claude_log, hostile_name, hostile_upload
from test_browser import ARGS, IDLE, SETTLED, _chromium, serve

pytestmark = pytest.mark.browser
CHART = ".st-key-context_chart .js-plotly-plot"
TABS = ("Compressions", "Reality", "Charts")
UPLOAD_NAME = "![t](md-up.png) <img src=tag-up.png>.jsonl"


class Listener:
    """An HTTP server on 127.0.0.1 that records every request it gets (the host the payload points at)."""

    def __init__(self) -> None:
        seen: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                seen.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
                pass

        self.seen = seen
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


def _idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE, timeout=90_000)


def _visit_tabs(page) -> str:
    """Open each tab that shows the log's own text, hover the context chart; the page's text after each."""
    texts = []
    for tab in TABS:
        page.get_by_role("tab", name=tab).click()
        _idle(page)
        texts.append(page.inner_text("body"))
    page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=60_000)
    box = page.locator(CHART).bounding_box()
    for share in (0.2, 0.4, 0.6, 0.8):  # the hover box quotes the message at that point
        page.mouse.move(box["x"] + box["width"] * share, box["y"] + box["height"] * 0.5)
        page.wait_for_timeout(300)
    return "\n".join(texts)


def _rendered_from_the_log(page) -> dict[str, int]:
    """Images, links and tags in the page that the payload would have produced had it been rendered."""
    return page.evaluate("""() => ({
        images: document.querySelectorAll('img[src*="png"], image[href*="png"]').length,
        links: Array.from(document.querySelectorAll('a[href]')).filter(a =>
            /127\\.0\\.0\\.1:\\d+\\/|example\\.com|md-|tag-/.test(a.getAttribute('href'))).length,
        hover_tags: document.querySelectorAll('.hoverlayer a, .hoverlayer img, .gtitle a').length,
    })""")


def test_a_hostile_log_and_upload_fetch_nothing_and_show_their_text(tmp_path, listener):
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    folder = tmp_path / "logs"
    folder.mkdir()
    name = f"{hostile_name()}.jsonl"
    (folder / name).write_bytes(hostile_claude_log(listener.host))
    payload = hostile(listener.host)
    requested: list[str] = []
    with serve(tmp_path, "--histories", str(folder)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1400})
            page.on("request", lambda r: requested.append(r.url))
            page.goto(url, wait_until="domcontentloaded")
            page.wait_for_selector(f"{CHART} .scatterlayer .trace", state="visible", timeout=90_000)
            page.wait_for_function(SETTLED, timeout=90_000)  # the sidebar comes after the chart
            page.locator(".st-key-history").click()
            page.get_by_role("option", name="tag-name.png").first.click()
            _idle(page)
            log_text = _visit_tabs(page)
            log_found = _rendered_from_the_log(page)
            page.locator(".st-key-history_upload input[type=file]").set_input_files(
                files=[{"name": UPLOAD_NAME, "mimeType": "application/json", "buffer": hostile_upload(listener.host)}])
            _idle(page)
            upload_text = _visit_tabs(page)
            upload_found = _rendered_from_the_log(page)
            assert page.locator(".stException").count() == 0
        finally:
            browser.close()
    assert listener.seen == []  # nothing fetched from the payload's host
    assert not [u for u in requested if listener.host in u or "md-" in u or "tag-" in u]
    assert log_found == upload_found == {"images": 0, "links": 0, "hover_tags": 0}
    for shown in (log_text, upload_text):  # the text itself is on the page, as written
        assert f"![t]({listener.host}/md.png)" in shown and f"<img src={listener.host}/tag.png>" in shown
        assert f"{listener.host}/bare" in shown and "www.example.com" in shown
    assert "claude_code 2.1.25 " + payload.split(" :material")[0] in log_text  # the version, literally
    assert f"session ![t]({listener.host}/md.png)" in upload_text  # the upload's own id, literally
