"""Charts drawn by plotly.js's basic bundle instead of the full one Streamlit ships: the cold start's main cost.

Streamlit's ``st.plotly_chart`` loads its own 4.7 MB plotly.js, whose loading and evaluation took ~1.1 s of
the browser's one main thread here; the basic bundle (scatter, bar and pie only: every chart of the Charts,
A/B and Live tabs) took ~0.25 s (``benchmarks/README.md``, browser section). So those figures are drawn by a
Streamlit v2 component (no iframe: the chart is in the page, as ``st.plotly_chart``'s is) that loads
``workbench/static/plotly-basic.min.js`` (plotly.js 4.1.1, the version plotly.py 7.1 writes for; MIT, its
licence beside it), served by Streamlit's static file serving (``server.enableStaticServing`` in
``.streamlit/config.toml``). Figures with other trace types (the sweep's heatmap), a chart that reports
selections, or a server without static serving (the app started from another folder) keep ``st.plotly_chart``.
What these charts lack beside ``st.plotly_chart``'s: Streamlit's element toolbar (its full-screen button); plotly's
own mode bar (zoom, pan, PNG download) and hover are the same.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

if TYPE_CHECKING:
    import plotly.graph_objects as go

BASIC_TYPES = frozenset({"scatter", "bar", "pie"})  # what plotly.js's basic bundle draws (its README)
BUNDLE = "plotly-basic.min.js"
BUNDLE_VERSION = "4.1.1"  # the header of workbench/static/plotly-basic.min.js (tests/test_app.py checks both)
SCRIPT = f"app/static/{BUNDLE}"  # workbench/static/, under the app's URL (Streamlit serves the script's static/)

_JS = """
const SRC = "__SRC__";
function plotly() {
  if (!window.__wbPlotly) {
    window.__wbPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL(SRC, document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { window.__wbPlotly = undefined; reject(new Error("could not load " + SRC)); };
      document.head.appendChild(s);
    });
  }
  return window.__wbPlotly;
}
export default function (component) {
  const { parentElement, data } = component;
  let el = parentElement.querySelector(".wb-plot");
  if (!el) {
    el = document.createElement("div");
    el.className = "wb-plot";
    // Tabbable (a figure named by its title): a Streamlit tab panel (React Aria's useHasTabbableChild, Streamlit
    // 1.67) walks its subtree for a tabbable element after every DOM change below it, ~87 walks a knob move on the
    // Charts tab. The first one was the context chart's mode-bar button, after all of its SVG: 3,700-5,100 nodes
    // visited a move; with this div first, ~200 (benchmarks/README.md, tenth round).
    el.tabIndex = 0;
    el.setAttribute("role", "figure");
    parentElement.appendChild(el);
  }
  // bytes (as sent: Streamlit passes them through untouched, a str it would test for a dataframe, importing pandas)
  const text = (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) ? new TextDecoder().decode(data) : data;
  const fig = typeof text === "string" ? JSON.parse(text) : text;
  if (!fig) return;
  const title = fig.layout && fig.layout.title && fig.layout.title.text;
  const label = typeof title === "string" ? title.replace(/<[^>]*>/g, "") : "";
  if (label && el.getAttribute("aria-label") !== label) el.setAttribute("aria-label", label);
  const height = fig.layout && fig.layout.height;
  if (height && !el.classList.contains("js-plotly-plot")) el.style.height = height + "px";
  const { wbAfterPaint, ...config } = fig.config || {};
  // A chart below the first one waits for the next frame: the chart a knob move is watched on paints first.
  const ready = wbAfterPaint ? new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))) : Promise.resolve();
  Promise.all([plotly(), ready]).then(([P]) => {
    P.react(el, fig.data || [], fig.layout || {}, Object.assign({responsive: true}, config));
    if (!el.__wbResize && window.ResizeObserver) {
      let last = el.clientWidth;
      el.__wbResize = new ResizeObserver(() => {
        if (el.clientWidth !== last && el.clientWidth > 0) { last = el.clientWidth; P.Plots.resize(el); }
      });
      el.__wbResize.observe(el);
    }
  }).catch((e) => { el.textContent = String(e && e.message || e); });
}
""".replace("__SRC__", SCRIPT)


@functools.cache
def _mount() -> Any:
    """The component, registered once per process (Streamlit warns on a second registration of a name)."""
    return st.components.v2.component("workbench_chart", js=_JS, isolate_styles=False)


def available(fig: go.Figure | dict | None = None) -> bool:
    """Whether this server serves the basic bundle (static serving on, and the running script's ``static/``
    folder is ours: not so for a script that wraps app.py from elsewhere) and ``fig`` (if given: a figure, or its
    JSON structure) has only trace types it draws."""
    if not st.get_option("server.enableStaticServing") or not _served() or not _compatible():
        return False
    if isinstance(fig, dict):
        return all(t.get("type", "scatter") in BASIC_TYPES for t in fig.get("data", ()))
    return fig is None or all(getattr(t, "type", "scatter") in BASIC_TYPES for t in fig.data)


@functools.cache
def _compatible() -> bool:
    """Streamlit has v2 components (``st.components.v2``, newer than our oldest supported Streamlit) and the
    installed plotly.py writes for the bundle's plotly.js major version (its own copy's header says which)."""
    import re
    from importlib.resources import files

    try:
        import streamlit.components.v2  # noqa: F401
    except ImportError:
        return False
    try:
        with (files("plotly") / "package_data" / "plotly.min.js").open("r", encoding="utf-8") as fh:
            head = fh.read(300)
    except OSError:
        return False
    found = re.search(r"plotly\.js v(\d+)\.", head)
    return found is not None and found[1] == BUNDLE_VERSION.split(".")[0]


def _served() -> bool:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx is not None and _bundle_beside(ctx.main_script_path)


@functools.cache
def _bundle_beside(main_script: str) -> bool:
    """Whether the folder Streamlit serves for this script (its ``static/``) holds the bundle: looked once."""
    return (Path(main_script).parent / "static" / BUNDLE).is_file()


def chart(fig: go.Figure | dict, key: str, config: dict[str, Any], *, after_paint: bool = False) -> None:
    """Draw ``fig`` with the basic bundle, in an element keyed ``key`` (its figure JSON, as st.plotly_chart sends).

    ``fig`` may be the figure's JSON structure (``plots.context_spec``): its numeric arrays are packed as plotly.py
    packs a figure's (``convert_to_base64``, what ``Figure.to_dict`` applies), so the browser gets the same JSON.
    ``after_paint``: draw once the browser has painted the next frame, so a chart above it that arrived in the same
    batch is on screen first (the lower charts after a knob move: benchmarks/README.md, browser_slider)."""
    import plotly.io as pio

    if isinstance(fig, dict):
        pack(fig["data"])  # in place: a structure built for this one chart
    spec = pio.to_json(fig, validate=False)  # '{"data": [...], "layout": {...}}', never empty
    config = {**config, "wbAfterPaint": True} if after_paint else config  # read (and dropped) by the script above
    payload = spec[: spec.rindex("}")] + ', "config": ' + json.dumps(config) + "}"  # no parse of the whole figure
    _mount()(key=key, data=payload.encode("utf-8"), width="stretch", height="content")


def pack(obj: Any) -> None:
    """Pack a figure structure's numeric arrays in place as plotly.py packs a figure's (``convert_to_base64``), without
    walking plain lists of values: the context chart's hover data is 1,100 lists of strings, and walking them took
    ~14 ms of every slider move under load. In these structures arrays sit in dicts, and lists hold dicts or values."""
    from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

    if isinstance(obj, dict):
        for key, value in obj.items():
            if is_skipped_key(key):
                continue
            if is_homogeneous_array(value):
                obj[key] = to_typed_array_spec(value)
            else:
                pack(value)
    elif isinstance(obj, list | tuple) and obj and isinstance(obj[0], dict):
        for value in obj:
            pack(value)


def warm(key: str) -> None:
    """A hidden empty chart: the browser starts fetching and compiling the bundle while the script runs."""
    _mount()(key=key, data=b'{"data": [], "layout": {"height": 10}}', width="stretch", height="content")
