"""The one error every history reader raises, so callers catch a single type and users read one line.

The message always says where: file, then line (and column for JSON syntax errors) or record, then field.
"""

from __future__ import annotations

MAX_PROBLEM_CHARS = 400  # a message quoting a 5 MB value stays one short line


class HistoryError(ValueError):
    """Bad history input, located: ``chat.jsonl:17: field 'role': unknown role 'robot' (...)``."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        where: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.where = where
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        loc = self.source or "<text>"
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        pieces = [loc]
        if self.where:
            pieces.append(self.where)
        if self.field:
            pieces.append(f"field '{self.field}'")
        problem = " ".join(self.problem.split("\n"))
        if len(problem) > MAX_PROBLEM_CHARS:
            problem = f"{problem[:MAX_PROBLEM_CHARS]}… ({len(problem):,} chars)"
        pieces.append(problem)
        return ": ".join(pieces)

    def __reduce__(self) -> tuple[object, ...]:  # survives a process pool with its location intact
        return (_rebuild, (self.problem, self.source, self.line, self.column, self.where, self.field))

    def located(self, *, source: str | None = None, line: int | None = None, where: str | None = None) -> HistoryError:
        """A copy with missing location filled in (inner helpers know the field, outer ones the line)."""
        return HistoryError(
            self.problem,
            source=self.source or source,
            line=self.line if self.line is not None else line,
            column=self.column,
            where=self.where or where,
            field=self.field,
        )


def _rebuild(problem: str, source: str | None, line: int | None, column: int | None, where: str | None,
             field: str | None) -> HistoryError:
    return HistoryError(problem, source=source, line=line, column=column, where=where, field=field)
