"""Where the browser's main thread goes between a trigger key press and the redrawn context chart (#21 item 15).

``browser.py`` times the move; this says what the time is made of, on our page and on the bare one-slider page
(``browser.BARE_SLIDER_APP``), key presses alternating. Chrome's sampling profiler (CDP ``Profiler``) runs from just
before each key press until the chart's trigger line has moved (polled every frame, as ``browser.py`` does), and
each sample goes to the script it ran in:

- ``plotly.js``: our basic bundle (``workbench/static/plotly-basic.min.js``) or the chunk Streamlit's
  ``st.plotly_chart`` loads (its full plotly.js and react-plotly);
- ``streamlit``: the rest of Streamlit's frontend (react-dom, emotion, styled-components and its other chunks);
- ``native``: the browser's own functions called from JavaScript (style writes, layout reads such as
  ``getBoundingClientRect``); ``(program)``: the browser's work outside JavaScript (style, layout, paint, the
  profiler's own bookkeeping); ``(garbage collector)``; ``other``: anything else (a component's inline script).

The profiler inflates every figure (about 2-3x at a 250 µs interval), so compare columns, not these times with
``browser.py``'s. ``python benchmarks/move_profile.py [--moves 10]``.
"""

from __future__ import annotations

import collections
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: benchmarks/ is not a package on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import browser as B  # noqa: E402

GROUPS = ("plotly.js", "streamlit", "native", "(program)", "(garbage collector)", "other")


def group(frame: dict) -> str | None:
    """The column a sample's function belongs to (None: idle, not counted)."""
    url, name = frame["url"], frame["functionName"]
    if name == "(idle)":
        return None
    if name in ("(program)", "(garbage collector)", "(root)"):
        return "(program)" if name == "(root)" else name
    if "plotly" in url.lower():
        return "plotly.js"
    if "/static/" in url:
        return "streamlit"
    return "native" if not url else "other"


def split(profile: dict) -> collections.Counter[str]:
    """Milliseconds of samples per column of one profile."""
    nodes = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    out: collections.Counter[str] = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        column = group(nodes[sample])
        if column is not None:
            out[column] += delta / 1000
    return out


def _profiled_move(page: Any, cdp: Any) -> collections.Counter[str]:
    thumb = page.locator(".st-key-trigger_tokens input[type=range]")
    before = page.evaluate(B.TRIGGER_Y)
    thumb.focus()
    cdp.send("Profiler.start")
    thumb.press("ArrowLeft")
    page.wait_for_function(f"() => {{ const y = ({B.TRIGGER_Y})(); return y !== null && y !== {before}; }}",
                           polling="raf", timeout=60_000)
    found = split(cdp.send("Profiler.stop")["profile"])
    B._settle(page)
    page.wait_for_timeout(300)
    return found


def measure(moves: int = 10) -> dict[str, list[collections.Counter[str]]]:
    """``moves`` profiled key presses on each page (bare first, then ours, alternating), after one unprofiled each."""
    from playwright.sync_api import sync_playwright

    path = B.chromium()
    if path is None:
        raise RuntimeError(f"Debian's chromium is not installed ({B.CHROMIUM})")
    found: dict[str, list[collections.Counter[str]]] = {"bare": [], "ours": []}
    with tempfile.TemporaryDirectory(prefix="workbench-move-") as tmp, sync_playwright() as p:
        bare_app = Path(tmp) / "bare_slider_app.py"
        bare_app.write_text(B.BARE_SLIDER_APP)
        browser = p.chromium.launch(executable_path=path, args=B.ARGS)
        try:
            with B.served(Path(tmp) / "ours.log") as ours_url, \
                    B.served(Path(tmp) / "bare.log", B.ROOT, str(bare_app)) as bare_url:
                pages = {}
                for name, url in (("bare", bare_url), ("ours", ours_url)):
                    page = browser.new_page(viewport={"width": 1500, "height": 1000})
                    B._first_chart(page, url)
                    B._settle(page)
                    B._move(page)  # the first move compiles what later ones reuse: not counted
                    cdp = page.context.new_cdp_session(page)
                    cdp.send("Profiler.enable")
                    cdp.send("Profiler.setSamplingInterval", {"interval": 250})
                    pages[name] = (page, cdp)
                for _ in range(moves):
                    for name in ("bare", "ours"):
                        page, cdp = pages[name]
                        page.bring_to_front()
                        found[name].append(_profiled_move(page, cdp))
        finally:
            browser.close()
    return found


def table(found: dict[str, list[collections.Counter[str]]]) -> str:
    """Median ms per move and column, both pages, and ours minus bare."""
    rows = ["| | " + " | ".join(GROUPS) + " | all |", "|---" * (len(GROUPS) + 2) + "|"]
    med = {name: {g: statistics.median(c[g] for c in moves) for g in GROUPS} |
           {"all": statistics.median(sum(c.values()) for c in moves)} for name, moves in found.items()}
    for name in ("bare", "ours"):
        rows.append(f"| {name} | " + " | ".join(f"{med[name][g]:.1f}" for g in (*GROUPS, "all")) + " |")
    rows.append("| ours - bare | " + " | ".join(f"{med['ours'][g] - med['bare'][g]:+.1f}" for g in (*GROUPS, "all"))
                + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    import argparse
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=10)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = measure(args.moves)
    print(f"key press to the redrawn context chart, sampled main-thread ms per move (median of {args.moves}); "
          f"load average {load:.2f} -> {os.getloadavg()[0]:.2f}")
    print(table(result))
