"""Progress bars and tables for the commands, drawn with rich on stderr (bars) and stdout (tables).

A bar is a context manager: leaving it, by an error too, ends its line, so whatever is printed next
(``workbench sweep: error: ...``) starts on a line of its own. Off a terminal rich draws the bar once,
when it stops, so logs hold one line, not a carriage-return smear.
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

WIDE = 160  # columns for tables written to a file or a pipe (no wrapping of long knob lists)


def _console(*, stderr: bool, width: int | None = None) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else (width or WIDE), highlight=False)


@dataclass(frozen=True)
class _PipeConsole:
    """What ``print_table`` reads of rich's Console where rich would find no terminal: the same answers, without
    importing rich (rich.console: 39 of rich's modules and colorsys, of the 55 modules a ``workbench reality`` run
    into a pipe imported on main 7378b7e, by sys.modules before and after)."""

    file: Any
    width: int
    encoding: str
    is_terminal: bool = False
    is_jupyter: bool = False
    legacy_windows: bool = False
    color_system: None = None


def _pipe_console(width: int | None = None) -> _PipeConsole | None:
    """A ``_PipeConsole`` for stdout where rich's Console would surely see no terminal (not a tty, no
    TTY_COMPATIBLE / FORCE_COLOR, no IPython, not Windows: rich.console's ``is_terminal``, ``_is_jupyter`` and
    ``legacy_windows``), so no colour and the width asked for; None where rich must decide."""
    stream = sys.stdout
    if (sys.platform == "win32" or "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ
            or hasattr(builtins, "get_ipython")):
        return None
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is not None and isatty():
            return None
    except ValueError:  # a closed file: rich says no terminal too
        pass
    return _PipeConsole(file=stream, width=width or WIDE,
                        encoding=(getattr(stream, "encoding", "utf-8") or "utf-8").lower())


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
                right: Sequence[bool] | None = None, width: int | None = None, drop: Sequence[str] = (),
                wrap: Sequence[str] = ()) -> None:
    """A plain table on stdout (numbers right-aligned where ``right`` says so). Cells, headers and the title are
    printed as they are: rich reads none of them as markup (a cell ``[/]`` raised a MarkupError) or emoji code.

    Into a pipe or a file the whole table is printed, however wide (``width`` is the least width). On a terminal
    narrower than the table, a table that names ``drop`` and ``wrap`` is fitted: the columns of ``wrap`` may
    wrap (a name folds, a right-aligned cell breaks only at spaces), the columns of ``drop`` are left out in that
    order until the rest fits, a line says which, and no other cell is shrunk: a number is never cut to "3…".
    Any other table too wide for the terminal folds its headers at their spaces, and where even that does not fit
    prints each row as a block of "column  value" lines.
    """
    cells = [[str(v) for v in row] for row in rows]
    flags = [bool(right and right[i]) for i in range(len(columns))]
    console: Any = _pipe_console(width) or _console(stderr=False, width=width)
    if not console.is_terminal and not console.is_jupyter:
        natural = _natural_width(columns, cells)
        if natural > console.width:  # a pipe has no width to fit: a long line beats a cut number
            console = _pipe_console(natural) or _console(stderr=False, width=natural)
    shown, dropped = list(range(len(columns))), list[str]()
    wrap_headers = False
    if (drop or wrap) and console.is_terminal:
        shown, dropped = _fit(columns, cells, flags, console.width, drop, wrap)
    elif console.is_terminal and cells and _natural_width(columns, cells) > console.width:
        if _header_width(columns, cells) > console.width:
            _print_records(console, columns, cells, title=title)  # no column is cut to "0…" nor left out unsaid
            return
        wrap_headers = True  # only the headers give way, at their spaces
    plain = _plain_table(console, [columns[i] for i in shown], [[row[i] for i in shown] for row in cells],
                         title=title, right=[flags[i] for i in shown])
    if plain is not None:
        console.file.write(plain)
        console.file.flush()
        return
    if isinstance(console, _PipeConsole):  # rich draws it after all
        console = _console(stderr=False, width=console.width)
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=None if title is None else Text(title), box=box.SIMPLE_HEAD, title_justify="left",
                  pad_edge=False)
    for i in shown:
        justify: Literal["right", "left"] = "right" if flags[i] else "left"
        if wrap_headers:  # each column as wide as its widest cell or header word: a header folds at its spaces
            table.add_column(Text(columns[i]), justify=justify, no_wrap=False, overflow="fold",
                             min_width=_header_least(columns[i], cells, i))
        elif drop or wrap:  # fitted: only a wrapping column gives way, down to its least width; the others never
            table.add_column(Text(columns[i]), justify=justify, no_wrap=columns[i] not in wrap,
                             overflow="fold", min_width=_least_width(columns[i], cells, i, flags[i], wrap))
        else:
            table.add_column(Text(columns[i]), justify=justify, no_wrap=True)
    for row in cells:
        table.add_row(*(Text(row[i]) for i in shown))
    console.print(table)
    if dropped:
        console.print(Text(f"left out to fit {console.width} columns: {', '.join(dropped)} (a wider terminal or a "
                           "pipe shows every column)"))
        console.print()


def _print_records(console: Any, columns: Sequence[str], cells: list[list[str]], *, title: str | None) -> None:
    """A table wider than the terminal, one row per block of "column  value" lines: every value whole (a long one
    folds under itself), every column named. Rich would shrink every column to "0…" (``workbench calibrate``)."""
    from rich.table import Table
    from rich.text import Text

    if title is not None:
        console.print(Text(title))
    for n, row in enumerate(cells, 1):
        block = Table.grid(padding=(0, 2), pad_edge=True)
        block.add_column(no_wrap=True, style="bold")
        block.add_column(overflow="fold")
        for name, value in zip(columns, row, strict=False):
            block.add_row(Text(name), Text(value))
        console.print()
        console.print(Text(f"row {n} of {len(cells)}"))
        console.print(block)
    console.print()
    console.print(Text(f"(one block a row: the table is wider than {console.width} columns; a pipe prints it whole)"))
    console.print()


FOLD_WIDTH = 16  # the narrowest a folding name column gets: a path stays readable a few lines long


def _natural_width(columns: Sequence[str], cells: list[list[str]]) -> int:
    """The width rich draws the table at when nothing needs to give way (an edge each side, 3 between columns)."""
    def cell_len(text: str) -> int:  # printable ASCII is a cell a character: rich.cells not imported for it
        if text.isascii() and text.isprintable():
            return len(text)
        from rich.cells import cell_len as rich_len

        return rich_len(text)

    widths = [max([cell_len(columns[i]), *(cell_len(row[i]) for row in cells if i < len(row))])
              for i in range(len(columns))]
    return sum(widths) + 3 * max(0, len(columns) - 1) + 2


def _header_least(name: str, cells: list[list[str]], i: int) -> int:
    """A column's width when only its header may wrap: its widest cell or the longest word of its header."""
    from rich.cells import cell_len

    return max([*(cell_len(word) for word in name.split()), *(cell_len(row[i]) for row in cells if i < len(row))])


def _header_width(columns: Sequence[str], cells: list[list[str]]) -> int:
    """The table's width with every header folded at its spaces and no cell cut (see ``_natural_width``)."""
    return sum(_header_least(c, cells, i) for i, c in enumerate(columns)) + 3 * max(0, len(columns) - 1) + 2


def _least_width(name: str, cells: list[list[str]], i: int, right: bool, wrap: Sequence[str]) -> int:
    """How narrow column ``i`` may get: its widest cell, unless it wraps (a number column: its longest word)."""
    from rich.cells import cell_len

    values = [name, *(row[i] for row in cells)]
    widest = max(cell_len(v) for v in values)
    if name not in wrap:
        return widest
    if right:  # numbers with words ("74 (38 lost, 26 restored)") break at spaces, never inside a number
        return max(cell_len(word) for v in values for word in v.split() or [""])
    return min(widest, max(FOLD_WIDTH, cell_len(name)))


def _fit(columns: Sequence[str], cells: list[list[str]], right: list[bool], width: int, drop: Sequence[str],
         wrap: Sequence[str]) -> tuple[list[int], list[str]]:
    """(indices of the columns shown, names left out): ``drop``'s columns go, in order, until the least widths fit."""
    shown = list(range(len(columns)))
    least = [_least_width(columns[i], cells, i, right[i], wrap) for i in shown]
    if _natural_width(columns, cells) <= width:
        return shown, []
    dropped: list[str] = []
    for name in drop:
        if sum(least[i] for i in shown) + 3 * (len(shown) - 1) + 2 <= width:
            break
        if name in columns and columns.index(name) in shown:
            shown.remove(columns.index(name))
            dropped.append(name)
    return shown, dropped


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
    if total > console.width:
        return None
    heading = [] if not title else _title_lines(title, total)
    if heading is None:
        return None
    flags = [bool(right and right[i]) for i in range(n)]

    def line(row: Sequence[str]) -> str:
        return (" " + "   ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, flags, strict=True))
                + " ")

    blank = " " * total
    out = [*heading, blank, line(columns), " " + "\u2500" * (total - 2) + " ", *(line(row) for row in rows), blank]
    return "\n".join(out) + "\n"


def _title_lines(title: str, width: int) -> list[str] | None:
    """A plain title as rich sets it above a table ``width`` wide: as many words a line as fit, broken at its
    spaces, each line padded to the width (``workbench reality``'s bill table has a title longer than the table).
    None where rich must set it: a run of spaces, or a word longer than the width (rich folds it)."""
    words = title.split(" ")
    if any(not word or len(word) > width for word in words):
        return None
    lines, line = [], words[0]
    for word in words[1:]:
        if len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return [text.ljust(width) for text in lines]


def print_text(text: str) -> None:
    """A line of prose on stdout: wrapped at words to a terminal's width, as it is into a pipe."""
    console: Any = _pipe_console() or _console(stderr=False)
    if not console.is_terminal:
        print(text)
        return
    from rich.text import Text

    console.print(Text(text))


def note(text: str) -> None:
    """A line on stderr (estimates, caps, warnings): never mixed into the data a command prints on stdout."""
    print(text, file=sys.stderr, flush=True)
