"""The commands' tables: drawn directly where that is plain text, else by rich; both must print the same."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

from workbench.cli import progress


def _printed(monkeypatch: pytest.MonkeyPatch, *, direct: bool, **table: Any) -> str:
    if not direct:
        monkeypatch.setattr(progress, "_plain_table", lambda *a, **k: None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        progress.print_table(**table)
    monkeypatch.undo()
    return out.getvalue()


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


def test_a_reality_table_is_drawn_directly_exactly_as_rich_draws_it(monkeypatch: pytest.MonkeyPatch) -> None:
    columns = ["file", "agent", "window", "real", "trigger", "predicted", "delta"]
    rows = [["claude_code__fc_99c919b212_0.jsonl", "claude_code", "200,000", 112, "auto", 113, "+1"],
            ["codex__1.jsonl", "codex", "128,000", 240, "manual", "none", "-"]]
    table = dict(columns=columns, rows=rows, title="Logged compactions vs the replay", width=200,
                 right=[False, False, True, True, False, True, True])
    console = progress._console(stderr=False, width=200)
    cells = [[str(v) for v in row] for row in rows]
    assert progress._plain_table(console, columns, cells, title=table["title"], right=table["right"]) is not None
    direct = _printed(monkeypatch, direct=True, **table)
    assert direct == _printed(monkeypatch, direct=False, **table)
    lines = direct.splitlines()
    assert lines[0].startswith("Logged compactions vs the replay") and lines[3].strip().startswith("\u2500")
    assert lines[4].split() == ["claude_code__fc_99c919b212_0.jsonl", "claude_code", "200,000", "112", "auto", "113",
                                "+1"]


@pytest.mark.parametrize("width", [38, 43, 60, 200])
def test_a_title_longer_than_its_table_wraps_as_rich_wraps_it(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """The bill table's title is longer than the table: drawn directly, it breaks at the same spaces rich's does."""
    title = ("The bill as the replay models it (with the log's billed usage) beside the log's; bill units = "
             "uncached x 1 + cache writes x 1.25 + cache reads x 0.1 + output x 5 (Claude) or x 8 (Codex)")
    table = dict(columns=["file", "calls", "bill units"], rows=[["a.jsonl", "12", "1,234"], ["codex__bb.jsonl", "3", "5"]],
                 title=title, right=[False, True, True], width=width)
    console = progress._console(stderr=False, width=width)
    assert progress._plain_table(console, table["columns"], table["rows"], title=title, right=table["right"])
    direct = _printed(monkeypatch, direct=True, **table)
    assert direct == _printed(monkeypatch, direct=False, **table)
    assert len(direct.splitlines()) > 7


@pytest.mark.slow
def test_any_table_prints_the_same_drawn_directly_or_by_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random tables, plain or not (markup, emoji codes, wide characters, too wide for the width, no rows)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    plain = st.text(alphabet="abZ09-+,.", min_size=1, max_size=4) | st.just("a b")
    piece = st.sampled_from(list("ab Z09-+,.") + ["[b]", ":x:", "é", "表", "\t"])
    # mostly plain, so the direct path is taken often; the rest goes to rich
    cell = plain | plain | plain | plain | st.lists(piece, max_size=8).map("".join)
    width = st.sampled_from([12, 30, 60, 200])  # the least width: a pipe gets the whole table however wide
    # titles longer than the table: words broken at single spaces, or runs of spaces and long words (rich's to set)
    title = st.lists(plain | st.text(alphabet="abZ09-+,.", min_size=5, max_size=30) | st.just(""), min_size=2,
                     max_size=14).map(" ".join)

    @settings(max_examples=300, deadline=None)
    @given(st.integers(1, 5).flatmap(lambda n: st.tuples(
        st.lists(cell, min_size=n, max_size=n), st.lists(st.lists(cell, min_size=n, max_size=n), max_size=4),
        st.lists(st.booleans(), min_size=n, max_size=n), st.none() | cell | title, width)))
    def check(case: tuple[list[str], list[list[str]], list[bool], str | None, int]) -> None:
        columns, rows, right, title, width = case
        table = dict(columns=columns, rows=rows, title=title, right=right, width=width)
        assert _printed(monkeypatch, direct=True, **table) == _printed(monkeypatch, direct=False, **table)

    check()


@pytest.mark.parametrize("direct", [True, False])
def test_cells_that_look_like_rich_markup_or_emoji_codes_are_printed_as_they_are(
        monkeypatch: pytest.MonkeyPatch, direct: bool) -> None:
    """A cell ``[/]`` made rich raise a MarkupError; ``[bold]x[/bold]`` lost its tags, ``:smile:`` became 😄."""
    cells = ["[/]", "[bold]x[/bold]", ":smile:", "a[b]c"]
    out = _printed(monkeypatch, direct=direct, columns=["[red]name[/red]", "v"],
                   rows=[[c, i] for i, c in enumerate(cells)], title="[/] title", width=80)
    lines = out.splitlines()
    assert lines[0].strip() == "[/] title" and lines[2].split() == ["[red]name[/red]", "v"]
    assert [line.split()[0] for line in lines[4:8]] == cells
    assert "\U0001f604" not in out


@pytest.mark.parametrize("width", [None, 38, 200])
def test_the_pipe_console_answers_what_rich_answers(monkeypatch: pytest.MonkeyPatch, width: int | None) -> None:
    """Into a pipe ``print_table`` skips rich's Console (and its import): its stand-in must read the same."""
    with contextlib.redirect_stdout(io.StringIO()):
        pipe, rich = progress._pipe_console(width), progress._console(stderr=False, width=width)
        assert pipe is not None
        for name in ("file", "width", "encoding", "is_terminal", "is_jupyter", "legacy_windows", "color_system"):
            assert getattr(pipe, name) == getattr(rich, name), name
        monkeypatch.setenv("FORCE_COLOR", "1")  # rich then sees a terminal: it decides, not the stand-in
        assert progress._pipe_console(width) is None
