"""Markdown injection in a real browser: a Claude Code log and an upload whose id, version, model, user text, tool
and file names and summary carry ``![t](http://127.0.0.1:PORT/…)``, ``<img src=…>`` and bare links. With a listener
on that port and every request Chromium makes recorded, opening each tab (and hovering the context chart) fetches
nothing, draws no image or link from the log, and shows the text as written."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hostile_log import hostile, hostile_upload
from test_browser import SETTLED, after_rerun, open_page, pick

pytestmark = pytest.mark.browser
CHART = ".st-key-context_chart .js-plotly-plot"
TABS = ("Compressions", "Reality", "Charts")
# Text each tab draws once its content is on the page (workbench/ui/reality_tab.py: the log's own line).
DRAWN = {"Reality": " logged calls · "}
# Where to hover: the context chart's points a fifth, two, three and four fifths along its longest trace (distinct
# messages, so each hover box differs from the last), in page coordinates.
POINTS = f"""() => {{ const gd = document.querySelector('{CHART}'), L = gd._fullLayout, r = gd.getBoundingClientRect();
    const xs = gd._fullData.reduce((a, t) => (t.x && t.x.length > a.length ? Array.from(t.x) : a), []);
    const picked = [...new Set([0.2, 0.4, 0.6, 0.8].map(q => xs[Math.floor(q * (xs.length - 1))]))];
    return picked.map(x => [r.left + L.xaxis._offset + L.xaxis.l2p(L.xaxis.d2l(x)),
                            r.top + L.yaxis._offset + L.yaxis._length * 0.5]); }}"""
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


def _visit_tabs(page) -> str:
    """Open each tab that shows the log's own text, hover the context chart; the page's text after each."""
    texts = []
    for tab in TABS:
        after_rerun(page, page.get_by_role("tab", name=tab).click)  # a tab runs the script (it draws lazily)
        if tab in DRAWN:  # under load the run's end can reach the page before the tab's last element is drawn
            page.wait_for_function(f"() => document.body.innerText.includes({DRAWN[tab]!r})", timeout=60_000)
        texts.append(page.inner_text("body"))
    page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=60_000)
    hover = f"document.querySelector('{CHART} .hoverlayer')?.textContent ?? ''"
    for x, y in page.evaluate(POINTS):  # the hover box quotes the message at that point
        before = page.evaluate(f"() => {hover}")
        page.mouse.move(x, y)
        # drawn: the box shows this point's message, not the last one's
        page.wait_for_function(f"last => {{ const t = {hover}; return t !== '' && t !== last; }}", arg=before,
                               timeout=30_000)
    return "\n".join(texts)


def _rendered_from_the_log(page) -> dict[str, int]:
    """Images, links and tags in the page that the payload would have produced had it been rendered."""
    return page.evaluate("""() => ({
        images: document.querySelectorAll('img[src*="png"], image[href*="png"]').length,
        links: Array.from(document.querySelectorAll('a[href]')).filter(a =>
            /127\\.0\\.0\\.1:\\d+\\/|example\\.com|md-|tag-/.test(a.getAttribute('href'))).length,
        hover_tags: document.querySelectorAll('.hoverlayer a, .hoverlayer img, .gtitle a').length,
    })""")


def test_a_hostile_log_and_upload_fetch_nothing_and_show_their_text(chromium, served_logs):
    url, listener = served_logs  # the log's payload points at the listener (tests/conftest.py)
    payload = hostile(listener.host)
    requested: list[str] = []
    # a browser context of its own: no response cached by another test's pages, every request recorded
    with open_page(chromium, url, 1500, 1400, own_context=True) as page:
        page.on("request", lambda r: requested.append(r.url))
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(f"{CHART} .scatterlayer .trace", state="visible", timeout=90_000)
        page.wait_for_function(SETTLED, timeout=90_000)  # the sidebar comes after the chart
        pick(page, "history", "tag-name.png")
        log_text = _visit_tabs(page)
        log_found = _rendered_from_the_log(page)
        after_rerun(page, lambda: page.locator(".st-key-history_upload input[type=file]").set_input_files(
            files=[{"name": UPLOAD_NAME, "mimeType": "application/json", "buffer": hostile_upload(listener.host)}]))
        upload_text = _visit_tabs(page)
        upload_found = _rendered_from_the_log(page)
        assert page.locator(".stException").count() == 0
    assert listener.seen == []  # nothing fetched from the payload's host
    assert not [u for u in requested if listener.host in u or "md-" in u or "tag-" in u]
    assert log_found == upload_found == {"images": 0, "links": 0, "hover_tags": 0}
    for shown in (log_text, upload_text):  # the text itself is on the page, as written
        assert f"![t]({listener.host}/md.png)" in shown and f"<img src={listener.host}/tag.png>" in shown
        assert f"{listener.host}/bare" in shown and "www.example.com" in shown
    assert "claude_code 2.1.25 " + payload.split(" :material")[0] in log_text  # the version, literally
    assert f"session ![t]({listener.host}/md.png)" in upload_text  # the upload's own id, literally
