"""Text from a transcript, a log or an upload, shown as text: nothing fetched, nothing interpreted.

Streamlit renders Markdown in ``st.markdown``, ``st.caption``, the alerts (``st.info`` / ``warning`` / ``error`` /
``success``) and most labels and tooltips (metric, expander, tab, radio options, ``help=``). There
``![t](http://host/t.png)`` makes the browser fetch, ``[x](url)``, a bare URL or an e-mail address becomes a link,
``:smile:`` and ``:material/home:`` become icons, ``$x$`` math and ``:red[x]`` colour. Backslash escapes stop the
syntax but not GFM's bare-URL links or the emoji plugin, which run on the text after escapes are read (checked in
Chromium); a code span stops them all, since inside one nothing is parsed and remark's plugins skip code. So a
value read from a history (its id, an agent's version or model, a file or tool name, an error quoting the file)
goes into a Markdown element only through :func:`literal`, and long text (a summary, a briefing) through
``st.text`` / ``st.code``. Plotly renders a subset of HTML in titles and hover text (``<a href>``, ``<b>``,
``<br>``, …): :func:`hover` escapes it. No streamlit import: ``workbench.plots`` and ``ui.state`` use it too.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_TICKS = re.compile(r"`+")
# Streamlit rewrites ":material/" to ":material_" in a whole Markdown source, code spans included
# (StreamlitMarkdown in streamlit 1.67's frontend): a word joiner (U+2060, invisible) keeps the text as written.
_ICON = ":material/"
_ICON_KEPT = ":\u2060material/"


def literal(text: object) -> str:
    """``text`` as a Markdown code span: shown character for character (whitespace runs as one space), never
    parsed. Put it inside any Markdown string: ``st.caption(f"Loaded {literal(name)}")``."""
    s = " ".join(str(text).split()).replace(_ICON, _ICON_KEPT)
    if not s:
        return ""
    fence = "`" * (max((len(run) for run in _TICKS.findall(s)), default=0) + 1)  # longer than any run inside
    pad = " " if s[0] == "`" or s[-1] == "`" else ""  # CommonMark strips one space each side again
    return f"{fence}{pad}{s}{pad}{fence}"


def literals(values: Iterable[object], sep: str = ", ") -> str:
    """Several values, each its own code span (file names in a list, paths)."""
    return sep.join(literal(v) for v in values)


def hover(text: object) -> str:
    """``text`` for a plotly title, label or hover text: its tags and entities shown, not rendered."""
    return html.escape(str(text), quote=True)
