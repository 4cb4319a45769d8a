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
    """A plain table on stdout (numbers right-aligned where ``right`` says so)."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, justify="right" if right and right[i] else "left", no_wrap=True)
    for row in rows:
        table.add_row(*(str(v) for v in row))
    _console(stderr=False, width=width).print(table)


def note(text: str) -> None:
    """A line on stderr (estimates, caps, warnings): never mixed into the data a command prints on stdout."""
    print(text, file=sys.stderr, flush=True)
