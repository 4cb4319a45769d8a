"""Untrusted text shown as text (``workbench.display.untrusted``): nothing a Markdown or plotly renderer would fetch,
link or style. The renderers themselves are checked in Chromium (tests/test_browser_untrusted.py); here the helper's
output is parsed by a CommonMark parser, and every Markdown element the app draws on a hostile log is read."""

from __future__ import annotations

import html

import pytest

from workbench.display.untrusted import hover, literal, literals

HOST = "http://127.0.0.1:9"
PAYLOADS = [
    f"![t]({HOST}/t.png)",
    f"<img src={HOST}/i.png>",
    f"<img src=\"{HOST}/i.png\" onerror=alert(1)>",
    f"[click]({HOST}/l) and [ref][r]\n\n[r]: {HOST}/ref",
    f"<{HOST}/autolink> and {HOST}/bare and www.example.com and mail@example.com",
    ":smile: :material/home: :red[colour] $x^2$ **bold** _it_ ~~s~~ <b>b</b> &amp; &lt;",
    "# heading\n\n- list\n> quote\n\n```\nfence\n```",
    "`one` ``two`` ```three``` and a lone ` tick",
    "`starts and ends with a tick`",
    "  spaced   out\ttabs\nand\n\nblank lines  ",
    "| a | b |\n|---|---|\n| 1 | 2 |",
]


def _inline(markdown: str) -> list:
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").parseInline(markdown)[0].children


@pytest.mark.parametrize("text", PAYLOADS)
def test_literal_is_one_code_span_holding_the_text_as_written(text):
    tokens = _inline(literal(text))
    assert [t.type for t in tokens] == ["code_inline"]
    assert tokens[0].content.replace("\u2060", "") == " ".join(text.split())


@pytest.mark.parametrize("text", PAYLOADS)
def test_inside_a_sentence_nothing_renders_as_an_image_link_or_tag(text):
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").render(f"Loaded **{literal(text)}** · {literal(text)}.")
    assert "<img" not in rendered and "<a " not in rendered and "<b>" not in rendered
    assert rendered.count("<code>") == 2 and "<h1>" not in rendered and "<table" not in rendered


def test_literal_keeps_streamlits_icon_syntax_visible():
    """Streamlit rewrites ':material/' everywhere, code spans included: an invisible word joiner stops it."""
    assert ":material/" not in literal(":material/home:")
    assert literal(":material/home:").replace("\u2060", "") == "`:material/home:`"


def test_literal_of_nothing_is_nothing_and_values_join():
    assert literal("") == "" and literal("  \n ") == ""
    assert literals(["a.jsonl", "![t](x)"]) == "`a.jsonl`, `![t](x)`"


@pytest.mark.parametrize("text", [f"<img src={HOST}/i.png>", f"<a href='{HOST}/l'>x</a>", "<b>b</b><br>&lt;&amp;"])
def test_hover_text_shows_tags_and_entities(text):
    escaped = hover(text)
    assert "<" not in escaped and ">" not in escaped and "'" not in escaped
    assert html.unescape(escaped) == text


def test_the_context_charts_hover_and_title_carry_no_tag_from_the_history():
    """Plotly renders <a href>, <b>, <br>… in hover text and titles: a message's text and a history's id are
    escaped, so ``<img …>`` shows as text (the browser test hovers it in Chromium)."""
    from workbench.analysis.inspector import message_previews
    from workbench.history.model import History, Message, text_part
    from workbench.knobs import Knobs
    from workbench.plots import context_figure
    from workbench.replay import simulate

    evil = f"<img src={HOST}/i.png> <a href={HOST}/l>x</a> &lt;b&gt;"
    messages = tuple(Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant",
                             parts=(text_part(f"{evil} {'word ' * 400}"),)) for i in range(20))
    history = History(id=evil, messages=messages)
    run = simulate(history, Knobs(context_window_tokens=8_000))
    fig = context_figure(run, previews=message_previews(history))
    hovered = [str(v) for trace in fig.data if trace.customdata is not None for row in trace.customdata for v in row]
    assert any("&lt;img src=" in v for v in hovered)
    assert not any("<img" in v or "<a " in v for v in hovered)
    title = fig.layout.title.text
    assert "<img" not in title and html.unescape(title).endswith(evil)


# -- every Markdown element the app draws on a hostile log ------------------------------------------------------

TABS = ("Charts", "Compressions", "A/B compare", "Live runs", "Sweep", "Reality", "YAML & CLI")
FRAGMENTS = ("![t]", "<img", "127.0.0.1:9", "www.example.com", "mail@example.com", ":smile:", "material")
PLAIN = ("Code", "Text", "Html", "Dataframe", "Arrow", "PlotlyChart", "BidiComponent", "UnknownElement")


def without_code_spans(markdown: str) -> str:
    """The Markdown source with its code spans (what renders literally) cut out, as CommonMark pairs them."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] != "`":
            out.append(markdown[i])
            i += 1
            continue
        run = len(markdown[i:]) - len(markdown[i:].lstrip("`"))
        fence, j = "`" * run, i + run
        while True:
            k = markdown.find(fence, j)
            if k < 0:  # no closing run: the backticks are text
                out.append(fence)
                i += run
                break
            if markdown[k + run:k + run + 1] != "`" and (k == 0 or markdown[k - 1] != "`"):
                i = k + run
                break
            j = k + 1
    return "".join(out)


def markdown_sources(at) -> list[tuple[str, str]]:
    """(element kind, Markdown source) of every body, label, tooltip and radio option on the page."""
    out: list[tuple[str, str]] = []

    def walk(node) -> None:
        kind = type(node).__name__
        proto = getattr(node, "proto", None)
        if proto is not None and kind not in PLAIN and hasattr(proto, "ListFields"):
            for field, value in proto.ListFields():
                if field.name in ("body", "label", "help") and isinstance(value, str):
                    out.append((f"{kind}.{field.name}", value))
                elif field.name == "options" and kind == "Radio":
                    out.extend((f"{kind}.option", str(v)) for v in value)
        children = getattr(node, "children", {})
        for child in children.values() if isinstance(children, dict) else children:
            walk(child)

    walk(at._tree)
    return out


@pytest.mark.parametrize("kind", ["claude_code", "upload"])
def test_no_tab_renders_a_hostile_logs_text_as_markdown_or_html(kind):
    """Every tab on a Claude Code log (and a canonical upload of it) whose id, version, model, user text, tool and
    file names and summary carry images, tags, links, emoji and icons: each shows up only inside a code span (or
    in st.code / st.text / a table), and the charts' titles and hover texts hold it escaped."""
    import json

    from app_charts import charts
    from hostile_log import hostile_claude_log, hostile_name, hostile_upload
    from test_app import app, no_errors

    from workbench.ui import state as ui_state

    name, data = ((f"{hostile_name()}.jsonl", hostile_claude_log(HOST)) if kind == "claude_code"
                  else ("session.jsonl", hostile_upload(HOST)))
    seen = []
    for tab in TABS:
        at = app(tab=tab, **{ui_state.PENDING_HISTORY: (name, data)})
        no_errors(at)
        for where, source in markdown_sources(at):
            rendered = without_code_spans(source)
            assert not [f for f in FRAGMENTS if f in rendered], (tab, where, source)
            seen.append(source)
        for _, spec in charts(at):
            strings = json.dumps(json.loads(spec), ensure_ascii=False)
            assert "<img" not in strings and "<a " not in strings, tab
    shown = " ".join(seen)
    assert "![t](" in shown and "<img src=" in shown  # the payload is on the page, as text
