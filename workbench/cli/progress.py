"""Progress bars and tables for the commands, drawn with rich on stderr (bars) and stdout (tables).

A bar is a context manager: leaving it, by an error too, ends its line, so whatever is printed next
(``workbench sweep: error: ...``) starts on a line of its own. Off a terminal rich draws the bar once,
when it stops, so logs hold one line, not a carriage-return smear.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import TracebackType
from typing import Any

WIDE = 160  # columns for tables written to a file or a pipe (no wrapping of long knob lists)


def _console(*, stderr: bool, width: int | None = None) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else (width or WIDE), highlight=False)


class ProgressBar:
    """``with ProgressBar("runs") as bar: sweep(..., progress=bar)``: ``bar(done, total)`` moves it."""

    def __init__(self, label: str = "runs", *, enabled: bool = True) -> None:
        self.label, self.enabled = label, enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(BarColumn(), MofNCompleteColumn(), TextColumn(self.label),
                                      TimeElapsedColumn(), console=_console(stderr=True))
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()  # ends the bar's line before any error is printed
            self._progress = None

    def __call__(self, done: int, total: int) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task(self.label, total=total)
        self._progress.update(self._task, completed=done, total=total)


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None,
                right: Sequence[bool] | None = None, width: int | None = None) -> None:
    """A plain table on stdout (numbers right-aligned where ``right`` says so). Cells, headers and the title are
    printed as they are: rich reads none of them as markup (a cell ``[/]`` raised a MarkupError) or emoji code."""
    console = _console(stderr=False, width=width)
    cells = [[str(v) for v in row] for row in rows]
    plain = _plain_table(console, columns, cells, title=title, right=right)
    if plain is not None:
        console.file.write(plain)
        console.file.flush()
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=None if title is None else Text(title), box=box.SIMPLE_HEAD, title_justify="left",
                  pad_edge=False)
    for i, name in enumerate(columns):
        table.add_column(Text(name), justify="right" if right and right[i] else "left", no_wrap=True)
    for row in cells:
        table.add_row(*(Text(c) for c in row))
    console.print(table)


def _plain(text: str) -> bool:
    """Text rich prints one cell a character: printable ASCII with no space at either end (which rich trims in
    some cells). Markup and emoji codes are printed as they are (``print_table`` hands rich ``Text``)."""
    return text.isascii() and text.isprintable() and text[:1] != " " and text[-1:] != " "


def _plain_table(console: Any, columns: Sequence[str], rows: list[list[str]], *, title: str | None,
                 right: Sequence[bool] | None) -> str | None:
    """What ``print_table``'s rich table prints, drawn directly, where that is simple: no terminal (no colours,
    no styles), UTF-8 out, plain cells, and a table that fits the width (rich would shrink its columns). Rich
    lays a table of a dozen columns out in ~10 ms (a tenth of ``workbench reality``'s time on ../shared);
    this takes a tenth of a millisecond. None where rich must draw it; ``tests/test_cli_tables.py`` compares both.
    """
    if (console.is_terminal or console.is_jupyter or console.legacy_windows or console.color_system is not None
            or not console.encoding.startswith("utf") or not rows or not columns):
        return None
    n = len(columns)
    if any(len(row) != n for row in rows) or not all(_plain(c) for c in columns):
        return None
    if not all(_plain(c) for row in rows for c in row) or (title is not None and not _plain(title)):
        return None
    widths = [max(len(columns[i]), *(len(row[i]) for row in rows)) for i in range(n)]
    if not all(widths):
        return None
    total = sum(widths) + 3 * (n - 1) + 2  # an edge each side, a padded divider between columns
    if total > console.width or (title is not None and len(title) > total):
        return None
    flags = [bool(right and right[i]) for i in range(n)]

    def line(row: Sequence[str]) -> str:
        return (" " + "   ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, flags, strict=True))
                + " ")

    blank = " " * total
    out = [title.ljust(total)] if title else []
    out += [blank, line(columns), " " + "\u2500" * (total - 2) + " ", *(line(row) for row in rows), blank]
    return "\n".join(out) + "\n"


def note(text: str) -> None:
    """A line on stderr (estimates, caps, warnings): never mixed into the data a command prints on stdout."""
    print(text, file=sys.stderr, flush=True)
