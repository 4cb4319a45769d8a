"""What the page needs before the heavy imports: its style, and plotly.js already loading in the browser.

The browser fetches and compiles a chart library only when the first chart element arrives (Streamlit's own
plotly.js: 1.4 s from a chart's delta to its first drawing on a one-chart page here; benchmarks/browser.py,
Debian's chromium). An empty chart, hidden and sent before the script imports the engine and replays the
history, starts that load ~1 s earlier, so it runs in the browser while the server computes. It is drawn the
way the Charts tab draws (``fast_chart``: plotly.js's basic bundle when the server serves it), so it loads the
library the real charts use. This module imports nothing but streamlit so it can run first.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

WARM = "plotly_warmup"  # container key, hidden by the page style
CARDS = "cards"  # key prefix of the metric cards' rows (ui/charts.py): the page style gives each card an equal share
_DONE = "_plotly_warm"  # session flag: the browser has the library after a session's first run


def page_style() -> None:
    """Less empty space above the header (the cards and the first chart fit a laptop screen); no warm-up box; the
    cards of a row equally wide, as columns would make them."""
    st.html("<style>[data-testid='stMainBlockContainer']{padding-top:2.2rem}"
            f".st-key-{WARM}{{display:none}}"
            f"[class*='st-key-{CARDS}_']>div{{flex:1 1 0;min-width:0}}</style>")


def warm_plotly(session: Any) -> DeltaGenerator:  # session: st.session_state, not typed as a mapping
    """A placeholder holding a hidden empty chart on a session's first run (empty on later runs, so every run
    has the same elements in the same places); ``.empty()`` it once the real charts are on their way."""
    from workbench.ui import fast_chart  # imports nothing but streamlit

    slot = st.empty()
    if not session.get(_DONE):
        session[_DONE] = True
        with slot.container(key=WARM):
            if fast_chart.available():  # the charts use plotly.js's basic bundle: load that one
                fast_chart.warm(f"{WARM}_chart")
            else:
                import plotly.graph_objects as go  # already imported by streamlit's own plotly element

                st.plotly_chart(go.Figure(layout={"height": 10, "template": {}}), key=f"{WARM}_chart", theme=None)
    return slot
