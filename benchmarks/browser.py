"""The app in a real browser: how long a person waits, measured with playwright in Debian's chromium.

Three figures, all on the shipped long sample (2,200 messages, 1,100 checks), each from a fresh
``streamlit run`` so the first chart includes the script's imports:

- cold start: ``page.goto`` until the context chart has drawn its traces (the server already answers
  its health check; the script's first run, the history's loading and counting, the replay, building
  and sending the figures and plotly's drawing are all inside);
- slider move: a key press on the trigger control (tokens, written to the knob the strategy reads, so every step
  moves the trigger) until the context chart shows the new trigger line;
- the same two on bare Streamlit pages measured in the same run: a one-chart page for the cold start
  (``MINIMAL_APP``, back to back with each of ours) and a one-slider, one-chart page for the slider move
  (``BARE_SLIDER_APP``, its key presses alternating with ours, each pair under the same load), so the targets are
  ratios to what Streamlit itself takes on this machine at this moment;
- cold start for a returning browser: the same, with one browser context and one port for every fresh server,
  so Streamlit's static files and their compiled code stay cached as they do between two ``streamlit run``.

The served checkout's bytecode is written first (``compileall``, as the quick start does), so no cold start of ours
compiles modules the reference page's imports have compiled already.

Run as ``python benchmarks/run.py --only browser`` or alone: ``python benchmarks/browser.py``.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHART = ".st-key-context_chart .js-plotly-plot"
IDLE = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
TRIGGER_Y = """() => { const gd = document.querySelector('.st-key-context_chart .js-plotly-plot');
    if (!gd || !gd._fullData) return null;
    const t = gd._fullData.find(d => d.name && d.name.startsWith('trigger'));
    if (!t || !t.y) return null;
    const y = Array.from(t.y).find(v => v !== null && !Number.isNaN(v));
    return y === undefined ? null : y; }"""


def chromium() -> str | None:
    """Debian's chromium, or None when it is not installed."""
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(log: Path, root: Path = ROOT, script: str = "workbench/app.py", app_args: tuple[str, ...] = (),  # noqa: ANN201
           port: int | None = None):
    """``streamlit run workbench/app.py [-- app_args]`` of the checkout at ``root`` on a free port until the block
    ends; yields its URL (tests/test_browser.py serves the app through it too).

    ``root`` other than this checkout (an exported older commit) is put first on PYTHONPATH, so the same
    interpreter serves that version's ``workbench``: before/after comparisons on one machine, back to back.
    """
    port = port or _free_port()
    env = {} if root == ROOT else {"PYTHONPATH": str(root)}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", *(["--", *app_args] if app_args else [])],
            cwd=root, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


# For scale: a Streamlit page with one small chart (`st.plotly_chart`, so Streamlit's full plotly.js) and one
# metric, nothing of ours. Our Charts tab draws with plotly.js's basic bundle instead (workbench/ui/fast_chart.py).
MINIMAL_APP = """import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
st.sidebar.title("minimal")
st.metric("a", 1)
with st.container(key="context_chart"):
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2], name="trigger")), key="context")
"""


# For the slider move: one slider in the sidebar and one chart whose "trigger" line follows it, nothing of ours.
BARE_SLIDER_APP = """import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
v = st.sidebar.slider("trigger", 0, 200_000, 100_000, step=1_000, key="trigger_tokens")
with st.container(key="context_chart"):
    st.plotly_chart(go.Figure([go.Scatter(x=[1, 2, 3], y=[1, 3, 2], name="context"),
                               go.Scatter(x=[1, 3], y=[v, v], name="trigger")]), key="context")
"""


@dataclass
class Timings:
    cold: list[float] = field(default_factory=list)  # seconds from goto to the first chart, one per server
    slider: list[float] = field(default_factory=list)  # seconds from a key press to the updated context chart
    settled: list[float] = field(default_factory=list)  # seconds from a key press until the whole page is idle
    slider_floor: list[float] = field(default_factory=list)  # a key press to the new chart on BARE_SLIDER_APP
    floor: list[float] = field(default_factory=list)  # cold start of MINIMAL_APP, back to back with ours
    returning: list[float] = field(default_factory=list)  # cold start, fresh server, browser cache kept
    returning_floor: list[float] = field(default_factory=list)  # the same for MINIMAL_APP
    load: list[float] = field(default_factory=list)  # 1-minute load average before each cold start
    notes: list[str] = field(default_factory=list)


def _first_chart(page: Any, url: str) -> float:
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=120_000)
    return time.perf_counter() - t0


def _settle(page: Any) -> None:
    """Wait until the app has finished its run (no 'running' indicator) and the chart has a trigger line."""
    page.wait_for_function(f"() => ({TRIGGER_Y})() !== null", timeout=60_000)
    page.wait_for_function(IDLE, timeout=60_000)


def _move(page: Any) -> tuple[float, float]:
    """One ArrowLeft on the trigger control: seconds until the chart's trigger line moves, and until the page is idle."""
    page.bring_to_front()
    thumb = page.locator(".st-key-trigger_tokens input[type=range]")
    before = page.evaluate(TRIGGER_Y)
    thumb.focus()
    t0 = time.perf_counter()
    thumb.press("ArrowLeft")
    page.wait_for_function(f"() => {{ const y = ({TRIGGER_Y})(); return y !== null && y !== {before}; }}",
                           polling="raf", timeout=60_000)
    chart = time.perf_counter() - t0
    _settle(page)
    whole = time.perf_counter() - t0
    page.wait_for_timeout(300)
    return chart, whole


def _slider_moves(ours: Any, bare: Any, moves: int, t: Timings) -> None:
    """``moves`` key presses on each page, alternating (the bare page, then ours): each pair is timed under the same
    load. The machine is shared and its load swings (3 to 9 within minutes here), so a block of bare moves and a later
    block of ours could differ by the load alone."""
    _settle(ours)
    _settle(bare)
    for _ in range(moves):
        t.slider_floor.append(_move(bare)[0])
        chart, whole = _move(ours)
        t.slider.append(chart)
        t.settled.append(whole)


def _returning(browser: Any, tmp: Path, minimal: Path, root: Path, runs: int, width: int, t: Timings) -> None:
    """A person who has opened the app before: ``streamlit run`` serves on the same port each time (8501), so
    the browser keeps Streamlit's static files (hashed names, cached) and V8's compiled code for them between
    launches. A fresh server every time, as above, but one browser context and one port; a first visit to
    each app fills the cache and is not counted."""
    context = browser.new_context(viewport={"width": width, "height": 1000})
    try:
        for script, into in ((str(minimal), t.returning_floor), ("workbench/app.py", t.returning)):
            port = _free_port()
            for r in range(runs + 1):
                with served(tmp / f"returning-{len(into)}-{r}.log", root, script, port=port) as url:
                    page = context.new_page()
                    seconds = _first_chart(page, url)
                    if r:
                        into.append(seconds)
                    page.close()
    finally:
        context.close()


def measure(runs: int = 3, moves: int = 7, width: int = 1500, root: Path = ROOT, returning: bool = True) -> Timings:
    """``runs`` fresh servers: the cold start of each, and ``moves`` slider moves on the first."""
    path = chromium()
    if path is None:
        raise RuntimeError(f"Debian's chromium is not installed ({CHROMIUM}); apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    t = Timings()
    import compileall
    import tempfile

    # The package's bytecode, as the quick start writes it (docs/install.md): the one-chart page's imports (streamlit,
    # plotly) come compiled from site-packages, and on a machine with PYTHONDONTWRITEBYTECODE (this one) no import
    # writes ours, so every module edited since the last compileall was compiled again in each of our cold starts
    # (19 of 188 in the run of 2026-12-03 07:43; all 192 take 0.56 CPU-s). Compiled here, both pages start alike.
    compileall.compile_dir(str(root / "workbench"), quiet=1)

    with tempfile.TemporaryDirectory(prefix="workbench-browser-") as tmp, sync_playwright() as p:
        minimal = Path(tmp) / "minimal_app.py"
        minimal.write_text(MINIMAL_APP)
        browser = p.chromium.launch(executable_path=path, args=ARGS)
        try:
            for r in range(runs):
                t.load.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
                with served(Path(tmp) / f"minimal-{r}.log", root, str(minimal)) as url:
                    page = browser.new_page(viewport={"width": width, "height": 1000})
                    t.floor.append(_first_chart(page, url))
                    page.close()
                with served(Path(tmp) / f"streamlit-{r}.log", root) as url:
                    page = browser.new_page(viewport={"width": width, "height": 1000})
                    t.cold.append(_first_chart(page, url))
                    if r == 0:  # the bare page starts after our cold start, so it does not share that run's machine
                        bare = Path(tmp) / "bare_slider_app.py"
                        bare.write_text(BARE_SLIDER_APP)
                        with served(Path(tmp) / "bare-slider.log", root, str(bare)) as bare_url:
                            bare_page = browser.new_page(viewport={"width": width, "height": 1000})
                            _first_chart(bare_page, bare_url)
                            _slider_moves(page, bare_page, moves, t)
                            bare_page.close()
                    page.close()
            if returning:
                _returning(browser, Path(tmp), minimal, root, runs, width, t)
        finally:
            browser.close()
    t.notes.append(f"viewport {width} px, long sample (2,200 messages, 1,100 checks), {runs} fresh servers, "
                   f"{moves} slider moves")
    return t


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="serve this checkout instead (e.g. an older commit)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--moves", type=int, default=7)
    parser.add_argument("--width", type=int, default=1500)
    parser.add_argument("--no-returning", action="store_true", help="skip the returning-browser cold starts")
    args = parser.parse_args()
    found = measure(args.runs, args.moves, args.width, root=args.root.resolve(), returning=not args.no_returning)
    for name, values in (("cold start", found.cold), ("one-chart page", found.floor),
                         ("cold start, returning browser", found.returning),
                         ("one-chart page, returning browser", found.returning_floor), ("slider move", found.slider),
                         ("one-slider page, slider move", found.slider_floor),
                         ("page settled", found.settled), ("load average", found.load)):
        if values:
            print(f"{name}:", ", ".join(f"{x:.3f}" for x in values), f"median {statistics.median(values):.3f}")
