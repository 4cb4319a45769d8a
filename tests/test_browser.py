"""The app in a real browser: serve it with ``streamlit run``, open it in headless Chromium, see the chart.

Uses Debian's ``chromium`` (``/usr/bin/chromium``; scripts/test.sh installs it) driven by the python
``playwright`` package; never ``playwright install``. Without chromium the test skips, or fails under
``CI=true``. ``UPDATE_SCREENSHOT=1`` writes the screenshot to docs/screenshot.png (the README's picture).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

pytestmark = pytest.mark.browser

# benchmarks/browser.py serves the app and finds chromium for the timings; the tests use the same code.
_spec = importlib.util.spec_from_file_location("bench_browser", REPO / "benchmarks" / "browser.py")
assert _spec is not None and _spec.loader is not None
_bench = sys.modules.setdefault("bench_browser", importlib.util.module_from_spec(_spec))  # dataclasses look it up
_spec.loader.exec_module(_bench)
# The page is idle: Streamlit has finished the script run and sent every delta.
IDLE = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
# Idle and every element drawn: Streamlit loads a widget's code when it first appears and shows a skeleton until
# then, and the sidebar's widgets are sent after the context chart (workbench/app.py), so they may still be loading.
SETTLED = ("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
           " && !document.querySelector('[data-testid=stSkeleton]')")
ARGS, CHROMIUM, chromium_path, served = _bench.ARGS, _bench.CHROMIUM, _bench.chromium, _bench.served
CHART = ".st-key-context_chart .js-plotly-plot"
# Every chart on screen drawn by plotly and as wide as its box: after a first draw, a tab's charts or a new viewport
# width (fast_chart.py resizes a chart when its box changes; plotly's resize is asynchronous). Charts in a hidden
# tab (no width) are left out. Waited for instead of a fixed pause before a layout check or a picture.
CHARTS_FIT = """() => Array.from(document.querySelectorAll('[data-testid=stMain] .wb-plot, [data-testid=stMain] .js-plotly-plot'))
    .every(gd => gd.clientWidth === 0 || (gd._fullLayout && gd.querySelector('.main-svg')
        && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1))"""
# Resolves after the next two frames: what the last change of the page made is painted.
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
# Counts the script runs that have ended (a ForwardMsg with script_finished, field 6 of streamlit/proto/ForwardMsg.proto
# in streamlit 1.67, a varint) among the messages the page's websocket receives, before the app handles them. The app's
# script state alone cannot tell a run that has not begun from one that has ended: under load, the browser may get
# a short run's first and last messages in one go and never show it running.
COUNT_RUNS = """(() => { const Socket = window.WebSocket; window.__wbRuns = 0;
    const finished = (buffer) => { const b = new Uint8Array(buffer); let i = 0;
        const varint = () => { let v = 0, s = 0, c; do { c = b[i++]; v += (c & 0x7f) * 2 ** s; s += 7; } while (c & 0x80);
                               return v; };
        while (i < b.length) { const tag = varint(), field = Math.floor(tag / 8), wire = tag & 7;
            if (field === 6 && wire === 0) return true;
            if (wire === 0) varint(); else if (wire === 2) i += varint(); else if (wire === 1) i += 8;
            else if (wire === 5) i += 4; else return false; }
        return false; };
    window.WebSocket = class extends Socket { constructor(...args) { super(...args);
        this.addEventListener('message', (e) => { if (e.data instanceof ArrayBuffer && finished(e.data)) window.__wbRuns += 1; });
    } }; })();"""
# The browser contexts the tests open: the page as a reader who asked for reduced motion sees it (prefers-reduced-motion,
# which Streamlit's own styles honour: no entrance animations or transitions, instant scrolls). The text, layout and
# charts are the same; what goes is the animation that kept Chromium's compositor (its GPU process) drawing frames while
# a test waited: 0.8-2.2 → 0.2 CPU-s of that process per page load (2026-12-03, load 2-7.5). Ending the animations
# with a style of our own broke the select box instead (docs/design.md).
CONTEXT: dict[str, Any] = {"reduced_motion": "reduce"}


def after_rerun(page, action: Callable[[], Any], timeout: float = 90_000) -> None:  # noqa: ANN001 - a Page
    """Do ``action`` (a click, a key press, an upload) and wait until the script run it starts has ended and the page
    shows it: a run has finished since (COUNT_RUNS), the app is idle, and two frames are painted."""
    runs = page.evaluate("() => window.__wbRuns")
    action()
    page.wait_for_function(f"() => window.__wbRuns > {runs} && ({IDLE})()", timeout=timeout)
    page.evaluate(FRAMES)


def pick(page, key: str, option: str) -> None:  # noqa: ANN001 - a Page
    """Choose ``option`` (part of its name) in the select box with key ``key``, and wait for the script run that starts
    (none when it was already chosen, as a folder's first log is the default history) and for the list to close."""
    box = page.locator(f".st-key-{key}")
    chosen = option in box.locator("input[role=combobox]").input_value()
    box.click()  # the list opens (and draws every option's name) either way
    choose = page.get_by_role("option", name=option).first.click
    if chosen:
        choose()
    else:
        after_rerun(page, choose)
    page.get_by_role("listbox").wait_for(state="detached", timeout=30_000)  # closed: it takes no later click


def settle_charts(page, timeout: float = 60_000) -> None:  # noqa: ANN001 - a Page
    """Wait until every chart on screen is drawn at its box's width, and painted."""
    page.wait_for_function(CHARTS_FIT, timeout=timeout)
    page.evaluate(FRAMES)


@contextlib.contextmanager
def open_page(chromium: Any, url: str, width: int, height: int, *, own_context: bool = False) -> Iterator[Any]:
    """A new page (a new Streamlit session) of the worker's Chromium (tests/conftest.py) at ``url``, closed after.
    ``own_context``: in a browser context of its own, with no cache shared with the other tests."""
    if own_context:
        context = chromium.browser.new_context(**CONTEXT)
        context.add_init_script(COUNT_RUNS)
    else:
        context = chromium.context
    page = context.new_page()
    try:
        page.set_viewport_size({"width": width, "height": height})
        yield page
    finally:
        (context if own_context else page).close()


def _wait_for_chromium_install(limit_s: float = 900.0) -> str:
    """Wait for the chromium install scripts/test.sh started in the background (WORKBENCH_CHROMIUM_INSTALL names the
    file its exit status goes to), so the other tests need not wait for it; a note on how it ended, or ""."""
    status = os.environ.get("WORKBENCH_CHROMIUM_INSTALL")
    if not status:
        return ""
    deadline = time.monotonic() + limit_s
    while not os.path.exists(status):
        if time.monotonic() > deadline:
            return f" (scripts/test.sh's install had not ended after {limit_s:.0f} s)"
        time.sleep(0.5)
    code = Path(status).read_text().strip()
    return "" if code == "0" else f" (scripts/test.sh's apt-get install exited {code})"


def _chromium() -> str:
    install = _wait_for_chromium_install()
    path = chromium_path()
    if path is None:
        reason = f"Debian's chromium is not installed ({CHROMIUM}){install}; apt-get install -y chromium"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@contextlib.contextmanager
def serve(tmp_path: Path, *app_args: str) -> Iterator[str]:
    """``streamlit run workbench/app.py [-- app_args]`` on a free local port (the benchmark's ``served``); yields
    its URL, stops it after; a server that does not start fails the test with its log."""
    try:
        with served(tmp_path / "streamlit.log", app_args=app_args) as url:
            yield url
    except RuntimeError as exc:
        if "streamlit did not start" not in str(exc):
            raise
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def default_page(served_app: str) -> Iterator[Any]:
    """The default app in one page, its context chart drawn and the page settled, for the tests that only look at it
    and set its size, then the heatmap click: one page load for the four of them (a load is ~4-6 CPU-s of
    Chromium's)."""
    from conftest import BROWSER

    BROWSER.browser  # noqa: B018 - skips, or fails under CI, without chromium
    with open_page(BROWSER, served_app, 1600, 1400) as page:
        page.goto(served_app, wait_until="domcontentloaded")
        page.wait_for_selector(CHART, state="visible", timeout=90_000)
        page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=30_000)
        # the cards and the sidebar are sent after the context chart (app.py): their code loads after it
        page.wait_for_function(SETTLED, timeout=90_000)
        yield page


FIRST_TABBABLE = """() => { const panel = document.querySelector('[role=tabpanel]');
    const tabbable = 'a[href], button:not([disabled]), input:not([disabled]), select, textarea, [tabindex]:not([tabindex="-1"])';
    const el = Array.from(panel.querySelectorAll('*')).find(e => e.matches(tabbable));
    return [el.matches('.st-key-context_chart .wb-plot'), el.getAttribute('role'),
            el.getAttribute('aria-label').startsWith('Context over the conversation')]; }"""


def test_the_context_chart_renders_in_chromium(default_page, tmp_path):
    """Opening the app shows the context chart (a plotly plot in its container) with no exception box."""
    page = default_page
    shot = _shot("screenshot.png", tmp_path)
    page.set_viewport_size({"width": 1600, "height": 1400})
    settle_charts(page)  # the other charts drawn too, for the picture
    assert page.locator(CHART).count() == 1
    assert page.locator(".stException").count() == 0
    assert "compressions" in page.inner_text("body")
    # drawn by plotly.js's basic bundle (workbench/ui/fast_chart.py), never Streamlit's full one
    scripts = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    assert any(s.endswith("/app/static/plotly-basic.min.js") for s in scripts)
    assert not any("PlotlyChart" in s for s in scripts)
    # the Charts tab's first tabbable element is the context chart's figure, before its SVG: the tab panel's search
    # for one after every DOM change stops there (workbench/ui/fast_chart.py)
    assert page.evaluate(FIRST_TABBABLE) == [True, "figure", True]
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    box = page.locator(CHART).bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    try:
        page.wait_for_function(f"() => document.querySelectorAll('{CHART} .hoverlayer .legend').length > 0",
                               timeout=10_000)  # the unified hover box ("x unified"), as before
    finally:
        page.mouse.move(0, 0)  # no hover box in the next test's picture
    assert shot.stat().st_size > 20_000


def _shot(name: str, tmp_path: Path) -> Path:
    """docs/NAME with UPDATE_SCREENSHOT=1 (the pictures the docs show), a temp file otherwise."""
    return REPO / "docs" / name if os.environ.get("UPDATE_SCREENSHOT") == "1" else tmp_path / name


TRUNCATED = """() => Array.from(document.querySelectorAll('[data-testid="stMetric"]')).flatMap(card =>
    Array.from(card.querySelectorAll('[data-testid="stMetricLabel"] p, [data-testid="stMetricValue"] div'))
        .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent))"""


@pytest.mark.parametrize("width", [1280, 1500])
def test_metric_cards_fit_at_laptop_widths(default_page, tmp_path, width):
    """No card label or value is cut off ("10…", "$2…") at 1280 or 1500 px with the sidebar open."""
    page = default_page
    # tall enough for the sidebar's six knob sliders and the groups below them in the picture
    page.set_viewport_size({"width": width, "height": 1700})
    settle_charts(page)  # the page laid out again at this width
    cards = page.locator('[data-testid="stMetric"]')
    assert cards.count() == 10
    assert page.evaluate(TRUNCATED) == []
    assert page.locator(".stException").count() == 0
    page.screenshot(path=str(_shot(f"app-{width}.png", tmp_path)), full_page=True)


def test_clicking_a_heatmap_cell_loads_that_config(default_page, tmp_path):
    """One real mouse click on a sweep heatmap cell loads that cell into the sidebar, as its tooltip says; the form
    above the heatmap keeps the ranges it was swept over. On the default page the tests above only looked at (a page
    load is ~6 CPU-s of Chromium's): last, as the click changes the sidebar."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = default_page
    page.set_viewport_size({"width": 1280, "height": 1100})
    page.get_by_role("tab", name="Sweep").click()
    page.click(".st-key-sweep_go button", timeout=30_000)
    heatmap = ".st-key-sweep_heatmap .js-plotly-plot"
    page.wait_for_selector(f"{heatmap} .heatmaplayer", timeout=60_000)
    page.locator(".st-key-sweep_heatmap").scroll_into_view_if_needed()
    settle_charts(page)  # the heatmap at its width: the click is aimed from its layout
    form = ".st-key-sweep_x_from input, .st-key-sweep_x_to input, .st-key-sweep_y_from input, " \
        ".st-key-sweep_y_to input"
    ranges = page.eval_on_selector_all(form, "els => els.map(e => e.value)")
    cell = ".st-key-sweep_cell input"
    before = page.locator(cell).input_value()
    where = page.evaluate("""() => { const gd = document.querySelector('.st-key-sweep_heatmap .js-plotly-plot');
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        return {x: r.left + L.xaxis._offset + L.xaxis.l2p(3), y: r.top + L.yaxis._offset + L.yaxis.l2p(1),
                xs: L.xaxis._categories, ys: L.yaxis._categories}; }""")
    page.mouse.move(where["x"], where["y"])
    page.mouse.click(where["x"], where["y"])
    x, y = float(where["xs"][3]), float(where["ys"][1])
    expected = f"trigger_ratio = {x:.3g}, kept_budget_ratio = {y:.3g}"
    page.wait_for_selector(f"text=Loaded the clicked cell ({expected})", timeout=30_000)
    page.wait_for_function(f"() => document.querySelector({cell!r})?.value === {expected!r}", timeout=30_000)
    assert before != expected
    assert page.eval_on_selector_all(form, "els => els.map(e => e.value)") == ranges
    tokens = round(x * 200_000)  # the long sample's window: the trigger control shows tokens or the ratio
    shown = [f"{x:.2f}", f"{tokens:,}", str(tokens)]
    # The sidebar is sent after the message and the chart, so its new value is waited for, not read at once.
    sidebar_shows = f"""() => {{ const s = document.querySelector('[data-testid="stSidebar"]');
        return !!s && {shown!r}.some(v => s.innerText.includes(v)); }}"""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(sidebar_shows, timeout=30_000)
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert any(v in sidebar for v in shown), sidebar[:2000]
    assert page.locator(".stException").count() == 0
    page.mouse.wheel(0, 250)  # the picture shows the heatmap, the message and the box the click filled
    page.evaluate(FRAMES)
    page.screenshot(path=str(_shot("sweep-click.png", tmp_path)), full_page=True)
