"""Retake the app's screenshots in docs/ (the README's and docs/app.md's pictures) at 1280 and 1500 px.

    python scripts/screenshots.py                     # every picture, into docs/
    python scripts/screenshots.py --only app-1280 reality --out /tmp/shots

Serves ``streamlit run workbench/app.py`` of this checkout on a free loopback port (no provider key in its
environment, so the Live runs picture shows the no-key case) and drives Debian's headless Chromium
(``/usr/bin/chromium``; installed with apt-get when missing and run as root) through the python ``playwright``
package, never ``playwright install``. Each picture is taken in a fresh page (its own Streamlit session), on the
bundled samples only: the long sample, and ``sample_histories/claude_code.jsonl`` for the Reality tab, so no
third-party transcript ever lands in docs/. A picture whose page shows an exception box is still written, and the
script exits 1 naming it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
CHART = ".st-key-context_chart .js-plotly-plot"
IDLE = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
# The thrash picture's knobs: a 30k hard cap under a 100-message floor (docs/app.md, "Cards and warnings").
THRASH_YAML = "trigger_hard_cap_tokens: 30000\nmin_kept_messages: 100\n"
KEY_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_ACCESS_KEY", "_SECRET_ACCESS_KEY")


@dataclass(frozen=True)
class Shot:
    """One picture: its file in docs/, the viewport, and what to do on the page before taking it."""

    name: str
    width: int
    height: int
    prepare: Callable[[Any], None]


def ensure_chromium() -> str:
    """Debian's chromium, installed with apt-get when missing and this process may (root, apt-get present)."""
    if Path(CHROMIUM).is_file():
        return CHROMIUM
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing Debian's chromium...", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if not Path(CHROMIUM).is_file():
        sys.exit(f"error: {CHROMIUM} not found; install it with: apt-get install -y chromium")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keyless_env() -> dict[str, str]:
    """This environment without provider credentials: the pictures never depend on whose machine takes them."""
    return {k: v for k, v in os.environ.items() if not k.endswith(KEY_SUFFIXES)}


@contextlib.contextmanager
def served(log: Path) -> Iterator[str]:
    """``streamlit run workbench/app.py`` on a free loopback port until the block ends; yields its URL."""
    port = _free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "workbench/app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=_keyless_env())
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"error: streamlit did not start:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _idle(page: Any, timeout: int = 120_000) -> None:
    """Wait until the app's script has finished its run (a rerun starts shortly after a click: give it that)."""
    page.wait_for_timeout(400)
    page.wait_for_function(IDLE, timeout=timeout)


def _tab(page: Any, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    _idle(page)


def _to_top(page: Any, selector: str, margin: int) -> None:
    """Scroll the first element ``selector`` names to ``margin`` px below the top of its scrolling container."""
    page.evaluate("""([sel, margin]) => { const el = document.querySelector(sel); if (!el) return;
        el.scrollIntoView({block: 'start'}); let box = el.parentElement;
        while (box && box.scrollHeight <= box.clientHeight) box = box.parentElement;
        if (box) box.scrollTop -= margin; }""", [selector, margin])


def _charts(page: Any) -> None:
    """The Charts tab as the app opens: the three charts drawn."""
    page.wait_for_timeout(1_500)


def _thrash(page: Any) -> None:
    """The thrash warnings and the notes under the knobs that have no effect, from pasted YAML."""
    _tab(page, "YAML & CLI")
    page.locator(".st-key-yaml_paste textarea").fill(THRASH_YAML)
    page.locator(".st-key-yaml_paste textarea").press("Tab")  # Streamlit takes a text area's value on blur
    page.click(".st-key-yaml_apply button")
    _idle(page)
    _tab(page, "Charts")
    page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=60_000)
    with contextlib.suppress(Exception):  # the sidebar scrolled to the notes under the knobs that have no effect
        _to_top(page, ".st-key-preset", 20)
    page.wait_for_timeout(1_000)


def _live(page: Any) -> None:
    """Live runs with no key: the pre-flight check says what is missing and sends nothing."""
    _tab(page, "Live runs")
    page.click(".st-key-live_go button")
    page.wait_for_selector("text=Nothing was sent", timeout=60_000)
    _idle(page)
    page.wait_for_timeout(500)


def _sweep(page: Any) -> None:
    """The sweep's heatmap after a real mouse click on a cell."""
    _tab(page, "Sweep")
    page.click(".st-key-sweep_go button", timeout=30_000)
    heatmap = ".st-key-sweep_heatmap .js-plotly-plot"
    page.wait_for_selector(f"{heatmap} .heatmaplayer", timeout=120_000)
    _idle(page)
    page.locator(".st-key-sweep_heatmap").scroll_into_view_if_needed()
    page.wait_for_timeout(1_000)
    where = page.evaluate("""() => { const gd = document.querySelector('.st-key-sweep_heatmap .js-plotly-plot');
        const L = gd._fullLayout, r = gd.getBoundingClientRect();
        return {x: r.left + L.xaxis._offset + L.xaxis.l2p(3), y: r.top + L.yaxis._offset + L.yaxis.l2p(1)}; }""")
    page.mouse.move(where["x"], where["y"])
    page.mouse.click(where["x"], where["y"])
    _idle(page)
    page.mouse.wheel(0, 250)  # the heatmap and the box the click filled
    page.wait_for_timeout(800)


def _tune(page: Any) -> None:
    """Auto-tune on the long sample: its winner against the sidebar's knobs, its table by history, its Pareto front."""
    _tab(page, "Sweep")
    page.click(".st-key-tune_go button", timeout=30_000)
    page.wait_for_selector(".st-key-tune_pareto .js-plotly-plot", timeout=300_000)
    _idle(page, timeout=300_000)
    page.locator(".st-key-tune_go").scroll_into_view_if_needed()
    page.wait_for_timeout(1_000)


def _reality(page: Any) -> None:
    """The Reality tab on the bundled Claude Code log (sample_histories/claude_code.jsonl)."""
    picker = page.locator(".st-key-history input")  # a combo box: its value is the history shown
    if "claude_code" not in picker.input_value():
        picker.click()
        page.get_by_role("option", name="claude_code").first.click()
        _idle(page)
        if "claude_code" not in picker.input_value():
            raise RuntimeError(f"the history picker did not take claude_code: {picker.input_value()!r}")
    page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=90_000)
    _tab(page, "Reality")
    page.wait_for_selector(".st-key-reality_chart .js-plotly-plot .scatterlayer .trace", timeout=120_000)
    page.wait_for_timeout(1_500)


SHOTS = (
    Shot("screenshot", 1500, 1200, _charts),
    Shot("app-1280", 1280, 1700, _charts),  # tall enough for the six knob sliders, as tests/test_browser.py takes it
    Shot("app-1500", 1500, 1700, _charts),
    Shot("thrash-1280", 1280, 900, _thrash),
    Shot("live-runs-no-key", 1280, 1400, _live),
    Shot("sweep-click", 1500, 1100, _sweep),
    Shot("tune-1280", 1280, 2600, _tune),
    Shot("tune-1500", 1500, 2400, _tune),
    Shot("reality", 1500, 1500, _reality),
)


def take(browser: Any, url: str, shot: Shot, out: Path) -> bool:
    """Take one picture into ``out``/NAME.png (atomically); False when the page showed an exception box."""
    page = browser.new_page(viewport={"width": shot.width, "height": shot.height})
    try:
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(f"{CHART} .scatterlayer .trace", timeout=120_000)
        _idle(page)
        # the cards and the sidebar come after the context chart (app.py): wait until no element is a placeholder
        page.wait_for_function("() => !document.querySelector('[data-testid=stSkeleton]')", timeout=120_000)
        shot.prepare(page)
        clean = page.locator(".stException").count() == 0
        target = out / f"{shot.name}.png"
        partial = target.with_name(f".{target.name}.tmp")
        page.screenshot(path=str(partial), type="png")
        os.replace(partial, target)
        print(f"{target}  {shot.width}x{shot.height}  {target.stat().st_size:,} bytes"
              + ("" if clean else "  (the page shows an exception)"))
        return clean
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[s.name for s in SHOTS], help="these pictures only")
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="folder to write to (default: docs/)")
    args = parser.parse_args(argv)
    executable = ensure_chromium()
    from playwright.sync_api import sync_playwright

    shots = [s for s in SHOTS if not args.only or s.name in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="workbench-screenshots-") as tmp, served(Path(tmp) / "streamlit.log") as url, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            for shot in shots:
                try:
                    if not take(browser, url, shot, args.out):
                        failed.append(shot.name)
                except Exception as exc:  # one picture that cannot be taken does not stop the others
                    print(f"{shot.name}: not taken ({type(exc).__name__}: {str(exc).splitlines()[0]})",
                          file=sys.stderr)
                    failed.append(shot.name)
        finally:
            browser.close()
    if failed:
        print(f"error: {len(failed)} of {len(shots)} pictures failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
